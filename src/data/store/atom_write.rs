//! Storing one accepted atom: its `knowledge_atoms` row, its quality record and its
//! relations to the assets it builds on or contradicts. The quality gate's acceptance
//! (the writer thread) and a person's (a review) store atoms the same way.

use rusqlite::{params, Transaction};

use super::ops::AtomRow;
use super::StoreError;

/// Who accepted an atom on review, and when (RFC 3339); `None` for the quality gate.
pub(super) struct ReviewedBy<'a> {
    /// The reviewer.
    pub reviewer: &'a str,
    /// When.
    pub at: &'a str,
}

/// Stores atom `a` of run `run_id` at time `now` (RFC 3339).
pub(super) fn store_atom(
    tx: &Transaction<'_>,
    run_id: &str,
    a: &AtomRow,
    now: &str,
    review: Option<&ReviewedBy<'_>>,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO knowledge_atoms (atom_id, run_id, task_id, invocation_id, agent, atom_type, category, data_status, paper_id, content, confidence, grade, score, provenance, delta_audit, metadata, created_at, reviewed_by, reviewed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
    )?
    .execute(params![
        a.atom_id,
        run_id,
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
        now,
        review.map(|r| r.reviewer),
        review.map(|r| r.at),
    ])?;
    tx.prepare_cached(
        "INSERT INTO quality_records (run_id, task_id, invocation_id, atom_id, grade, score, issues, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        run_id,
        a.task_id,
        a.invocation_id,
        a.atom_id,
        a.grade,
        a.score,
        a.issues,
        now
    ])?;
    let note = review.map(|r| format!("accepted on review by {}", r.reviewer));
    for target in &a.relations {
        tx.prepare_cached(
            "INSERT INTO relations (source_atom_id, target_atom_id, relation_type, run_id, invocation_id, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            a.atom_id,
            target,
            if a.contradiction { "contradicts" } else { "builds_on" },
            run_id,
            a.invocation_id,
            note,
            now
        ])?;
    }
    Ok(())
}
