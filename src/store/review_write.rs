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
use crate::event::Envelope;

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
    for a in &w.atoms {
        tx.prepare_cached(
            "INSERT INTO knowledge_atoms (atom_id, run_id, task_id, invocation_id, agent, atom_type, category, data_status, paper_id, content, confidence, grade, score, provenance, delta_audit, metadata, created_at, reviewed_by, reviewed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?17)",
        )?
        .execute(params![
            a.atom_id,
            &*env.run_id,
            a.task_id,
            a.invocation_id,
            a.agent,
            a.atom_type,
            a.category,
            a.data_status,
            a.paper_id,
            a.content,
            a.confidence,
            a.grade,
            a.score,
            a.provenance,
            a.delta_audit,
            a.metadata,
            w.decided_at,
            w.reviewer,
        ])?;
        tx.prepare_cached(
            "INSERT INTO quality_records (run_id, task_id, invocation_id, atom_id, grade, score, issues, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            &*env.run_id,
            a.task_id,
            a.invocation_id,
            a.atom_id,
            a.grade,
            a.score,
            a.issues,
            w.decided_at
        ])?;
        for target in &a.relations {
            tx.prepare_cached(
                "INSERT INTO relations (source_atom_id, target_atom_id, relation_type, run_id, invocation_id, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                a.atom_id,
                target,
                if a.contradiction { "contradicts" } else { "builds_on" },
                &*env.run_id,
                a.invocation_id,
                format!("accepted on review by {}", w.reviewer),
                w.decided_at
            ])?;
        }
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
