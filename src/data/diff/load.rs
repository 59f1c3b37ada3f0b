//! Reading a run from the read-only store into a [`RunSnapshot`] for [`super::compare`].
//!
//! Only the events the comparison needs are decoded (never the streamed chunks, the
//! bulk of a log); an event that does not decode is skipped with a warning in the log.

use std::collections::HashMap;

use rusqlite::params;

use super::{AtomSnapshot, CallSnapshot, RunSnapshot, TaskSnapshot};
use crate::data::store::schema::{run_events_sql, RUN_BASE_SQL};
use crate::data::store::{Store, StoreError};
use crate::model::event::EngineEvent;

/// Event kinds the comparison reads.
const KINDS: &str = "'task_blocked', 'retry_scheduled', 'context_planned', 'reference_failed', \
                     'atoms_graded', 'invocation_started', 'task_finished'";

/// Loads run `id` (a full id, a unique prefix or `latest`) from `store`.
pub fn load(store: &Store, id: &str) -> Result<RunSnapshot, StoreError> {
    let run = store.run(id)?;
    let run_id = run.run_id.clone();
    let mut tasks = tasks_in_plan_order(store, &run_id)?;
    let index: HashMap<String, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.clone(), i))
        .collect();
    let call_of = add_calls(store, &run_id, &mut tasks, &index)?;
    add_events(store, &run_id, &mut tasks, &index, &call_of)?;
    add_accepted(store, &run_id, &mut tasks, &index)?;
    Ok(RunSnapshot {
        wall_ms: wall_ms(store, &run_id)?,
        run_id,
        plan_id: run.plan_id,
        status: run.status,
        provider: run.provider,
        created_at: run.created_at,
        tasks,
    })
}

/// The run's tasks as their rows say, in the plan's order (tasks the plan does not
/// list last, by id).
fn tasks_in_plan_order(store: &Store, run_id: &str) -> Result<Vec<TaskSnapshot>, StoreError> {
    let (_, plan_json, _) = store.run_plan(run_id)?;
    let order = crate::model::plan::task_order(&plan_json);
    let mut tasks: Vec<TaskSnapshot> = store
        .tasks(run_id)?
        .into_iter()
        .map(|t| TaskSnapshot {
            task_id: t.task_id,
            agent: t.agent,
            status: t.status,
            attempts: t.attempts,
            atoms: t.atoms,
            error_code: t.error_code,
            ..TaskSnapshot::default()
        })
        .collect();
    tasks.sort_by_key(|t| {
        (
            order.get(t.task_id.as_str()).copied().unwrap_or(usize::MAX),
            t.task_id.clone(),
        )
    });
    Ok(tasks)
}

/// Adds each task's calls, in the order they ended (rows are written when a call ends);
/// returns where each invocation's call is: `(task index, call index)`.
fn add_calls(
    store: &Store,
    run_id: &str,
    tasks: &mut [TaskSnapshot],
    index: &HashMap<String, usize>,
) -> Result<HashMap<String, (usize, usize)>, StoreError> {
    let mut call_of: HashMap<String, (usize, usize)> = HashMap::new();
    for inv in store.invocations(run_id)? {
        let Some(&ti) = index.get(&inv.task_id) else {
            continue;
        };
        let calls = &mut tasks[ti].calls;
        call_of.insert(inv.invocation_id.clone(), (ti, calls.len()));
        calls.push(CallSnapshot {
            status: inv.status,
            errors: error_list(inv.error_codes.as_deref()),
            prompt_tokens: inv.prompt_tokens,
            output_tokens: inv.output_tokens,
            grades: Vec::new(),
        });
    }
    Ok(call_of)
}

/// The codes of a comma-separated list (none for no list).
fn error_list(codes: Option<&str>) -> Vec<String> {
    codes
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Reads the run's events into its tasks: what blocked them, their retries, context,
/// failed references, their calls' grades and their wall time (first call started to
/// task finished).
fn add_events(
    store: &Store,
    run_id: &str,
    tasks: &mut [TaskSnapshot],
    index: &HashMap<String, usize>,
    call_of: &HashMap<String, (usize, usize)>,
) -> Result<(), StoreError> {
    let mut started: HashMap<usize, i64> = HashMap::new();
    let mut finished: HashMap<usize, i64> = HashMap::new();
    for (seq, ts, task, invocation, event) in events(store, run_id)? {
        let Some(&ti) = task.as_deref().and_then(|t| index.get(t)) else {
            continue;
        };
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("diff: event {seq} of {run_id} skipped: {e}");
                continue;
            }
        };
        match event {
            EngineEvent::AtomsGraded(g) => {
                if let Some(&(cti, ci)) = invocation.as_ref().and_then(|i| call_of.get(i)) {
                    tasks[cti].calls[ci].grades = g
                        .atoms
                        .iter()
                        .map(|a| a.grade.as_str().to_string())
                        .collect();
                }
            }
            EngineEvent::InvocationStarted(_) => {
                started.entry(ti).or_insert(ts);
            }
            EngineEvent::TaskFinished(_) => {
                finished.insert(ti, ts);
            }
            other => describe(&mut tasks[ti], other),
        }
    }
    for (ti, end) in finished {
        if let Some(&start) = started.get(&ti) {
            tasks[ti].wall_ms = end.checked_sub(start).and_then(|d| u64::try_from(d).ok());
        }
    }
    Ok(())
}

/// What an event of the task says about it, in the words the comparison shows: what
/// blocked it, a retry, an input of its context, a failed reference (other events: none).
fn describe(t: &mut TaskSnapshot, event: EngineEvent) {
    match event {
        EngineEvent::TaskBlocked(b) => t.blocked_by = Some(b.upstream),
        EngineEvent::RetryScheduled(r) => t.retries.push(format!(
            "attempt {} after {}{}: {}",
            r.next_attempt,
            r.error_code.as_str(),
            r.batch.map(|b| format!(" (batch {b})")).unwrap_or_default(),
            r.adjustment
        )),
        EngineEvent::ContextPlanned(c) => t.context.extend(c.inputs.iter().map(|i| {
            format!(
                "{}: {} {}{}, {} -> {} tokens",
                i.name,
                enum_text(&i.mode),
                i.action,
                if i.batched { " batched" } else { "" },
                i.tokens,
                i.tokens_after
            )
        })),
        EngineEvent::ReferenceFailed(r) => t.references.push(format!(
            "#{} {} {}",
            r.index,
            r.failure.ref_type,
            enum_text(&r.failure.error_code)
        )),
        _ => {}
    }
}

/// Adds the run's accepted atoms to their tasks, a repeated asset id within a task told
/// apart by its occurrence (`ID#2`).
fn add_accepted(
    store: &Store,
    run_id: &str,
    tasks: &mut [TaskSnapshot],
    index: &HashMap<String, usize>,
) -> Result<(), StoreError> {
    let mut seen: HashMap<(usize, String), usize> = HashMap::new();
    for (task, atom) in accepted_atoms(store, run_id)? {
        let Some(&ti) = index.get(&task) else {
            continue;
        };
        // A repeated asset id within a task is told apart by its occurrence.
        let n = seen.entry((ti, atom.asset_id.clone())).or_insert(0);
        *n += 1;
        let mut atom = atom;
        if *n > 1 {
            atom.asset_id = format!("{}#{n}", atom.asset_id);
        }
        tasks[ti].accepted.push(atom);
    }
    Ok(())
}

/// A unit enum's serde name (`ref_not_found`, `summary`).
fn enum_text<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

/// One decoded event: `(seq, ts, task_id, invocation_id, event)`.
type Row = (
    i64,
    i64,
    Option<String>,
    Option<String>,
    Result<EngineEvent, crate::model::event::EventDecodeError>,
);

/// The run's events of the kinds in [`KINDS`], in log order.
fn events(store: &Store, run_id: &str) -> Result<Vec<Row>, StoreError> {
    let mut st = store.conn().prepare(&format!(
        "SELECT seq, ts, kind, task_id, invocation_id, payload FROM execution_logs
         WHERE {} AND kind IN ({KINDS}) ORDER BY event_id",
        run_events_sql(RUN_BASE_SQL)
    ))?;
    let rows = st.query_map([run_id], |r| {
        let kind: String = r.get(2)?;
        let payload: String = r.get(5)?;
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(3)?,
            r.get(4)?,
            EngineEvent::from_parts(&kind, &payload),
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Milliseconds from the run's first to its last event.
fn wall_ms(store: &Store, run_id: &str) -> Result<Option<u64>, StoreError> {
    let (first, last): (Option<i64>, Option<i64>) = store.conn().query_row(
        &format!(
            "SELECT MIN(ts), MAX(ts) FROM execution_logs WHERE {}",
            run_events_sql(RUN_BASE_SQL)
        ),
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(first
        .zip(last)
        .and_then(|(f, l)| l.checked_sub(f))
        .and_then(|d| u64::try_from(d).ok()))
}

/// Accepted atoms of the run: `(task_id, atom)`, in the order they were stored.
fn accepted_atoms(store: &Store, run_id: &str) -> Result<Vec<(String, AtomSnapshot)>, StoreError> {
    let mut st = store.conn().prepare(
        "SELECT task_id, atom_id, grade, score, content FROM knowledge_atoms
         WHERE run_id = ?1 AND task_id IS NOT NULL ORDER BY rowid",
    )?;
    let rows = st.query_map(params![run_id], |r| {
        let content: String = r.get(4)?;
        Ok((
            r.get::<_, String>(0)?,
            AtomSnapshot {
                asset_id: r.get(1)?,
                grade: r.get(2)?,
                score: r.get(3)?,
                // Content that is not JSON is compared as text.
                content: serde_json::from_str(&content)
                    .unwrap_or(serde_json::Value::String(content)),
            },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
