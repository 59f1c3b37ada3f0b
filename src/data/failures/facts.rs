//! What an iteration's own documents say, read when a handoff is written: how many
//! samples there are and how many failed (from `samples/` and `evaluation_results/`),
//! the mean evaluation score, and one sample's failure type, failed checkers, priority
//! and conversation turns. Nothing here guesses: what the documents do not say is
//! `None`, with a note saying why.

use std::path::Path;

use serde_json::Value;

use crate::base::protocol::handoff::FailurePriority;

use super::doc::{load_file, DocKind, LoadOptions};
use super::index::{Sample, Tree};
use super::index_read::parse_priority;
use super::layout;
use super::trace::parse_trace;

/// Keys of an evaluation's overall score, in the order they are looked for.
pub const SCORE_KEYS: [&str; 4] = ["overall_score", "score", "quality_score", "final_score"];

/// An iteration's figures as its documents give them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Counts {
    /// Sample files in `samples/` (`None` when the directory cannot be listed).
    pub total: Option<u32>,
    /// Samples whose evaluation says they failed; `None` unless every sample's
    /// evaluation says passed or failed.
    pub failed: Option<u32>,
    /// Mean of the samples' evaluation scores, rounded to two places; `None` unless
    /// every sample's evaluation gives a score between 0 and 1.
    pub mean_score: Option<f64>,
    /// Why a figure is `None`.
    pub notes: Vec<String>,
}

/// Whether one evaluation result says its sample failed: its `passed` flag; else its
/// `verdict`, `status` or `result` word; else its checker results (any failed: failed;
/// all passed: passed); else the LLM judgment's verdict. `None` when it says nothing.
pub fn evaluation_failed(v: &Value) -> Option<bool> {
    if let Some(p) = v.get("passed").and_then(Value::as_bool) {
        return Some(!p);
    }
    let word = |x: &Value| -> Option<bool> {
        match x.as_str()?.trim().to_ascii_lowercase().as_str() {
            "pass" | "passed" | "success" | "succeeded" | "ok" => Some(false),
            "fail" | "failed" | "failure" | "partial" | "timeout" | "error" => Some(true),
            _ => None,
        }
    };
    if let Some(f) = ["verdict", "status", "result"]
        .iter()
        .find_map(|k| v.get(k).and_then(word))
    {
        return Some(f);
    }
    if let Some(checks) = checker_verdicts(v) {
        if !checks.is_empty() {
            return Some(checks.iter().any(|(_, passed)| !passed));
        }
    }
    v.get("llm_judgment")
        .and_then(|j| j.get("verdict"))
        .and_then(word)
}

/// One evaluation result's overall score between 0 and 1: the first of
/// [`SCORE_KEYS`], else `quality_check.avg_quality_score`, else `llm_judgment.score`.
/// `None` when none is a number, or the one found lies outside 0–1.
pub fn evaluation_score(v: &Value) -> Option<f64> {
    let found = SCORE_KEYS
        .iter()
        .find_map(|k| v.get(k).and_then(Value::as_f64))
        .or_else(|| {
            v.get("quality_check")
                .and_then(|q| q.get("avg_quality_score"))
                .and_then(Value::as_f64)
        })
        .or_else(|| {
            v.get("llm_judgment")
                .and_then(|j| j.get("score"))
                .and_then(Value::as_f64)
        })?;
    (0.0..=1.0).contains(&found).then_some(found)
}

/// `(checker, passed)` of each entry of an evaluation's checker results that names
/// its checker and says whether it passed; `None` when there is no such list. The
/// results may be a list of entries (`[{"checker": "format", "passed": false}]`) or a
/// map by name (`{"format": false}`, `{"format": {"passed": false}}`). An evaluation
/// written by `plexus eval` keeps them per epoch (`epochs[].checker_results`): every
/// epoch's entries count.
fn checker_verdicts(v: &Value) -> Option<Vec<(String, bool)>> {
    let list_of = |v: &Value| {
        ["checker_results", "checkers", "checks"]
            .iter()
            .find_map(|k| v.get(k).and_then(verdicts_in))
    };
    list_of(v).or_else(|| {
        let epochs = v.get("epochs")?.as_array()?;
        Some(epochs.iter().filter_map(list_of).flatten().collect())
    })
}

/// The verdicts of one checker-results value: a list of named entries, or a map from
/// each checker's name to its verdict (a bool, or an entry with `passed`).
fn verdicts_in(results: &Value) -> Option<Vec<(String, bool)>> {
    let passed = |c: &Value| {
        c.as_bool()
            .or_else(|| c.get("passed").and_then(Value::as_bool))
    };
    match results {
        Value::Array(list) => Some(
            list.iter()
                .filter_map(|c| {
                    let name = ["checker", "name", "checker_name", "check", "id"]
                        .iter()
                        .find_map(|k| c.get(k).and_then(Value::as_str))?;
                    Some((name.to_string(), passed(c)?))
                })
                .collect(),
        ),
        Value::Object(map) => Some(
            map.iter()
                .filter_map(|(name, c)| Some((name.clone(), passed(c)?)))
                .collect(),
        ),
        _ => None,
    }
}

/// Counts the samples of the iteration at `dir` and reads each one's evaluation.
pub fn count_iteration(dir: &Path, o: &LoadOptions) -> Counts {
    let mut c = Counts::default();
    let ids = match std::fs::read_dir(dir.join(layout::SAMPLES_DIR)) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let id = name.to_str()?.strip_suffix(".json")?.to_string();
                (!id.is_empty()).then_some(id)
            })
            .collect::<Vec<_>>(),
        Err(e) => {
            c.notes.push(format!(
                "{}/ cannot be listed ({e}): no counts",
                layout::SAMPLES_DIR
            ));
            return c;
        }
    };
    c.total = u32::try_from(ids.len()).ok();
    let (mut failed, mut unsaid, mut scores, mut unscored) = (0u32, 0usize, Vec::new(), 0usize);
    for id in &ids {
        let doc = load_file(&dir.join(layout::evaluation_path(id)), None, o);
        let v = doc.value.unwrap_or(Value::Null);
        match evaluation_failed(&v) {
            Some(true) => failed += 1,
            Some(false) => {}
            None => unsaid += 1,
        }
        match evaluation_score(&v) {
            Some(s) => scores.push(s),
            None => unscored += 1,
        }
    }
    if unsaid == 0 {
        c.failed = Some(failed);
    } else {
        c.notes.push(format!(
            "{unsaid} of {} samples have no evaluation saying passed or failed: failed_samples unknown",
            ids.len()
        ));
    }
    if unscored == 0 && !scores.is_empty() {
        let mean = scores.iter().sum::<f64>() / scores.len() as f64;
        c.mean_score = Some((mean * 100.0).round() / 100.0);
    } else if unscored > 0 {
        c.notes.push(format!(
            "{unscored} of {} samples have no evaluation score between 0 and 1: final_quality unknown",
            ids.len()
        ));
    }
    c
}

/// What a sample's documents say about it, for its handoff index entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SampleFacts {
    /// The attribution's `failure_type`.
    pub failure_type: Option<String>,
    /// The attribution's `checkers_failed`, else the evaluation's failed checkers.
    pub checkers_failed: Option<Vec<String>>,
    /// The attribution's `priority`.
    pub priority: Option<FailurePriority>,
    /// Entries of the trace's conversation history.
    pub conversation_turns: Option<u32>,
}

/// Reads what `s`'s attribution, evaluation and trace say (a document that is missing
/// or broken says nothing).
pub fn sample_facts(tree: &Tree, s: &Sample) -> SampleFacts {
    let value = |k: DocKind| tree.load(s, k).value.unwrap_or(Value::Null);
    let attribution = value(DocKind::Attribution);
    let evaluation = value(DocKind::Evaluation);
    let trace = value(DocKind::Trace);
    // A list of names, or a map from each checker to whether it failed.
    let strings = |v: &Value| -> Option<Vec<String>> {
        match v {
            Value::Array(a) => Some(
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect(),
            ),
            Value::Object(m) => Some(
                m.iter()
                    .filter(|(_, failed)| failed.as_bool() == Some(true))
                    .map(|(name, _)| name.clone())
                    .collect(),
            ),
            _ => None,
        }
    };
    let from_checks = checker_verdicts(&evaluation).map(|c| {
        let mut failed: Vec<String> = Vec::new();
        for (name, passed) in c {
            if !passed && !failed.contains(&name) {
                failed.push(name);
            }
        }
        failed
    });
    let conversation = (!trace.is_null()).then(|| parse_trace(&trace));
    let has_history = conversation.as_ref().is_some_and(|c| {
        !c.notes
            .iter()
            .any(|n| n.starts_with("no conversation_history"))
    });
    SampleFacts {
        failure_type: attribution
            .get("failure_type")
            .and_then(Value::as_str)
            .map(str::to_string),
        checkers_failed: attribution
            .get("checkers_failed")
            .and_then(strings)
            .or(from_checks),
        priority: attribution
            .get("priority")
            .and_then(Value::as_str)
            .and_then(parse_priority),
        conversation_turns: conversation
            .filter(|_| has_history)
            .and_then(|c| u32::try_from(c.turns.len()).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checker_results_as_a_map_by_name_are_read() {
        let v = checker_verdicts(&json!({"checker_results": {"format": true, "schema": false,
                                          "judge": {"passed": false, "score": 0.2}}}))
        .expect("verdicts");
        let mut v = v;
        v.sort();
        assert_eq!(
            v,
            [
                ("format".into(), true),
                ("judge".into(), false),
                ("schema".into(), false)
            ]
        );
        assert_eq!(
            evaluation_failed(&json!({"checkers": {"format": false}})),
            Some(true)
        );
    }

    #[test]
    fn verdicts_and_scores_say_only_what_is_written() {
        assert_eq!(evaluation_failed(&json!({"passed": false})), Some(true));
        assert_eq!(evaluation_failed(&json!({"verdict": "PASS"})), Some(false));
        assert_eq!(
            evaluation_failed(
                &json!({"checker_results": [{"checker": "a", "passed": true},
                {"checker": "b", "passed": false}]})
            ),
            Some(true)
        );
        assert_eq!(
            evaluation_failed(&json!({"llm_judgment": {"verdict": "fail"}})),
            Some(true)
        );
        assert_eq!(evaluation_failed(&json!({"note": 1})), None);
        assert_eq!(
            evaluation_score(&json!({"overall_score": 0.37})),
            Some(0.37)
        );
        assert_eq!(
            evaluation_score(&json!({"llm_judgment": {"score": 0.4}})),
            Some(0.4)
        );
        assert_eq!(evaluation_score(&json!({"score": 85})), None);
        assert_eq!(evaluation_score(&json!({"score": -1.0})), None);
        assert_eq!(evaluation_score(&json!({})), None);
    }

    #[test]
    fn an_eval_evaluation_is_read_through_its_epochs() {
        let v = json!({"epochs": [
            {"epoch": 1, "checker_results": [{"check": "exact", "passed": true}]},
            {"epoch": 2, "checker_results": [{"check": "exact", "passed": false},
                {"check": "regex", "passed": false}]},
            {"epoch": 3, "checker_results": [{"check": "exact", "passed": false}]}
        ]});
        assert_eq!(evaluation_failed(&v), Some(true));
        let verdicts = checker_verdicts(&v).expect("verdicts");
        assert_eq!(verdicts.len(), 4);
        let passing =
            json!({"epochs": [{"checker_results": [{"check": "exact", "passed": true}]}]});
        assert_eq!(evaluation_failed(&passing), Some(false));
    }
}
