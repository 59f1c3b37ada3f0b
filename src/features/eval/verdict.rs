//! A sample's verdict from its checks: it passes when no check of severity `error`
//! failed; a check that could not be scored makes the sample an error (the model could
//! not be reached), counted apart from failures; its score is the weighted mean of the
//! scores of its checks.

use super::checks::{Check, CheckResult, Severity};

/// A sample's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// No error-severity check failed, and every check was scored.
    pub passed: bool,
    /// Some check could not be scored: an error, not a failure.
    pub errored: bool,
    /// The weighted mean score of the checks scored (0 with none).
    pub score: f64,
    /// The error-severity checks that failed.
    pub failed: Vec<String>,
    /// The warning-severity checks that failed.
    pub warnings: Vec<String>,
}

/// The verdict of `results` (one per check of `checks`, in the same order; `None` for a
/// check that could not be scored).
pub fn verdict(checks: &[Check], results: &[Option<CheckResult>]) -> Verdict {
    let mut v = Verdict {
        passed: true,
        errored: false,
        score: 0.0,
        failed: Vec::new(),
        warnings: Vec::new(),
    };
    let (mut weighted, mut weights) = (0.0, 0.0);
    for (check, result) in checks.iter().zip(results) {
        let Some(r) = result else {
            v.errored = true;
            continue;
        };
        weighted += check.weight * r.outcome.score;
        weights += check.weight;
        if !r.outcome.passed {
            match check.severity {
                Severity::Error => v.failed.push(check.name.clone()),
                Severity::Warning => v.warnings.push(check.name.clone()),
            }
        }
    }
    if results.len() < checks.len() {
        v.errored = true;
    }
    v.passed = !v.errored && v.failed.is_empty();
    v.score = if weights > 0.0 {
        weighted / weights
    } else {
        0.0
    };
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::eval::checks::Outcome;
    use serde_json::{json, Value};

    fn check(name: &str, severity: &str, weight: f64) -> Check {
        serde_json::from_value(json!({
            "name": name, "severity": severity, "weight": weight, "kind": "json_valid"
        }))
        .expect("check")
    }

    fn result(name: &str, passed: bool, score: f64) -> Option<CheckResult> {
        Some(CheckResult {
            check: name.into(),
            outcome: Outcome {
                passed,
                score,
                expected: Value::Null,
                found: Value::Null,
                at: "output".into(),
                why: String::new(),
            },
        })
    }

    #[test]
    fn errors_fail_the_sample_warnings_do_not_and_the_score_is_weighted() {
        let checks = [check("a", "error", 3.0), check("b", "warning", 1.0)];
        let v = verdict(&checks, &[result("a", true, 1.0), result("b", false, 0.0)]);
        assert!(v.passed && !v.errored, "{v:?}");
        assert_eq!(v.warnings, vec!["b"]);
        assert!((v.score - 0.75).abs() < 1e-12);
        let v = verdict(&checks, &[result("a", false, 0.5), result("b", true, 1.0)]);
        assert!(!v.passed && !v.errored);
        assert_eq!(v.failed, vec!["a"]);
        assert!((v.score - 0.625).abs() < 1e-12);
    }

    #[test]
    fn a_check_not_scored_makes_an_error_not_a_failure() {
        let checks = [check("a", "error", 1.0), check("b", "error", 1.0)];
        let v = verdict(&checks, &[result("a", true, 1.0), None]);
        assert!(v.errored && !v.passed && v.failed.is_empty(), "{v:?}");
        assert_eq!(v.score, 1.0, "the score is over the checks scored");
        let v = verdict(&checks, &[result("a", true, 1.0)]);
        assert!(v.errored, "a missing result is an error too");
    }
}
