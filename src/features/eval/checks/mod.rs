//! An evaluation's checks: each named, with a severity, a failure type and a weight,
//! and one kind (what it compares). [`evaluate`] scores one sample's recorded outcome
//! and keeps what was expected, what was found, where, and why.

mod command;
mod compare;
pub mod compiled;
mod kinds;
mod spec;

pub use kinds::evaluate_kind;
pub use spec::{CheckKind, Normalize, Over};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::protocol::Grade;

/// How much a failed check matters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The sample fails.
    #[default]
    Error,
    /// Reported, the sample still passes.
    Warning,
}

/// One named check of an eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Its name, unique within the eval.
    pub name: String,
    /// How much a failure matters.
    #[serde(default)]
    pub severity: Severity,
    /// The failure type its failures are filed under (the check's name when absent).
    #[serde(default)]
    pub failure_type: Option<String>,
    /// Its weight in a sample's score.
    #[serde(default = "one")]
    pub weight: f64,
    /// What it compares.
    #[serde(flatten)]
    pub kind: CheckKind,
}

fn one() -> f64 {
    1.0
}

/// A judge check's parts, as the spec stored them.
#[derive(Debug, Clone, Copy)]
pub struct JudgeParts<'a> {
    /// The rubric (the stored spec carries the rubric itself).
    pub rubric: &'a Value,
    /// The judges' provider profiles (empty: the eval's provider).
    pub judges: &'a [String],
    /// Answers asked of each judge.
    pub votes: u32,
}

impl JudgeParts<'_> {
    /// The rubric, read.
    pub fn rubric(&self) -> Result<crate::features::eval::judge::Rubric, String> {
        serde_json::from_value(self.rubric.clone()).map_err(|e| e.to_string())
    }
}

impl Check {
    /// Its parts when it is a `judge` check.
    pub fn judge(&self) -> Option<JudgeParts<'_>> {
        match &self.kind {
            CheckKind::Judge {
                rubric,
                judges,
                votes,
            } => Some(JudgeParts {
                rubric,
                judges,
                votes: *votes,
            }),
            _ => None,
        }
    }
}

/// A tool call as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub args: Value,
}

/// What one sample's run produced, as recorded: what the checks look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The final output text.
    pub output: String,
    /// The atoms accepted, as JSON.
    pub atoms: Vec<Value>,
    /// The trace (the request, the stream, the response), as JSON.
    pub trace: Value,
    /// Tool calls in the order made.
    pub tools: Vec<ToolCall>,
    /// The best grade of its atoms, if any was graded.
    pub grade: Option<Grade>,
    /// Tokens used (prompt and completion).
    pub tokens: u64,
    /// Wall time of the sample, ms.
    pub latency_ms: u64,
    /// Its cost, US dollars, when its model has a price.
    pub cost_usd: Option<f64>,
    /// The judgments of its `judge` checks, by check name.
    pub judgments: std::collections::BTreeMap<String, crate::features::eval::judge::Judgment>,
}

/// The result of one check on one sample: the check's name and its kind's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// The check's name.
    pub check: String,
    /// What the check found.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Scores `check` on one sample's outcome; `expected` is the sample's expected value.
/// A `judge` check whose judgment could not be made is not scored: `Err` says why.
pub fn evaluate(
    check: &Check,
    seen: &Observed,
    expected: Option<&Value>,
) -> Result<CheckResult, String> {
    let outcome = match &check.kind {
        CheckKind::Judge { rubric, .. } => judged(check, rubric, seen)?,
        kind => evaluate_kind(kind, seen, expected),
    };
    Ok(CheckResult {
        check: check.name.clone(),
        outcome,
    })
}

/// A judge check's outcome from its judgment.
fn judged(check: &Check, rubric: &Value, seen: &Observed) -> Result<Outcome, String> {
    let Some(j) = seen.judgments.get(&check.name) else {
        return Err("not judged: no judge was asked".into());
    };
    let pass_at = rubric.get("pass_at").and_then(Value::as_f64).unwrap_or(1.0);
    let Some(passed) = j.passed else {
        let unjudged: Vec<&str> = j
            .criteria
            .iter()
            .filter(|c| c.met.is_none())
            .map(|c| c.name.as_str())
            .collect();
        return Err(format!(
            "not judged: no answer judged {}{}",
            unjudged.join(", "),
            j.errors
                .first()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ));
    };
    let unmet: Vec<String> = j
        .criteria
        .iter()
        .filter(|c| c.met == Some(false))
        .map(|c| match c.evidence.first() {
            Some(e) => format!("{}: {e}", c.name),
            None => c.name.clone(),
        })
        .collect();
    let met = j.criteria.iter().filter(|c| c.met == Some(true)).count();
    let mut why = format!(
        "{met} of {} criteria met (share {:.2}, {:.2} needed)",
        j.criteria.len(),
        j.share,
        pass_at
    );
    if !unmet.is_empty() {
        why.push_str(&format!("; not met: {}", unmet.join("; ")));
    }
    Ok(Outcome {
        passed,
        score: j.share,
        expected: serde_json::json!({"rubric": rubric.get("name"), "pass_at": pass_at}),
        found: serde_json::to_value(j).unwrap_or(Value::Null),
        at: "judge".into(),
        why,
    })
}

/// The outcome of a kind, before it is named.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Whether it passed.
    pub passed: bool,
    /// Its score in [0, 1] (1 or 0 except for a command that gives its own).
    pub score: f64,
    /// What was expected.
    pub expected: Value,
    /// What was found.
    pub found: Value,
    /// Where it looked (`output`, a JSONPath, `tools`, …).
    pub at: String,
    /// Why it passed or failed, in words.
    pub why: String,
}

#[cfg(test)]
mod tests;
