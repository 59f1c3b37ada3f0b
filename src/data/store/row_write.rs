//! The rows of the writer's larger operations (a new run, a task added, an invocation, an
//! import), written into the batch's transaction; the writer decides when it commits.

use std::collections::HashSet;

use rusqlite::{params, CachedStatement, Transaction};

use super::log_insert::held;
use super::ops::{AssetRow, AtomRow, InvocationRecord, PaperRow, RunRow};
use super::StoreError;
use crate::base::clock::now_rfc3339;

/// A new run: its row, its plan's text beside it and a pending row per task.
pub(super) fn create_run(tx: &Transaction<'_>, run: &RunRow) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO runs (run_id, plan_id, plan_source, plan_json, provider, config_json, status, created_at, task_count) VALUES (?1, ?2, ?3, '', ?4, ?5, 'running', ?6, ?7)",
        params![run.run_id, run.plan_id, run.plan_source, run.provider, run.config_json, run.created_at, run.task_count as i64],
    )?;
    // The plan's text beside the row, which then stays small to update; written in
    // place (see `super::in_place`: 52 MB for a plan of 100,000 tasks).
    tx.execute(
        "INSERT INTO run_plans (run_id, plan_json) VALUES (?1, zeroblob(?2))",
        params![run.run_id, run.plan_json.len() as i64],
    )?;
    super::in_place::write(
        tx,
        "run_plans",
        "plan_json",
        tx.last_insert_rowid(),
        run.plan_json.as_bytes(),
    )?;
    let mut st = tx.prepare_cached(
        "INSERT INTO tasks (run_id, task_id, agent, status, updated_at) VALUES (?1, ?2, ?3, 'pending', ?4)",
    )?;
    for (task, agent) in &run.tasks {
        st.execute(params![run.run_id, task, agent, run.created_at])?;
    }
    Ok(())
}

/// A task added to a running run (pending, unless it is there already), and the run's
/// task count brought up to date.
pub(super) fn add_task(
    tx: &Transaction<'_>,
    run_id: &str,
    task_id: &str,
    agent: &str,
) -> Result<(), StoreError> {
    let now = now_rfc3339();
    tx.prepare_cached(
        "INSERT OR IGNORE INTO tasks (run_id, task_id, agent, status, updated_at) VALUES (?1, ?2, ?3, 'pending', ?4)",
    )?
    .execute(params![run_id, task_id, agent, now])?;
    tx.prepare_cached(
        "UPDATE runs SET task_count = (SELECT COUNT(*) FROM tasks WHERE run_id = ?1) WHERE run_id = ?1",
    )?
    .execute(params![run_id])?;
    Ok(())
}

/// One invocation's row, with its system prompt stored first unless `prompts` (the
/// prompts already stored) has it; `stmt` holds the insert for the rest of the batch.
pub(super) fn invocation<'t>(
    tx: &'t Transaction<'_>,
    r: &InvocationRecord,
    prompts: &mut HashSet<String>,
    stmt: &mut Option<CachedStatement<'t>>,
) -> Result<(), StoreError> {
    if !prompts.contains(&r.system_prompt.0) {
        tx.prepare_cached("INSERT OR IGNORE INTO prompts (prompt_hash, text) VALUES (?1, ?2)")?
            .execute(params![r.system_prompt.0, &*r.system_prompt.1])?;
        prompts.insert(r.system_prompt.0.clone());
    }
    held(stmt, tx,
        "INSERT INTO invocations (invocation_id, run_id, task_id, agent, attempt, status, started_at, execution_time_ms, prompt_tokens, output_tokens, error_codes, request_json, response_json, provider_prompt_tokens, provider_output_tokens, provider_cached_tokens, cost_usd) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?
    .execute(params![
        &*r.invocation_id,
        &*r.run_id,
        &*r.task_id,
        &*r.agent,
        r.attempt,
        r.status,
        r.started_at,
        r.execution_time_ms as i64,
        r.prompt_tokens as i64,
        r.output_tokens as i64,
        if r.error_codes.is_empty() { None } else { Some(&r.error_codes) },
        r.request_json,
        r.response_json,
        r.provider_usage
            .map(|u| i64::try_from(u.prompt_tokens).unwrap_or(i64::MAX)),
        r.provider_usage
            .map(|u| i64::try_from(u.completion_tokens).unwrap_or(i64::MAX)),
        r.provider_usage
            .map(|u| i64::try_from(u.cached_prompt_tokens).unwrap_or(i64::MAX)),
        r.cost_usd.filter(|c| c.is_finite())
    ])?;
    Ok(())
}

/// A task's accepted atoms, stored at one time.
pub(super) fn atoms(
    tx: &Transaction<'_>,
    run_id: &str,
    atoms: &[AtomRow],
) -> Result<(), StoreError> {
    let now = now_rfc3339();
    for a in atoms {
        super::atom_write::store_atom(tx, run_id, a, &now, None)?;
    }
    Ok(())
}

/// Imported papers and assets, each kept as it is when already there.
pub(super) fn import(
    tx: &Transaction<'_>,
    papers: &[PaperRow],
    assets: &[AssetRow],
) -> Result<(), StoreError> {
    let now = now_rfc3339();
    for p in papers {
        tx.execute(
            "INSERT OR IGNORE INTO papers (paper_id, title, authors, year, domain, abstract, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![p.paper_id, p.title, p.authors, p.year, p.domain, p.abstract_text, now],
        )?;
    }
    for (id, ty, domain, paper, content) in assets {
        tx.execute(
            "INSERT INTO knowledge_atoms (atom_id, atom_type, domain, paper_id, content, grade, score, created_at) SELECT ?1, ?2, ?3, ?4, ?5, 'A', 1.0, ?6 WHERE NOT EXISTS (SELECT 1 FROM knowledge_atoms WHERE atom_id = ?1)",
            params![id, ty, domain, paper, content, now],
        )?;
    }
    Ok(())
}
