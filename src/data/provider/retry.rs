//! Retry handling of seed 001 §8.2 with configurable counts and delays, for every model
//! call (a task's attempts, a debate turn, a judge's answer).

use serde::{Deserialize, Serialize};

use crate::base::protocol::ErrorCode;

/// Retries and delays for one error code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeRetry {
    /// Most retries (attempts after the first).
    pub max_retries: u32,
    /// Delay before retry n is `delays_ms[n-1]`; the last value repeats.
    pub delays_ms: Vec<u64>,
}

/// Exponential backoff with jitter for transient transport errors (429, 5xx, resets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Backoff {
    /// Most retries.
    pub max_retries: u32,
    /// First delay.
    pub base_ms: u64,
    /// Multiplier per retry.
    pub factor: f64,
    /// Largest delay.
    pub max_ms: u64,
    /// Jitter as a fraction of the delay (0.2 = ±20%).
    pub jitter: f64,
}

/// The whole retry policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryPolicy {
    /// E001 source_not_found: 3 retries at 5 s, 15 s, 30 s.
    pub e001: CodeRetry,
    /// E002 parse_error: retried with the parse error added to the prompt.
    pub e002: CodeRetry,
    /// E003 validation_error: retried with the threshold lowered one grade.
    pub e003: CodeRetry,
    /// E004 timeout: retried with a longer timeout.
    pub e004: CodeRetry,
    /// E005 quality_below_threshold: retried with adjusted temperature and max_tokens.
    pub e005: CodeRetry,
    /// E009 runaway_output: retried at a lower temperature.
    pub e009: CodeRetry,
    /// Transient transport errors (reported as E001).
    pub transient: Backoff,
    /// Timeout multiplier per E004 retry.
    pub timeout_growth: f64,
    /// max_tokens multiplier per E005 retry.
    pub max_tokens_growth: f64,
    /// Temperature change per E005 retry.
    pub temperature_step: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            e001: CodeRetry {
                max_retries: 3,
                delays_ms: vec![5_000, 15_000, 30_000],
            },
            e002: CodeRetry {
                max_retries: 2,
                delays_ms: vec![1_000],
            },
            e003: CodeRetry {
                max_retries: 2,
                delays_ms: vec![1_000],
            },
            e004: CodeRetry {
                max_retries: 2,
                delays_ms: vec![2_000],
            },
            e005: CodeRetry {
                max_retries: 2,
                delays_ms: vec![1_000],
            },
            e009: CodeRetry {
                max_retries: 2,
                delays_ms: vec![1_000],
            },
            transient: Backoff {
                max_retries: 5,
                base_ms: 1_000,
                factor: 2.0,
                max_ms: 30_000,
                jitter: 0.2,
            },
            timeout_growth: 1.5,
            max_tokens_growth: 1.25,
            temperature_step: -0.1,
        }
    }
}

impl RetryPolicy {
    /// Every delay divided by `div` (tests and demos use millisecond-scale delays).
    pub fn scaled(mut self, div: u64) -> RetryPolicy {
        let div = div.max(1);
        for c in [
            &mut self.e001,
            &mut self.e002,
            &mut self.e003,
            &mut self.e004,
            &mut self.e005,
            &mut self.e009,
        ] {
            for d in &mut c.delays_ms {
                *d /= div;
            }
        }
        self.transient.base_ms /= div;
        self.transient.max_ms /= div;
        self
    }

    /// The per-code rule, `None` for codes that are never retried (E006–E008).
    pub fn rule(&self, code: ErrorCode) -> Option<&CodeRetry> {
        match code {
            ErrorCode::E001 => Some(&self.e001),
            ErrorCode::E002 => Some(&self.e002),
            ErrorCode::E003 => Some(&self.e003),
            ErrorCode::E004 => Some(&self.e004),
            ErrorCode::E005 => Some(&self.e005),
            ErrorCode::E009 => Some(&self.e009),
            ErrorCode::E006 | ErrorCode::E007 | ErrorCode::E008 => None,
        }
    }

    /// Delay before retry number `n` (1-based) of `code`, or `None` when no retry is left.
    pub fn delay_for(&self, code: ErrorCode, n: u32) -> Option<u64> {
        let rule = self.rule(code)?;
        if n == 0 || n > rule.max_retries {
            return None;
        }
        let i = (n as usize - 1).min(rule.delays_ms.len().saturating_sub(1));
        Some(rule.delays_ms.get(i).copied().unwrap_or(0))
    }

    /// Delay before transient retry `n` (1-based): `base × factor^(n-1)`, capped, with
    /// jitter from `unit` in [0, 1), and at least the server's `retry_after_ms` — which
    /// gets jitter too, upwards only, so calls told the same Retry-After do not all
    /// come back at the same instant.
    pub fn transient_delay(&self, n: u32, retry_after_ms: Option<u64>, unit: f64) -> Option<u64> {
        let b = &self.transient;
        if n == 0 || n > b.max_retries {
            return None;
        }
        let raw = (b.base_ms as f64 * b.factor.powi(n as i32 - 1)).min(b.max_ms as f64);
        let jittered = raw * (1.0 + b.jitter * (2.0 * unit - 1.0));
        let d = jittered.max(0.0).round() as u64;
        let after = retry_after_ms
            .map(|ms| (ms as f64 * (1.0 + b.jitter * unit)).round() as u64)
            .unwrap_or(0);
        Some(d.max(after))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e001_follows_the_seed_schedule() {
        let p = RetryPolicy::default();
        let d: Vec<_> = (1..=4).map(|n| p.delay_for(ErrorCode::E001, n)).collect();
        assert_eq!(d, vec![Some(5000), Some(15000), Some(30000), None]);
        for c in [ErrorCode::E006, ErrorCode::E007, ErrorCode::E008] {
            assert_eq!(p.delay_for(c, 1), None);
        }
    }

    #[test]
    fn transient_backoff_grows_caps_jitters_and_honours_retry_after() {
        let p = RetryPolicy::default();
        assert_eq!(p.transient_delay(1, None, 0.5), Some(1000));
        assert_eq!(p.transient_delay(3, None, 0.5), Some(4000));
        assert_eq!(p.transient_delay(5, None, 0.5), Some(16000));
        assert_eq!(p.transient_delay(6, None, 0.5), None);
        assert_eq!(p.transient_delay(1, None, 0.0), Some(800));
        assert_eq!(p.transient_delay(1, None, 0.999_999), Some(1200));
        assert_eq!(p.transient_delay(1, Some(7000), 0.0), Some(7000));
        assert_eq!(p.transient_delay(1, Some(7000), 0.5), Some(7700));
    }
}
