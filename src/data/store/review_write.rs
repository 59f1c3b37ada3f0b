//! Writing a person's review decision: the `reviews` row, the accepted atoms marked as
//! reviewed, the task's new status — inside the writer thread's batch for a run this
//! process executes, or in a transaction of its own, under the run's lease, for a run
//! nobody executes.

use std::sync::Arc;

use rusqlite::{params, Connection, Transaction, TransactionBehavior};

use super::lease::Lease;
use super::log_insert::insert_events;
use super::ops::ReviewWrite;
use super::StoreError;
use crate::model::event::Envelope;

/// Applies the rows of `w` (not its events: the caller inserts those with the batch's).
pub(super) fn apply_rows(tx: &Transaction<'_>, w: &ReviewWrite) -> Result<(), StoreError> {
    let env = &w.event;
    let task = env.task_id.as_deref().unwrap_or_default();
    let invocation = env.invocation_id.as_deref().unwrap_or_default();
    tx.execute(
        "INSERT INTO reviews (run_id, task_id, invocation_id, decision, reviewer, note, decided_at, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            &*env.run_id,
            task,
            invocation,
            if w.accepted { "accepted" } else { "rejected" },
            w.reviewer,
            w.note,
            w.decided_at,
            env.seq as i64
        ],
    )?;
    let by = super::atom_write::ReviewedBy {
        reviewer: &w.reviewer,
        at: &w.decided_at,
    };
    for a in &w.atoms {
        super::atom_write::store_atom(tx, &env.run_id, a, &w.decided_at, Some(&by))?;
    }
    if let Some((status, atoms)) = w.task_status {
        tx.execute(
            "UPDATE tasks SET status = ?3, atoms = ?4, updated_at = ?5 WHERE run_id = ?1 AND task_id = ?2",
            params![&*env.run_id, task, status, atoms, w.decided_at],
        )?;
    }
    if let Some((_, status)) = &w.run_end {
        tx.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE run_id = ?1",
            params![&*env.run_id, status, w.decided_at],
        )?;
    }
    Ok(())
}

/// The events of `w` in log order.
pub(super) fn events(w: &ReviewWrite) -> impl Iterator<Item = &Arc<Envelope>> {
    std::iter::once(&w.event).chain(w.run_end.as_ref().map(|(e, _)| e))
}

/// Writes `w` in one transaction of its own on `conn`, for a process that holds
/// `lease` on the run (checked inside the transaction: a lease lost meanwhile writes
/// nothing).
pub fn commit(conn: &mut Connection, lease: &Lease, w: &ReviewWrite) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    super::lease::still_held(&tx, lease)?;
    apply_rows(&tx, w)?;
    let evs: Vec<Arc<Envelope>> = events(w).cloned().collect();
    insert_events(&tx, &evs, &mut Vec::new(), &mut Default::default())?;
    tx.commit()?;
    Ok(())
}
