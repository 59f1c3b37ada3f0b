//! Comparing two evaluations of the same dataset, check by check: both pass rates with
//! their intervals, the paired difference over the samples both scored, the exact
//! McNemar p-value (Holm-adjusted across checks), and the samples that flipped.
//!
//! Samples are aligned by id and content hash: a sample whose row changed between the
//! two is not a pair (it is listed apart), nor is one only one side has. A check that
//! could not be scored (an error: the model could not be reached) counts in its side's
//! denominator as not passing and is reported as an error; it is left out of the pairs.

use std::collections::{BTreeMap, HashMap};

use super::stats::{holm, wilson, Interval, Paired, Z95};

/// One sample's results in one evaluation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleResult {
    /// Its id.
    pub id: String,
    /// Its content hash.
    pub hash: String,
    /// Each check: passed, failed, or `None` for an error.
    pub checks: BTreeMap<String, Option<bool>>,
}

/// One side's figures for a check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Side {
    /// Samples scored or errored.
    pub n: u64,
    /// Passed.
    pub passed: u64,
    /// Errors (counted in `n`, not in `passed`).
    pub errors: u64,
    /// The pass rate over `n`, with its Wilson interval.
    pub rate: Interval,
}

/// The comparison of one check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckComparison {
    /// The check.
    pub check: String,
    /// Whether both evals have it (a check only one has is listed, not compared).
    pub compared: bool,
    /// The first evaluation's figures.
    pub first: Side,
    /// The second's.
    pub second: Side,
    /// The samples both scored, by outcome.
    pub paired: Paired,
    /// The second's pass rate minus the first's over those samples, with its interval.
    pub difference: Interval,
    /// The exact McNemar p-value.
    pub p: f64,
    /// The same, adjusted across the checks compared (Holm).
    pub p_adjusted: f64,
    /// Samples that passed in the first and failed in the second.
    pub regressed: Vec<String>,
    /// Samples that failed in the first and passed in the second.
    pub improved: Vec<String>,
}

/// Two evaluations compared.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Comparison {
    /// Every check either side has, by name.
    pub checks: Vec<CheckComparison>,
    /// Samples only the first has.
    pub only_first: Vec<String>,
    /// Samples only the second has.
    pub only_second: Vec<String>,
    /// Samples whose content changed between the two (not paired).
    pub changed: Vec<String>,
}

/// Compares evaluation `a` (the first, usually the older) with `b`.
pub fn compare(a: &[SampleResult], b: &[SampleResult]) -> Comparison {
    let by_id: HashMap<&str, &SampleResult> = b.iter().map(|s| (s.id.as_str(), s)).collect();
    let in_a: HashMap<&str, ()> = a.iter().map(|s| (s.id.as_str(), ())).collect();
    let mut out = Comparison::default();
    let mut pairs: Vec<(&SampleResult, &SampleResult)> = Vec::new();
    for s in a {
        match by_id.get(s.id.as_str()) {
            None => out.only_first.push(s.id.clone()),
            Some(t) if t.hash != s.hash => out.changed.push(s.id.clone()),
            Some(t) => pairs.push((s, t)),
        }
    }
    out.only_second = b
        .iter()
        .filter(|s| !in_a.contains_key(s.id.as_str()))
        .map(|s| s.id.clone())
        .collect();
    let mut names: Vec<&String> = a.iter().chain(b).flat_map(|s| s.checks.keys()).collect();
    names.sort();
    names.dedup();
    let has = |side: &[SampleResult], name: &str| side.iter().any(|s| s.checks.contains_key(name));
    for name in names {
        let mut c = CheckComparison {
            check: name.clone(),
            compared: has(a, name) && has(b, name),
            first: side(a, name),
            second: side(b, name),
            paired: Paired::default(),
            difference: Interval {
                estimate: 0.0,
                lo: -1.0,
                hi: 1.0,
            },
            p: 1.0,
            p_adjusted: 1.0,
            regressed: Vec::new(),
            improved: Vec::new(),
        };
        for (s, t) in &pairs {
            let (Some(Some(x)), Some(Some(y))) = (s.checks.get(name), t.checks.get(name)) else {
                continue;
            };
            match (x, y) {
                (true, true) => c.paired.both += 1,
                (true, false) => {
                    c.paired.first_only += 1;
                    c.regressed.push(s.id.clone());
                }
                (false, true) => {
                    c.paired.second_only += 1;
                    c.improved.push(s.id.clone());
                }
                (false, false) => c.paired.neither += 1,
            }
        }
        c.difference = c.paired.difference(Z95);
        c.p = c.paired.mcnemar_p();
        out.checks.push(c);
    }
    // Adjusted across the checks both sides have: a check only one side has is not
    // compared, and does not make the others' p-values larger.
    let compared: Vec<f64> = out
        .checks
        .iter()
        .filter(|c| c.compared)
        .map(|c| c.p)
        .collect();
    let mut adjusted = holm(&compared).into_iter();
    for c in out.checks.iter_mut().filter(|c| c.compared) {
        c.p_adjusted = adjusted.next().unwrap_or(1.0);
    }
    out
}

/// One side's figures for check `name`: every sample that has the check.
fn side(samples: &[SampleResult], name: &str) -> Side {
    let (mut n, mut passed, mut errors) = (0, 0, 0);
    for r in samples.iter().filter_map(|s| s.checks.get(name)) {
        n += 1;
        match r {
            Some(true) => passed += 1,
            Some(false) => {}
            None => errors += 1,
        }
    }
    Side {
        n,
        passed,
        errors,
        rate: wilson(passed, n, Z95),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample's id, hash and check outcomes.
    type Row<'r> = (&'r str, &'r str, &'r [(&'r str, Option<bool>)]);

    fn results(rows: &[Row<'_>]) -> Vec<SampleResult> {
        rows.iter()
            .map(|(id, hash, checks)| SampleResult {
                id: id.to_string(),
                hash: hash.to_string(),
                checks: checks.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            })
            .collect()
    }

    #[test]
    fn samples_are_paired_by_id_and_hash_and_flips_are_listed_each_way() {
        let a = results(&[
            ("s1", "h1", &[("exact", Some(true)), ("json", Some(true))]),
            ("s2", "h2", &[("exact", Some(true)), ("json", Some(false))]),
            ("s3", "h3", &[("exact", Some(false)), ("json", None)]),
            ("s4", "h4", &[("exact", Some(true))]),
            ("gone", "g", &[("exact", Some(true))]),
        ]);
        let b = results(&[
            ("s1", "h1", &[("exact", Some(false)), ("json", Some(true))]),
            ("s2", "h2", &[("exact", Some(true)), ("json", Some(true))]),
            ("s3", "h3", &[("exact", Some(true)), ("json", Some(true))]),
            ("s4", "CHANGED", &[("exact", Some(false))]),
            ("new", "n", &[("exact", Some(true))]),
        ]);
        let c = compare(&a, &b);
        assert_eq!(c.only_first, vec!["gone"]);
        assert_eq!(c.only_second, vec!["new"]);
        assert_eq!(c.changed, vec!["s4"]);
        let exact = &c.checks[0];
        assert_eq!(exact.check, "exact");
        assert_eq!(exact.regressed, vec!["s1"]);
        assert_eq!(exact.improved, vec!["s3"]);
        assert_eq!(
            exact.paired,
            Paired {
                both: 1,
                first_only: 1,
                second_only: 1,
                neither: 0
            }
        );
        assert_eq!(
            (exact.first.n, exact.first.passed),
            (5, 4),
            "every sample of its side"
        );
        let json = &c.checks[1];
        assert_eq!(json.first.errors, 1, "the error is counted, as not passing");
        assert_eq!((json.first.n, json.first.passed), (3, 1));
        assert_eq!(json.improved, vec!["s2"], "the errored pair is left out");
        assert_eq!(json.paired.n(), 2);
    }

    #[test]
    fn p_values_are_adjusted_across_checks_and_a_clear_regression_is_significant() {
        // 30 samples: check `a` regresses on 12 of them, check `b` flips 2 each way.
        let mut first = Vec::new();
        let mut second = Vec::new();
        for i in 0..30 {
            let id = format!("s{i}");
            let a_then = true;
            let a_now = i >= 12;
            let b_then = i % 2 == 0;
            // Samples 0 to 3 flip: 0 and 2 from pass to fail, 1 and 3 the other way.
            let b_now = if i < 4 { !b_then } else { b_then };
            first.push(SampleResult {
                id: id.clone(),
                hash: "h".into(),
                checks: [
                    ("a".to_string(), Some(a_then)),
                    ("b".to_string(), Some(b_then)),
                ]
                .into(),
            });
            second.push(SampleResult {
                id,
                hash: "h".into(),
                checks: [
                    ("a".to_string(), Some(a_now)),
                    ("b".to_string(), Some(b_now)),
                ]
                .into(),
            });
        }
        let c = compare(&first, &second);
        let (a, b) = (&c.checks[0], &c.checks[1]);
        // 12 against 0: 2 / 2^12.
        assert!((a.p - 2.0 / 4096.0).abs() < 1e-12, "{}", a.p);
        assert!(
            (a.p_adjusted - 2.0 * a.p).abs() < 1e-12,
            "two checks: the smaller p doubled"
        );
        assert!(
            a.difference.hi < 0.0,
            "the interval excludes no change: {:?}",
            a.difference
        );
        assert_eq!(b.paired.first_only, 2);
        assert_eq!(b.paired.second_only, 2);
        assert_eq!(b.p, 1.0);
        assert!(b.difference.lo < 0.0 && b.difference.hi > 0.0);
    }
}
