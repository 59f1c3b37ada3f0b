//! An eval's failure tree: the documents of each sample, made from what the database
//! holds (so the tree written live and the one `eval export-tree` writes afterwards are
//! the same), and the files written atomically under
//! `OUT/execution_outputs/iteration_N/`.
//!
//! Every sample gets `samples/ID.json` when it is dispatched, then
//! `execution_traces/ID_trace.json` and `evaluation_results/ID_eval.json` when it is
//! scored; a sample that failed or could not be scored also gets
//! `attribution_analysis/ID_attribution.json`. `failure_summary.json` lists the failed
//! ones; the problems report and the handoff come at the end.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::checks::{Check, Severity};
use super::record::{AttemptRow, EvalRow, SampleRow};
use super::spec::Scoring;
use crate::base::protocol::handoff::{FailurePriority, FailureSampleIndexEntry};
use crate::data::failures::layout;
use crate::data::failures::summary::FailureSummary;
use crate::data::failures::write::{write_json_atomic, write_json_swap, WriteError};

/// The handoff file, beside `execution_outputs/`.
pub const HANDOFF_FILE: &str = "execute_to_init_context.json";

/// One epoch of a sample as its documents show it: its scored attempt (with one row per
/// check, in the spec's order), the output task's answer and the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochDoc {
    /// The attempt and its checks.
    pub attempt: AttemptRow,
    /// The output task's answer.
    pub output: String,
    /// The trace of its tasks and calls.
    pub trace: Value,
}

/// A finished sample's documents.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleDocs {
    /// The trace document.
    pub trace: Value,
    /// The evaluation document.
    pub evaluation: Value,
    /// The attribution, for a sample that failed or could not be scored.
    pub attribution: Option<Value>,
    /// Its entry in the summary's index, when it failed or could not be scored.
    pub entry: Option<FailureSampleIndexEntry>,
}

/// The iteration's directory under `out`.
pub fn iteration_dir(out: &Path, iteration: u32) -> PathBuf {
    out.join(layout::OUTPUTS_DIR)
        .join(format!("{}{iteration}", layout::ITERATION_PREFIX))
}

/// The eval that wrote iteration `iteration` under `out`, as its first sample document
/// names it (`None` when the iteration has no readable sample document).
pub fn iteration_eval_id(out: &Path, iteration: u32) -> Option<String> {
    let samples = iteration_dir(out, iteration).join(layout::SAMPLES_DIR);
    let first = std::fs::read_dir(samples)
        .ok()?
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))?;
    let text = std::fs::read_to_string(first.path()).ok()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    doc.get("eval_id")?.as_str().map(str::to_string)
}

/// `samples/ID.json`: the sample as the dataset gives it, with where it comes from.
pub fn sample_doc(eval: &EvalRow, s: &SampleRow) -> Value {
    let content: Value = serde_json::from_str(&s.content).unwrap_or(Value::Null);
    json!({
        "sample_id": s.sample_id,
        "eval_id": eval.eval_id,
        "dataset": eval.dataset_path,
        "line": s.line,
        "content_hash": s.hash,
        "input": content.get("input").cloned().unwrap_or(Value::Null),
        "expected": content.get("expected").cloned().unwrap_or(Value::Null),
        "vars": content.get("vars").cloned().unwrap_or(Value::Object(Map::new())),
        "metadata": content.get("metadata").cloned().unwrap_or(Value::Object(Map::new())),
    })
}

fn parsed(result: &Option<String>) -> Value {
    result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or(Value::Null)
}

/// The judgments of the sample's `judge` checks, by check, each epoch's in order
/// (`null` when the eval has no judge).
fn llm_judgment(scoring: &Scoring, epochs: &[EpochDoc]) -> Value {
    let judges = scoring.judge_names();
    if judges.is_empty() {
        return Value::Null;
    }
    let mut out = Map::new();
    for name in judges {
        let per: Vec<Value> = epochs
            .iter()
            .map(|e| {
                let row = e.attempt.checks.iter().find(|c| c.name == name);
                let r = row.map(|r| parsed(&r.result)).unwrap_or(Value::Null);
                json!({
                    "epoch": e.attempt.epoch,
                    "passed": row.and_then(|r| r.passed),
                    "why": r.get("why"),
                    "judgment": r.get("found"),
                })
            })
            .collect();
        out.insert(name.to_string(), Value::Array(per));
    }
    Value::Object(out)
}

/// The documents of a scored sample.
pub fn documents(
    eval: &EvalRow,
    scoring: &Scoring,
    s: &SampleRow,
    epochs: &[EpochDoc],
) -> SampleDocs {
    let trace = json!({
        "sample_id": s.sample_id,
        "run_id": eval.run_id,
        "epochs": epochs.iter().map(|e| json!({
            "epoch": e.attempt.epoch,
            "output": e.output,
            "trace": e.trace,
        })).collect::<Vec<_>>(),
    });
    let mut failing = Failing::default();
    let epoch_docs: Vec<Value> = epochs
        .iter()
        .map(|doc| epoch_doc(scoring, &doc.attempt, &mut failing))
        .collect();
    let evaluation = json!({
        "sample_id": s.sample_id,
        "status": s.status,
        "passed": s.status == "passed",
        "score": s.score,
        "reducer": scoring.reducer,
        "epochs": epoch_docs,
        "llm_judgment": llm_judgment(scoring, epochs),
    });
    let (attribution, entry) = match s.status.as_str() {
        "failed" | "error" => {
            let checkers_failed = failing.names.clone();
            let (attribution, failure_type) = attribution(scoring, s, epochs, failing);
            let entry = index_entry(eval, s, failure_type, checkers_failed);
            (Some(attribution), Some(entry))
        }
        _ => (None, None),
    };
    SampleDocs {
        trace,
        evaluation,
        attribution,
        entry,
    }
}

/// The checks of severity `error` a sample failed, and what each found, epoch by epoch.
#[derive(Default)]
struct Failing {
    /// The checks' names, each once, in the order first failed.
    names: Vec<String>,
    /// What each failure expected and found, where and why.
    evidence: Vec<Value>,
}

/// The check of `scoring` named `name`.
fn check_of<'a>(scoring: &'a Scoring, name: &str) -> Option<&'a Check> {
    scoring.checks.iter().find(|c| c.name == name)
}

/// The failure type a check's failures are filed under.
fn failure_type_of(c: &Check) -> String {
    c.failure_type.clone().unwrap_or_else(|| c.name.clone())
}

/// One epoch in the evaluation document; its failed checks are added to `failing`.
fn epoch_doc(scoring: &Scoring, e: &AttemptRow, failing: &mut Failing) -> Value {
    let checks: Vec<Value> = e
        .checks
        .iter()
        .map(|row| {
            let (name, passed, score) = (&row.name, &row.passed, &row.score);
            let r = parsed(&row.result);
            let c = check_of(scoring, name);
            if *passed == Some(false) && c.is_some_and(|c| c.severity == Severity::Error) {
                if !failing.names.contains(name) {
                    failing.names.push(name.clone());
                }
                failing.evidence.push(json!({
                    "check": name, "epoch": e.epoch,
                    "expected": r.get("expected"), "found": r.get("found"),
                    "at": r.get("at"), "why": r.get("why"),
                }));
            }
            json!({
                "check": name,
                "passed": passed,
                "score": score,
                "severity": c.map(|c| c.severity),
                "failure_type": c.map(failure_type_of),
                "expected": r.get("expected"),
                "found": r.get("found"),
                "at": r.get("at"),
                "why": r.get("why"),
            })
        })
        .collect();
    json!({
        "epoch": e.epoch, "status": e.status, "score": e.score,
        "tokens": e.tokens, "latency_ms": e.latency_ms, "cost_usd": e.cost_usd,
        "judge_tokens": e.judge_tokens, "judge_cost_usd": e.judge_cost_usd,
        "error": e.error, "checker_results": checks,
    })
}

/// The attribution of a sample that failed or could not be scored, and its failure type.
fn attribution(
    scoring: &Scoring,
    s: &SampleRow,
    epochs: &[EpochDoc],
    failing: Failing,
) -> (Value, String) {
    let error = epochs.iter().find_map(|e| e.attempt.error.clone());
    let by_judge = error
        .as_deref()
        .is_some_and(|e| e.starts_with(super::score::JUDGE_UNSCORED));
    let failure_type = if s.status == "error" && by_judge {
        "judge_unscored".to_string()
    } else if s.status == "error" {
        "model_not_reached".to_string()
    } else {
        failing
            .names
            .first()
            .and_then(|n| check_of(scoring, n))
            .map(failure_type_of)
            .unwrap_or_else(|| "check_failed".into())
    };
    let attribution = json!({
        "sample_id": s.sample_id,
        "failure_type": failure_type,
        "cause": match (s.status.as_str(), by_judge) {
            ("error", true) => "a judge could not judge the output",
            ("error", false) => "the model was not reached",
            _ => "checks failed",
        },
        "failing_checks": failing.names,
        "evidence": failing.evidence,
        "error": error,
    });
    (attribution, failure_type)
}

/// The summary's index entry of a sample that failed or could not be scored.
fn index_entry(
    eval: &EvalRow,
    s: &SampleRow,
    failure_type: String,
    checkers_failed: Vec<String>,
) -> FailureSampleIndexEntry {
    use crate::data::failures::doc::DocKind;
    let sample = crate::data::failures::index::Sample::new(&s.file_id, eval.iteration);
    FailureSampleIndexEntry {
        sample_id: s.file_id.clone(),
        sample_path: sample.rel_path(DocKind::Sample),
        trace_path: sample.rel_path(DocKind::Trace),
        evaluation_path: sample.rel_path(DocKind::Evaluation),
        attribution_path: sample.rel_path(DocKind::Attribution),
        failure_type: Some(failure_type),
        conversation_turns: None,
        checkers_failed: Some(checkers_failed),
        priority: Some(if s.status == "error" {
            FailurePriority::Medium
        } else {
            FailurePriority::High
        }),
        extra: [("dataset_id".to_string(), json!(s.sample_id))]
            .into_iter()
            .collect(),
    }
}

/// Writes a sample's documents (the three of a scored sample, the attribution when it
/// has one) into the iteration directory `it`, each atomically (not waiting for the
/// disk: the database is the record, and `eval export-tree` writes them again).
pub fn write_docs(it: &Path, s: &SampleRow, docs: &SampleDocs) -> Result<(), WriteError> {
    write_json_swap(&it.join(layout::trace_path(&s.file_id)), &docs.trace)?;
    write_json_swap(
        &it.join(layout::evaluation_path(&s.file_id)),
        &docs.evaluation,
    )?;
    if let Some(a) = &docs.attribution {
        write_json_swap(&it.join(layout::attribution_path(&s.file_id)), a)?;
    }
    Ok(())
}

/// The four document directories of an iteration.
pub const DIRS: [&str; 4] = [
    layout::SAMPLES_DIR,
    layout::TRACES_DIR,
    layout::EVALUATIONS_DIR,
    layout::ATTRIBUTIONS_DIR,
];

/// Makes the iteration directory and its four document directories.
pub fn prepare(it: &Path) -> Result<(), WriteError> {
    for d in DIRS {
        let p = it.join(d);
        std::fs::create_dir_all(&p).map_err(|source| WriteError::Io { path: p, source })?;
    }
    Ok(())
}

/// Writes `samples/ID.json` of sample `s`.
pub fn write_sample(it: &Path, eval: &EvalRow, s: &SampleRow) -> Result<(), WriteError> {
    write_json_swap(
        &it.join(layout::sample_path(&s.file_id)),
        &sample_doc(eval, s),
    )
}

/// The summary of the iteration: `entries` (the failed samples, in dataset order) out of
/// `total`.
pub fn summary(
    iteration: u32,
    generated_at: String,
    total: u64,
    entries: Vec<FailureSampleIndexEntry>,
) -> FailureSummary {
    FailureSummary::new(
        iteration,
        generated_at,
        u32::try_from(total).unwrap_or(u32::MAX),
        entries,
    )
}

/// Writes `failure_summary.json` (a [`FailureSummary`], or a
/// [`crate::data::failures::summary::SummaryOf`] of borrowed entries).
pub fn write_summary<T: serde::Serialize>(it: &Path, summary: &T) -> Result<(), WriteError> {
    write_json_atomic(&it.join(layout::SUMMARY_FILE), summary)
}
