//! Scoring: one copy's observation against the checks (an attempt), and a sample's
//! attempts reduced to its verdict. A copy whose model could not be reached is an error:
//! its checks are not scored, and it is counted apart from failures.

use serde_json::{json, Value};

use super::checks::{evaluate, CheckResult, Observed};
use super::epochs::{EpochResult, Reducer};
use super::observe::Observation;
use super::record::{AttemptRow, CheckRow};
use super::spec::Scoring;
use super::verdict::verdict;

/// Scores epoch `epoch` of sample `sample_id` from what its copy produced.
pub fn score_attempt(
    scoring: &Scoring,
    sample_id: &str,
    epoch: u32,
    run_id: &str,
    obs: &Observation,
    expected: Option<&Value>,
) -> AttemptRow {
    let seen = &obs.seen;
    let base = unscored_attempt(sample_id, epoch, run_id, obs);
    if let Some(why) = &obs.error {
        return AttemptRow {
            status: "error".into(),
            checks: not_scored_rows(scoring, why),
            ..base
        };
    }
    let evaluated: Vec<Result<CheckResult, String>> = scoring
        .checks
        .iter()
        .map(|c| evaluate(c, seen, expected))
        .collect();
    let results: Vec<Option<CheckResult>> =
        evaluated.iter().map(|r| r.as_ref().ok().cloned()).collect();
    // A check that could not be scored (a judge that could not judge) makes the
    // attempt an error: why, named by its check.
    let unscored = scoring.checks.iter().zip(&evaluated).find_map(|(c, r)| {
        r.as_ref()
            .err()
            .map(|why| format!("{JUDGE_UNSCORED}{}: {why}", c.name))
    });
    let v = verdict(&scoring.checks, &results);
    let checks = scoring
        .checks
        .iter()
        .zip(evaluated)
        .map(|(c, r)| check_row(&c.name, r, seen))
        .collect();
    AttemptRow {
        status: if v.errored {
            "error"
        } else if v.passed {
            "passed"
        } else {
            "failed"
        }
        .into(),
        score: v.score,
        checks,
        error: unscored,
        ..base
    }
}

/// The attempt's row before its checks are scored: what the copy used, and its error.
fn unscored_attempt(sample_id: &str, epoch: u32, run_id: &str, obs: &Observation) -> AttemptRow {
    let seen = &obs.seen;
    AttemptRow {
        sample_id: sample_id.to_string(),
        epoch,
        run_id: run_id.to_string(),
        status: String::new(),
        score: 0.0,
        tokens: seen.tokens,
        latency_ms: seen.latency_ms,
        cost_usd: seen.cost_usd,
        error: obs.error.clone(),
        checks: Vec::new(),
        judge_tokens: seen.judgments.values().map(|j| j.tokens).sum(),
        judge_cost_usd: if seen.judgments.is_empty() {
            None
        } else {
            seen.judgments
                .values()
                .map(|j| j.cost_usd)
                .sum::<Option<f64>>()
        },
    }
}

/// A row per check of an attempt whose model could not be reached: not scored, and why.
fn not_scored_rows(scoring: &Scoring, why: &str) -> Vec<CheckRow> {
    scoring
        .checks
        .iter()
        .map(|c| CheckRow {
            name: c.name.clone(),
            passed: None,
            score: None,
            result: Some(json!({"why": format!("not scored: {why}")}).to_string()),
        })
        .collect()
}

/// The row of check `name`'s result on the copy that produced `seen`.
fn check_row(name: &str, result: Result<CheckResult, String>, seen: &Observed) -> CheckRow {
    match result {
        Ok(r) => CheckRow {
            name: r.check,
            passed: Some(r.outcome.passed),
            score: Some(r.outcome.score),
            result: Some(
                json!({
                    "expected": r.outcome.expected,
                    "found": r.outcome.found,
                    "at": r.outcome.at,
                    "why": r.outcome.why,
                })
                .to_string(),
            ),
        },
        // Not scored (a judge that could not judge): the judgment says why.
        Err(why) => CheckRow {
            name: name.to_string(),
            passed: None,
            score: None,
            result: Some(
                json!({"why": why, "at": "judge", "found": seen.judgments.get(name)}).to_string(),
            ),
        },
    }
}

/// A sample's verdict from its attempts: `error` when any epoch is an error (visible in
/// every denominator), else the reducer over the epochs' verdicts (`mean`: at least half
/// of them passed) gives `passed` or `failed`; its score is the mean of the epochs'.
pub fn sample_verdict(reducer: Reducer, attempts: &[(String, f64)]) -> (&'static str, f64) {
    if attempts.iter().any(|(s, _)| s == "error") {
        return ("error", 0.0);
    }
    let epochs: Vec<EpochResult> = attempts
        .iter()
        .map(|(s, _)| EpochResult {
            passed: s == "passed",
            score: if s == "passed" { 1.0 } else { 0.0 },
        })
        .collect();
    let r = reducer.reduce(&epochs);
    let mean = attempts.iter().map(|(_, x)| x).sum::<f64>() / attempts.len().max(1) as f64;
    (if r.passed { "passed" } else { "failed" }, mean)
}

/// A check's result over a sample's epochs: `None` when some epoch could not be scored,
/// else whether the reducer passes it.
pub fn check_over_epochs(reducer: Reducer, epochs: &[(Option<bool>, Option<f64>)]) -> Option<bool> {
    let mut results = Vec::with_capacity(epochs.len());
    for (passed, score) in epochs {
        let passed = (*passed)?;
        results.push(EpochResult {
            passed,
            score: score.unwrap_or(if passed { 1.0 } else { 0.0 }),
        });
    }
    (!results.is_empty()).then(|| reducer.reduce(&results).passed)
}

/// How an attempt's error starts when a judge could not judge it (the model of the
/// plan answered; the error is the judge's, not the model's).
pub const JUDGE_UNSCORED: &str = "a judge could not judge: ";

/// The letter of a check's result in a sample's marks: passed.
pub const MARK_PASSED: u8 = b'p';
/// Failed.
pub const MARK_FAILED: u8 = b'f';
/// Not scored (an error: the model could not be reached, or a judge could not judge).
pub const MARK_ERROR: u8 = b'e';

/// A sample's result per check over its epochs (`attempts`), one letter per check of
/// `scoring` in its order: [`MARK_PASSED`], [`MARK_FAILED`] or [`MARK_ERROR`]. Stored
/// with the sample's verdict, so the Eval screen and `eval compare` read one row per
/// sample instead of one per check and epoch.
pub fn check_marks(scoring: &Scoring, attempts: &[&AttemptRow]) -> String {
    let reducer = scoring.reducer();
    scoring
        .checks
        .iter()
        .map(|c| {
            let epochs: Vec<(Option<bool>, Option<f64>)> = attempts
                .iter()
                .map(|a| {
                    a.checks
                        .iter()
                        .find(|r| r.name == c.name)
                        .map_or((None, None), |r| (r.passed, r.score))
                })
                .collect();
            char::from(match check_over_epochs(reducer, &epochs) {
                Some(true) => MARK_PASSED,
                Some(false) => MARK_FAILED,
                None => MARK_ERROR,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::eval::checks::{Check, CheckKind, Observed, Severity};

    fn scoring() -> Scoring {
        let check = |name: &str, kind: CheckKind, severity| Check {
            name: name.into(),
            severity,
            failure_type: None,
            weight: 1.0,
            kind,
        };
        Scoring {
            checks: vec![
                check("json", CheckKind::JsonValid, Severity::Error),
                check(
                    "short",
                    CheckKind::TokensAtMost { tokens: 10 },
                    Severity::Warning,
                ),
            ],
            epochs: 1,
            reducer: "mean".into(),
            fail_under: Default::default(),
            plan_tasks: Vec::new(),
            output_task: String::new(),
        }
    }

    fn obs(output: &str, tokens: u64, error: Option<&str>) -> Observation {
        Observation {
            seen: Observed {
                output: output.into(),
                tokens,
                ..Observed::default()
            },
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn an_attempt_passes_fails_or_errors_with_one_row_per_check() {
        let s = scoring();
        let a = score_attempt(&s, "s1", 1, "R", &obs("{}", 50, None), None);
        assert_eq!(a.status, "passed", "a failed warning does not fail it");
        assert_eq!(a.checks[1].passed, Some(false));
        assert_eq!(a.score, 0.5);
        let a = score_attempt(&s, "s1", 1, "R", &obs("not json", 5, None), None);
        assert_eq!(a.status, "failed");
        assert!(a.checks[0].result.as_deref().unwrap_or("").contains("why"));
        let a = score_attempt(&s, "s1", 2, "R", &obs("", 0, Some("timeout")), None);
        assert_eq!(a.status, "error");
        assert!(a.checks.iter().all(|c| c.passed.is_none()));
        assert_eq!(a.error.as_deref(), Some("timeout"));
    }

    #[test]
    fn a_sample_with_an_errored_epoch_is_an_error_else_the_reducer_decides() {
        let p = |s: &str, x: f64| (s.to_string(), x);
        assert_eq!(
            sample_verdict(Reducer::Any, &[p("passed", 1.0), p("error", 0.0)]).0,
            "error"
        );
        assert_eq!(
            sample_verdict(Reducer::Majority, &[p("passed", 1.0), p("failed", 0.0)]).0,
            "failed"
        );
        assert_eq!(
            sample_verdict(Reducer::Any, &[p("passed", 1.0), p("failed", 0.0)]).0,
            "passed"
        );
        assert_eq!(
            sample_verdict(Reducer::Mean, &[p("failed", 0.8)]),
            ("failed", 0.8),
            "a failed epoch with a high score is still a failure"
        );
        assert_eq!(
            check_over_epochs(Reducer::All, &[(Some(true), None), (None, None)]),
            None
        );
        assert_eq!(
            check_over_epochs(
                Reducer::AtLeast(2),
                &[(Some(true), None), (Some(true), None)]
            ),
            Some(true)
        );
    }
}
