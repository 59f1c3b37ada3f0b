//! plexus's own runs written as a failure tree (SPEC §9, persist-first): each failed,
//! timed-out or partial invocation of a run (retried or not; the rows of the Failures
//! screen, [`Store::failed_invocations`]) becomes a sample whose trace holds
//! its request, its stream and its response, whose evaluation holds the quality check
//! and the issues, and whose attribution holds the error codes, the failing checks, the
//! upstream causes and the retry that followed; then the summary and a problems report
//! grouping the failures by cause. The database is only read; the tree is written into
//! a temporary directory and renamed into place.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::base::protocol::handoff::FailureSampleIndexEntry;
use crate::data::store::{FailedInvocation, Store, StoreError};
use crate::model::event::{EngineEvent, RetryScheduled};

use super::doc::DocKind;
use super::from_run_report::{cause_of, priority_of, problems_report, Attributed, Cause};
use super::from_run_text::Lang;
use super::index::Sample;
use super::layout;
use super::summary::FailureSummary;
use super::write::{TreeWriter, WriteError};

/// The iteration number a run is written as.
pub const RUN_ITERATION: u32 = 1;
/// Events read at a time while collecting streams.
const EVENT_WINDOW: u64 = 20_000;

/// Why a run could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading the database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the tree failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What was written.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExportReport {
    /// The tree.
    pub dir: PathBuf,
    /// The run.
    pub run_id: String,
    /// Invocations of the run.
    pub invocations: u32,
    /// Samples written (failed, timed-out or partial invocations, retried or not).
    pub samples: usize,
    /// Problems in the report.
    pub problems: usize,
    /// What could not be read (a stored request that does not parse…).
    pub notes: Vec<String>,
}

/// Writes run `run` (an id, a unique prefix or `latest`) of the database `db` as a
/// tree at `dir` (`dir/execution_outputs/iteration_1/…`).
pub fn export_run(db: &Path, run: &str, dir: &Path) -> Result<ExportReport, ExportError> {
    let store = Store::open(db)?;
    let run = store.run(run)?;
    // The Failures screen's rows, oldest first: the order the attempts were made in.
    let mut rows = store.failed_invocations(Some(&run.run_id))?;
    rows.reverse();
    let invocations: u32 = store
        .invocation_counts(&run.run_id)?
        .iter()
        .map(|(_, n)| *n as u32)
        .sum();
    let mut notes = Vec::new();
    let facts = RunFacts::read(&store, &run.run_id, &rows, &mut notes)?;
    let ids = sample_ids(&rows);
    let w = TreeWriter::new(dir)?;
    let it_rel = format!(
        "{}/{}{RUN_ITERATION}",
        layout::OUTPUTS_DIR,
        layout::ITERATION_PREFIX
    );
    w.mkdir(&it_rel)?;
    let now = crate::base::clock::now_rfc3339();
    let mut entries = Vec::with_capacity(rows.len());
    let mut attributed = Vec::with_capacity(rows.len());
    for (row, sample_id) in rows.iter().zip(&ids) {
        let (entry, cause) = facts.write_sample(&w, &it_rel, row, sample_id, &mut notes)?;
        entries.push(entry);
        attributed.push(Attributed {
            row,
            sample_id: sample_id.clone(),
            cause,
        });
    }
    let report = problems_report(&attributed, invocations, RUN_ITERATION, &now, facts.lang);
    let summary = FailureSummary::new(RUN_ITERATION, now, invocations, entries);
    w.write_json(&format!("{it_rel}/{}", layout::SUMMARY_FILE), &summary)?;
    w.write_json(&format!("{it_rel}/{}", layout::REPORT_FILE), &report)?;
    let dir = w.finish()?;
    Ok(ExportReport {
        dir,
        run_id: run.run_id,
        invocations,
        samples: rows.len(),
        problems: report.layer1_problems.len(),
        notes,
    })
}

/// What the samples of a run are written from, read once.
struct RunFacts<'s> {
    /// The database.
    store: &'s Store,
    /// The streamed text of each failed invocation.
    streams: HashMap<String, String>,
    /// Each task's retries.
    retries: HashMap<String, Vec<RetryScheduled>>,
    /// Each task's status and error code.
    tasks: HashMap<String, (String, Option<String>)>,
    /// Each task's upstream tasks.
    deps: HashMap<String, Vec<String>>,
    /// The language of the plan's text.
    lang: Lang,
}

impl<'s> RunFacts<'s> {
    /// Reads them for the failed invocations `rows` of `run_id` (what could not be read
    /// goes to `notes`).
    fn read(
        store: &'s Store,
        run_id: &str,
        rows: &[FailedInvocation],
        notes: &mut Vec<String>,
    ) -> Result<RunFacts<'s>, StoreError> {
        let streams = streams(store, run_id, rows, notes)?;
        let retries = store.retry_history(run_id)?;
        let tasks = store
            .tasks(run_id)?
            .into_iter()
            .map(|t| (t.task_id, (t.status, t.error_code)))
            .collect();
        let (deps, lang) = plan_facts(store, run_id);
        Ok(RunFacts {
            store,
            streams,
            retries,
            tasks,
            deps,
            lang,
        })
    }

    /// Writes the sample, trace, evaluation and attribution of `row` under `it_rel`;
    /// returns its index entry and its cause.
    fn write_sample(
        &self,
        w: &TreeWriter,
        it_rel: &str,
        row: &FailedInvocation,
        sample_id: &str,
        notes: &mut Vec<String>,
    ) -> Result<(FailureSampleIndexEntry, Cause), ExportError> {
        let request = self
            .store
            .invocation_request(&row.invocation_id)
            .unwrap_or_else(|e| {
                notes.push(format!("{}: request: {e}", row.invocation_id));
                None
            });
        let response = self
            .store
            .invocation_response(&row.invocation_id)
            .unwrap_or_else(|e| {
                notes.push(format!("{}: response: {e}", row.invocation_id));
                None
            });
        let cause = cause_of(row, response.as_ref());
        let issues = issues(self.store, row)?;
        let stream = self
            .streams
            .get(&row.invocation_id)
            .map(String::as_str)
            .unwrap_or("");
        let docs = documents(row, sample_id, request, response, stream, &issues);
        let checkers = failing_checks(row, &issues);
        let attribution = self.attribution(row, sample_id, cause, &checkers);
        let s = Sample::new(sample_id, RUN_ITERATION);
        for (kind, v) in DocKind::ALL
            .iter()
            .zip([&docs.0, &docs.1, &docs.2, &attribution])
        {
            w.write_json(&format!("{it_rel}/{}", s.rel_path(*kind)), v)?;
        }
        Ok((index_entry(&s, row, sample_id, cause, checkers), cause))
    }

    /// The attribution of `row`: its cause, codes and failing checks, the upstream tasks
    /// that did not succeed, and the retry that followed it.
    fn attribution(
        &self,
        row: &FailedInvocation,
        sample_id: &str,
        cause: Cause,
        checkers: &[String],
    ) -> Value {
        let upstream: Vec<Value> = self
            .deps
            .get(&row.task_id)
            .into_iter()
            .flatten()
            .filter_map(|d| {
                let (status, code) = self.tasks.get(d)?;
                (status != "success")
                    .then(|| json!({"task_id": d, "status": status, "error_code": code}))
            })
            .collect();
        let retry = self.retries.get(&row.task_id).and_then(|r| {
            r.iter()
                .find(|r| r.next_attempt == row.attempt.saturating_add(1))
        });
        json!({
            "sample_id": sample_id,
            "failure_type": cause.failure_type,
            "cause": cause.key,
            "error_codes": row.error_codes,
            "error_message": row.message,
            "failing_checks": checkers,
            "upstream_causes": upstream,
            "retried": row.retried,
            "retry": retry.map(|r| json!({"next_attempt": r.next_attempt, "error_code": r.error_code,
                "delay_ms": r.delay_ms, "adjustment": r.adjustment, "feedback": r.feedback})),
            "turn": 3,
        })
    }
}

/// The index entry of sample `s` (of `row`).
fn index_entry(
    s: &Sample,
    row: &FailedInvocation,
    sample_id: &str,
    cause: Cause,
    checkers: Vec<String>,
) -> FailureSampleIndexEntry {
    FailureSampleIndexEntry {
        sample_id: sample_id.to_string(),
        sample_path: s.rel_path(DocKind::Sample),
        trace_path: s.rel_path(DocKind::Trace),
        evaluation_path: s.rel_path(DocKind::Evaluation),
        attribution_path: s.rel_path(DocKind::Attribution),
        failure_type: Some(cause.failure_type.into()),
        conversation_turns: Some(3),
        checkers_failed: Some(checkers),
        priority: Some(priority_of(row)),
        extra: [
            ("task_id".to_string(), json!(row.task_id)),
            ("attempt".to_string(), json!(row.attempt)),
            ("invocation_id".to_string(), json!(row.invocation_id)),
        ]
        .into_iter()
        .collect(),
    }
}

/// The streamed text of each listed invocation, read from the log a window at a time.
fn streams(
    store: &Store,
    run_id: &str,
    rows: &[FailedInvocation],
    notes: &mut Vec<String>,
) -> Result<HashMap<String, String>, StoreError> {
    let wanted: HashSet<&str> = rows.iter().map(|r| r.invocation_id.as_str()).collect();
    let mut out: HashMap<String, String> = HashMap::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    let (last, _) = store.last_event(run_id)?;
    let mut from = 1;
    while from <= last {
        let to = from.saturating_add(EVENT_WINDOW - 1).min(last);
        for e in store.events(run_id, from, to)? {
            let Some(inv) = e.invocation_id.as_deref().filter(|i| wanted.contains(i)) else {
                continue;
            };
            match e.event {
                Ok(EngineEvent::Chunk(c)) => {
                    out.entry(inv.to_string()).or_default().push_str(&c.text)
                }
                Ok(_) => {}
                Err(err) => notes.push(format!("event {} skipped: {err}", e.seq)),
            }
        }
        from = to + 1;
    }
    Ok(out)
}

/// Each sample's id: its task and attempt (`TASK_CODE_DIFF_01_attempt2`), as a file
/// name (characters other than letters, digits, `-`, `_` and `.` become `_`), with a
/// `_2`, `_3` … added when two would be the same.
fn sample_ids(rows: &[FailedInvocation]) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::new();
    rows.iter()
        .map(|r| {
            let base = format!("{}_attempt{}", layout::file_name_of(&r.task_id), r.attempt);
            let mut id = base.clone();
            let mut k = 2;
            while !seen.insert(id.clone()) {
                id = format!("{base}_{k}");
                k += 1;
            }
            id
        })
        .collect()
}

/// Each task's upstream tasks, from the run's plan snapshot (none when it does not
/// parse), and the language of the plan's text (for the problems report).
fn plan_facts(store: &Store, run_id: &str) -> (HashMap<String, Vec<String>>, Lang) {
    let Ok((source, json, _)) = store.run_plan(run_id) else {
        return (HashMap::new(), Lang::En);
    };
    let lang = serde_json::from_str::<Value>(&json)
        .map(|v| Lang::of_plan(&v))
        .unwrap_or(Lang::En);
    let deps = match crate::model::plan::parse_plan(&json, &source) {
        Ok(plan) => plan
            .tasks
            .into_iter()
            .map(|t| {
                (
                    t.task_id,
                    t.depends_on.iter().map(|d| d.to_string()).collect(),
                )
            })
            .collect(),
        Err(_) => HashMap::new(),
    };
    (deps, lang)
}

/// The quality records of an invocation: (atom, grade, score, issues).
fn issues(store: &Store, row: &FailedInvocation) -> Result<Vec<Value>, StoreError> {
    let mut st = store.conn().prepare_cached(
        "SELECT atom_id, grade, score, issues FROM quality_records WHERE invocation_id = ?1 AND run_id = ?2 ORDER BY record_id",
    )?;
    let rows = st.query_map([&row.invocation_id, &row.run_id], |r| {
        let issues: String = r.get(3)?;
        Ok(json!({
            "atom_id": r.get::<_, String>(0)?,
            "grade": r.get::<_, String>(1)?,
            "score": r.get::<_, f64>(2)?,
            "issues": serde_json::from_str::<Value>(&issues).unwrap_or(Value::String(issues)),
        }))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Failing checks: the issue types of its atoms, then its error codes.
fn failing_checks(row: &FailedInvocation, atoms: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in atoms {
        for i in a
            .get("issues")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = i.get("issue_type").and_then(Value::as_str) {
                if !out.iter().any(|o| o == t) {
                    out.push(t.to_string());
                }
            }
        }
    }
    for c in &row.error_codes {
        if !out.iter().any(|o| o == c) {
            out.push(c.to_string());
        }
    }
    out
}

/// The sample, trace and evaluation documents of a row.
fn documents(
    row: &FailedInvocation,
    sample_id: &str,
    request: Option<Value>,
    response: Option<Value>,
    stream: &str,
    atoms: &[Value],
) -> (Value, Value, Value) {
    let sample = json!({
        "sample_id": sample_id,
        "invocation_id": row.invocation_id,
        "run_id": row.run_id,
        "task_id": row.task_id,
        "agent": row.agent,
        "attempt": row.attempt,
        "status": row.status,
        "started_at": row.started_at,
        "execution_time_ms": row.execution_time_ms,
        "grade": row.grade,
    });
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let req = request.as_ref();
    let history = json!([
        {"turn": 1, "role": "system", "content": text(req.and_then(|r| r.get("system_prompt")))},
        {"turn": 2, "role": "user", "content": text(req.and_then(|r| r.get("user_prompt")))},
        {"turn": 3, "role": "assistant", "content": stream},
    ]);
    // Comma-separated as stored (null without codes), as the trace has always held them.
    let codes = (!row.error_codes.is_empty()).then(|| row.error_codes.join(","));
    let trace = json!({
        "sample_id": sample_id,
        "conversation_history": history,
        "tool_calls": [],
        "states": [{"turn": 3, "state": {"status": row.status, "attempt": row.attempt,
            "error_codes": codes, "grade": row.grade}}],
        "request": request,
        "stream": {"text": stream, "bytes": stream.len()},
        "response": response,
    });
    let quality = response
        .as_ref()
        .and_then(|r| r.get("quality_check"))
        .cloned();
    let checker_results: Vec<Value> = atoms
        .iter()
        .flat_map(|a| {
            let atom = a.get("atom_id").cloned().unwrap_or(Value::Null);
            a.get("issues")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |i| {
                    json!({"checker": i.get("issue_type"), "passed": false, "atom_id": atom,
                        "field": i.get("field"), "severity": i.get("severity"),
                        "message": i.get("message"), "turn": 3})
                })
        })
        .collect();
    let evaluation = json!({
        "sample_id": sample_id,
        "passed": false,
        "status": row.status,
        "grade": row.grade,
        "quality_check": quality,
        "checker_results": checker_results,
        "atoms": atoms.iter().map(|a| json!({"atom_id": a.get("atom_id"), "grade": a.get("grade"), "score": a.get("score")})).collect::<Vec<_>>(),
        "errors": response.as_ref().and_then(|r| r.get("errors")).cloned(),
    });
    (sample, trace, evaluation)
}
