//! Reducing a sample's epochs (the same sample run several times) to one result per
//! check: `mean`, `majority`, `all`, `any` or `at_least:N`.

use std::fmt;
use std::str::FromStr;

/// How a sample's epochs make one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reducer {
    /// The mean score; passes at 0.5 or more.
    Mean,
    /// Passes when more than half the epochs pass (a tie fails).
    Majority,
    /// Passes when every epoch passes.
    All,
    /// Passes when some epoch passes.
    Any,
    /// Passes when at least N epochs pass.
    AtLeast(u32),
}

impl FromStr for Reducer {
    type Err = String;

    fn from_str(s: &str) -> Result<Reducer, String> {
        match s.trim() {
            "mean" => Ok(Reducer::Mean),
            "majority" => Ok(Reducer::Majority),
            "all" => Ok(Reducer::All),
            "any" => Ok(Reducer::Any),
            other => match other.strip_prefix("at_least:").map(str::parse::<u32>) {
                Some(Ok(n)) if n > 0 => Ok(Reducer::AtLeast(n)),
                Some(_) => Err(format!(
                    "`{other}`: at_least needs a whole number of epochs from 1, as in at_least:2"
                )),
                None => Err(format!(
                    "unknown reducer `{other}`; expected mean, majority, all, any or at_least:N"
                )),
            },
        }
    }
}

impl fmt::Display for Reducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reducer::Mean => f.write_str("mean"),
            Reducer::Majority => f.write_str("majority"),
            Reducer::All => f.write_str("all"),
            Reducer::Any => f.write_str("any"),
            Reducer::AtLeast(n) => write!(f, "at_least:{n}"),
        }
    }
}

/// One epoch's result of a check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochResult {
    /// Whether it passed.
    pub passed: bool,
    /// Its score in [0, 1].
    pub score: f64,
}

/// The reduced result: whether the sample passes the check, and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reduced {
    /// Whether it passes.
    pub passed: bool,
    /// Its score: the mean for `mean`, else the share of epochs that passed.
    pub score: f64,
}

impl Reducer {
    /// Reduces the epochs' results; with none, the check does not pass.
    pub fn reduce(self, epochs: &[EpochResult]) -> Reduced {
        let n = epochs.len();
        if n == 0 {
            return Reduced {
                passed: false,
                score: 0.0,
            };
        }
        let passed_n = epochs.iter().filter(|e| e.passed).count();
        let share = passed_n as f64 / n as f64;
        match self {
            Reducer::Mean => {
                let mean = epochs.iter().map(|e| e.score).sum::<f64>() / n as f64;
                Reduced {
                    passed: mean >= 0.5,
                    score: mean,
                }
            }
            Reducer::Majority => Reduced {
                passed: 2 * passed_n > n,
                score: share,
            },
            Reducer::All => Reduced {
                passed: passed_n == n,
                score: share,
            },
            Reducer::Any => Reduced {
                passed: passed_n > 0,
                score: share,
            },
            Reducer::AtLeast(k) => Reduced {
                passed: passed_n >= k as usize,
                score: share,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn epochs(pattern: &str) -> Vec<EpochResult> {
        pattern
            .chars()
            .map(|c| EpochResult {
                passed: c == 'P',
                score: if c == 'P' { 1.0 } else { 0.0 },
            })
            .collect()
    }

    #[test]
    fn each_reducer_decides_as_documented() {
        let cases = [
            ("PPF", [true, true, false, true, true, false]),
            ("PFPF", [true, false, false, true, true, false]),
            ("FFF", [false, false, false, false, false, false]),
            ("PPP", [true, true, true, true, true, true]),
            ("PFF", [false, false, false, true, false, false]),
        ];
        let reducers = [
            Reducer::Mean,
            Reducer::Majority,
            Reducer::All,
            Reducer::Any,
            Reducer::AtLeast(2),
            Reducer::AtLeast(3),
        ];
        for (pattern, want) in cases {
            for (r, w) in reducers.iter().zip(want) {
                assert_eq!(r.reduce(&epochs(pattern)).passed, w, "{r} of {pattern}");
            }
        }
        let partial = [
            EpochResult {
                passed: false,
                score: 0.4,
            },
            EpochResult {
                passed: true,
                score: 0.8,
            },
        ];
        let m = Reducer::Mean.reduce(&partial);
        assert!((m.score - 0.6).abs() < 1e-12 && m.passed, "{m:?}");
        assert!(!Reducer::Any.reduce(&[]).passed, "no epochs: not passed");
    }

    #[test]
    fn reducers_read_back_as_written_and_bad_ones_are_refused() {
        for s in ["mean", "majority", "all", "any", "at_least:3"] {
            assert_eq!(s.parse::<Reducer>().expect(s).to_string(), s);
        }
        for (bad, says) in [
            ("at_least:0", "from 1"),
            ("at_least:x", "whole number"),
            ("median", "unknown reducer"),
        ] {
            let e = bad.parse::<Reducer>().expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
