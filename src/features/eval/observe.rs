//! What one copy of the plan (a sample's epoch) produced, read back from the run's
//! record: the output task's answer, the accepted atoms, every call's tokens, time and
//! cost, the best grade, and a trace of its tasks and calls. The same reading serves the
//! live eval, a rescore and the failure tree written again from the database.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};

use super::checks::{Observed, ToolCall};
use crate::base::protocol::Grade;
use crate::data::store::{Store, StoreError};

/// The tasks of one copy of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyTasks {
    /// The copy's task ids, in the plan's order.
    pub tasks: Vec<String>,
    /// The task whose answer the checks read.
    pub output_task: String,
}

impl CopyTasks {
    /// The tool calls of the copy's tasks in `tools` (by task), in the tasks' order.
    pub fn calls_from(&self, tools: &ToolsByTask) -> Vec<ToolCall> {
        self.tasks
            .iter()
            .flat_map(|t| tools.get(t).cloned().unwrap_or_default())
            .collect()
    }
}

/// A copy's outcome: what it produced, and why it cannot be scored when the model could
/// not be reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// What the checks look at.
    pub seen: Observed,
    /// Why the checks cannot be scored (a timeout, a system error, a call lost): an
    /// error, counted apart from failures.
    pub error: Option<String>,
}

/// Task statuses that say the model was not reached (or not to the end).
const UNREACHED: [&str; 3] = ["timeout", "cancelled", "lost"];
/// Error codes that say the same when a call ended with them: the source (the model's
/// server) could not be reached, a timeout, a system error. (E001 before any call is a
/// data reference that could not be read: the plan's fault, not the model's.)
const UNREACHED_CODES: [&str; 3] = ["E001", "E004", "E008"];

/// Reads copy `copy` of run `run_id`; `tools` are its tool calls in order (taken from the
/// log by the caller, who reads it once for every copy).
pub fn observe(
    store: &Store,
    run_id: &str,
    copy: &CopyTasks,
    tools: Vec<ToolCall>,
) -> Result<Observation, StoreError> {
    let conn = store.conn();
    let mut trace_tasks = Vec::with_capacity(copy.tasks.len());
    let mut tally = Tally::default();
    let mut error: Option<String> = None;
    let mut output = String::new();
    let mut atoms = Vec::new();
    let mut grade: Option<Grade> = None;
    for task in &copy.tasks {
        let Some(row) = task_row(conn, run_id, task)? else {
            error.get_or_insert_with(|| format!("task {task} is not in the run"));
            continue;
        };
        let calls = task_calls(conn, run_id, task, &mut tally)?;
        if error.is_none() {
            error = task_error(run_id, task, &row, &calls);
        }
        best_grade(conn, run_id, task, &mut grade)?;
        let answered =
            *task == copy.output_task && matches!(row.status.as_str(), "success" | "partial");
        let kept = match (&row.final_inv, answered) {
            (Some(inv), true) => answer(conn, run_id, inv)?,
            _ => None,
        };
        if let Some((text, found_atoms)) = kept {
            output = text;
            if let Some(a) = found_atoms {
                atoms = a;
            }
        }
        trace_tasks.push(json!({
            "task_id": task,
            "status": row.status,
            "attempts": row.attempts,
            "error_code": row.code,
            "invocations": calls,
        }));
    }
    let tool_trace: Vec<Value> = tools
        .iter()
        .map(|t| json!({"tool": t.name, "args": t.args}))
        .collect();
    let seen = Observed {
        output,
        atoms,
        trace: json!({"tasks": trace_tasks, "tools": tool_trace}),
        tools,
        grade,
        tokens: tally.tokens,
        latency_ms: match (tally.first, tally.last) {
            (Some(f), Some(l)) => (l - f).max(0) as u64,
            _ => 0,
        },
        cost_usd: (tally.priced && tally.any_call).then_some(tally.cost),
        judgments: Default::default(),
    };
    Ok(Observation { seen, error })
}

/// What a copy's calls add up to: tokens, cost, and the span of time they took.
struct Tally {
    /// Tokens used (prompt and completion).
    tokens: u64,
    /// Dollars of the priced calls.
    cost: f64,
    /// Every call had a price.
    priced: bool,
    /// Start of the earliest call, ms since the epoch.
    first: Option<i64>,
    /// End of the latest call, ms since the epoch.
    last: Option<i64>,
    /// Some call was made.
    any_call: bool,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            tokens: 0,
            cost: 0.0,
            priced: true,
            first: None,
            last: None,
            any_call: false,
        }
    }
}

/// A task's row in the run's record.
struct TaskRow {
    /// How it ended.
    status: String,
    /// Its error code, if any.
    code: Option<String>,
    /// The call whose answer it kept.
    final_inv: Option<String>,
    /// Attempts made.
    attempts: i64,
}

/// Task `task` of run `run_id`, if the run has it.
fn task_row(conn: &Connection, run_id: &str, task: &str) -> Result<Option<TaskRow>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT status, error_code, final_invocation_id, attempts FROM tasks
             WHERE run_id = ?1 AND task_id = ?2",
        )?
        .query_row(params![run_id, task], |r| {
            Ok(TaskRow {
                status: r.get(0)?,
                code: r.get(1)?,
                final_inv: r.get(2)?,
                attempts: r.get(3)?,
            })
        })
        .optional()?)
}

/// The calls of task `task`, in order, as the trace shows them; each is added to `tally`.
fn task_calls(
    conn: &Connection,
    run_id: &str,
    task: &str,
    tally: &mut Tally,
) -> Result<Vec<Value>, StoreError> {
    let mut calls = Vec::new();
    let mut st = conn.prepare_cached(
        "SELECT invocation_id, attempt, status, started_at, execution_time_ms, prompt_tokens,
                output_tokens, error_codes, cost_usd
         FROM invocations WHERE run_id = ?1 AND task_id = ?2 ORDER BY rowid",
    )?;
    let mut rows = st.query(params![run_id, task])?;
    while let Some(r) = rows.next()? {
        tally.any_call = true;
        let started: String = r.get(3)?;
        let ms: Option<i64> = r.get(4)?;
        let prompt: i64 = r.get(5)?;
        let out: Option<i64> = r.get(6)?;
        let c: Option<f64> = r.get(8)?;
        tally.tokens += prompt.max(0) as u64 + out.unwrap_or(0).max(0) as u64;
        match c {
            Some(c) => tally.cost += c,
            None => tally.priced = false,
        }
        if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&started) {
            let start = t.timestamp_millis();
            let end = start + ms.unwrap_or(0).max(0);
            tally.first = Some(tally.first.map_or(start, |f| f.min(start)));
            tally.last = Some(tally.last.map_or(end, |l| l.max(end)));
        }
        calls.push(json!({
            "invocation_id": r.get::<_, String>(0)?,
            "attempt": r.get::<_, i64>(1)?,
            "status": r.get::<_, Option<String>>(2)?,
            "execution_time_ms": ms,
            "prompt_tokens": prompt,
            "output_tokens": out,
            "error_codes": r.get::<_, Option<String>>(7)?,
            "cost_usd": c,
        }));
    }
    Ok(calls)
}

/// Why task `task` (with its `calls`) cannot be scored: it never reached the model.
fn task_error(run_id: &str, task: &str, row: &TaskRow, calls: &[Value]) -> Option<String> {
    let (status, code) = (&row.status, row.code.as_deref());
    let call_unreached = code.is_some_and(|c| {
        UNREACHED_CODES.contains(&c)
            && calls.iter().any(|call| {
                call["error_codes"]
                    .as_str()
                    .is_some_and(|codes| codes.split(',').any(|x| x.trim() == c))
            })
    });
    // A task that failed before any call (a prompt over the agent's input limit, a
    // log that could not be written) never reached the model: an error, not a
    // failure of the model's.
    let never_sent = status == "failed" && calls.is_empty() && code == Some("E008");
    if never_sent {
        return Some(format!(
            "task {task} was never sent to the model (E008: it failed before any call; `plexus show {run_id}` says why)"
        ));
    }
    if UNREACHED.contains(&status.as_str()) || call_unreached {
        return Some(format!(
            "task {task} ended {status}{}: the model was not reached",
            code.map(|c| format!(" ({c})")).unwrap_or_default()
        ));
    }
    None
}

/// Lowers `grade` to the best grade of task `task`'s atoms.
fn best_grade(
    conn: &Connection,
    run_id: &str,
    task: &str,
    grade: &mut Option<Grade>,
) -> Result<(), StoreError> {
    let mut gst = conn.prepare_cached(
        "SELECT grade FROM knowledge_atoms WHERE run_id = ?1 AND task_id = ?2 AND grade IS NOT NULL",
    )?;
    let mut g = gst.query(params![run_id, task])?;
    while let Some(r) = g.next()? {
        if let Some(found) = Grade::parse(&r.get::<_, String>(0)?) {
            *grade = Some(grade.map_or(found, |b| b.min(found)));
        }
    }
    Ok(())
}

/// An answer: the text checks read, and its atoms when it has some.
type Answer = (String, Option<Vec<Value>>);

/// The answer of call `inv`.
fn answer(conn: &Connection, run_id: &str, inv: &str) -> Result<Option<Answer>, StoreError> {
    let text: Option<String> = conn
        .prepare_cached(
            "SELECT json_extract(response_json, '$.output') FROM invocations
             WHERE run_id = ?1 AND invocation_id = ?2",
        )?
        .query_row(params![run_id, inv], |r| r.get(0))
        .optional()?
        .flatten();
    let Some(text) = text else {
        return Ok(None);
    };
    let v = serde_json::from_str::<Value>(&text).ok();
    let atoms = v
        .as_ref()
        .and_then(|v| v.get("atoms"))
        .and_then(Value::as_array)
        .cloned();
    // A task whose output is text: its plain answer is what checks read.
    let output = match v
        .as_ref()
        .and_then(|v| v.get("text"))
        .and_then(Value::as_str)
    {
        Some(plain) => plain.to_string(),
        None => text,
    };
    Ok(Some((output, atoms)))
}

/// Tool calls by task.
pub type ToolsByTask = std::collections::HashMap<String, Vec<ToolCall>>;

/// Every tool call of run `run_id`, per task, in the order made (one read of the log),
/// and the last event read (a follower of the log takes the calls after it).
pub fn tool_calls(store: &Store, run_id: &str) -> Result<(ToolsByTask, u64), StoreError> {
    let mut out = ToolsByTask::default();
    let (last, _) = store.last_event(run_id)?;
    let mut from = 1;
    while from <= last {
        let to = from.saturating_add(50_000).min(last);
        for e in store.events_of_kinds(run_id, &["tool_called"], from, to)? {
            if let (Some(task), Ok(crate::model::event::EngineEvent::ToolCalled(c))) =
                (e.task_id, e.event)
            {
                out.entry(task).or_default().push(ToolCall {
                    name: c.tool,
                    args: c.input,
                });
            }
        }
        from = to + 1;
    }
    Ok((out, last))
}
