//! Retries of tool calls: the seed 003 policy's delays, which errors are retried, the
//! longer time limit of each retry, and an injectable sleep.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use crate::base::protocol::messages::{ToolErrorType, ToolRetryPolicy};

/// Factor by which each retry's time limit grows (as the engine's E004 `timeout_growth`).
pub const TIMEOUT_GROWTH: f64 = 1.5;

/// Longest time limit of any retry, whatever the original.
pub const MAX_RETRY_TIMEOUT: Duration = Duration::from_secs(600);

impl ToolRetryPolicy {
    /// Delay in ms before retry number `retry` (1-based: the first retry waits
    /// `initial_delay_ms`, each later one `backoff_multiplier` times the one before),
    /// capped at `max_delay_ms`. With the defaults: 1000, 1500, 2250, 3375, … 10000.
    /// `retry == 0` (the first attempt) waits 0; a multiplier that is not a finite
    /// positive number gives the cap after the first retry.
    pub fn delay_ms(&self, retry: u32) -> u64 {
        if retry == 0 {
            return 0;
        }
        let m = self.backoff_multiplier;
        let d = self.initial_delay_ms as f64 * m.powi(retry.saturating_sub(1).min(1024) as i32);
        let capped = if d.is_finite() && d >= 0.0 {
            d.min(self.max_delay_ms as f64)
        } else {
            self.max_delay_ms as f64
        };
        capped.round() as u64
    }

    /// Whether an error of `error_type` is retried after `retries_made` retries: the
    /// type is in `retry_on` and fewer than `max_retries` retries were made.
    pub fn should_retry(&self, error_type: &ToolErrorType, retries_made: u32) -> bool {
        retries_made < self.max_retries && self.retry_on.contains(error_type)
    }

    /// Time limit of retry number `retry` (0: the first attempt) of a tool whose limit is
    /// `original`: `original × 1.5^retry` ([`TIMEOUT_GROWTH`]; 30 s → 45 s, 67.5 s,
    /// 101.25 s), so a tool that timed out because its work is slow gets room, capped at
    /// [`MAX_RETRY_TIMEOUT`] (or the original when that is longer).
    pub fn get_retry_timeout(&self, original: Duration, retry: u32) -> Duration {
        let grown = original.as_secs_f64() * TIMEOUT_GROWTH.powi(retry.min(64) as i32);
        let cap = MAX_RETRY_TIMEOUT.max(original);
        Duration::try_from_secs_f64(grown).map_or(cap, |d| d.min(cap))
    }
}

/// The future a [`Sleeper`] returns.
pub type SleepFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// How the executor waits between retries: the real sleep in a run, a recorder in tests,
/// a scaled sleep in demos.
pub trait Sleeper: Send + Sync {
    /// Waits `delay`.
    fn sleep(&self, delay: Duration) -> SleepFuture<'_>;
}

/// Sleeps with tokio, each delay divided by `divisor` (1: real time).
#[derive(Debug, Clone, Copy)]
pub struct TokioSleeper {
    /// Each delay is divided by this (at least 1).
    pub divisor: u32,
}

impl Default for TokioSleeper {
    fn default() -> Self {
        TokioSleeper { divisor: 1 }
    }
}

impl Sleeper for TokioSleeper {
    fn sleep(&self, delay: Duration) -> SleepFuture<'_> {
        let d = delay / self.divisor.max(1);
        Box::pin(tokio::time::sleep(d))
    }
}

/// Records every delay asked for and returns at once (tests, and offline replays that
/// must not wait).
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    delays: Mutex<Vec<Duration>>,
}

impl RecordingSleeper {
    /// The delays asked for so far, in order.
    pub fn delays(&self) -> Vec<Duration> {
        self.delays.lock().map(|d| d.clone()).unwrap_or_default()
    }

    /// The delays asked for so far, in ms.
    pub fn delays_ms(&self) -> Vec<u64> {
        self.delays().iter().map(|d| d.as_millis() as u64).collect()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, delay: Duration) -> SleepFuture<'_> {
        if let Ok(mut d) = self.delays.lock() {
            d.push(delay);
        }
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_by_half_and_stop_at_the_cap() {
        let p = ToolRetryPolicy::default();
        let d: Vec<u64> = (0..=8).map(|n| p.delay_ms(n)).collect();
        assert_eq!(d, [0, 1000, 1500, 2250, 3375, 5063, 7594, 10_000, 10_000]);
        let wild = ToolRetryPolicy {
            backoff_multiplier: f64::INFINITY,
            ..ToolRetryPolicy::default()
        };
        assert_eq!(wild.delay_ms(1), 1000);
        assert_eq!(wild.delay_ms(2), 10_000);
        assert_eq!(p.delay_ms(u32::MAX), 10_000);
    }

    #[test]
    fn retries_only_listed_types_and_at_most_max() {
        let p = ToolRetryPolicy::default();
        assert!(p.should_retry(&ToolErrorType::Timeout, 0));
        assert!(p.should_retry(&ToolErrorType::ResourceError, 2));
        assert!(!p.should_retry(&ToolErrorType::ResourceError, 3));
        assert!(!p.should_retry(&ToolErrorType::Other("validation_error".into()), 0));
    }

    #[test]
    fn retry_timeouts_grow_and_are_capped() {
        let p = ToolRetryPolicy::default();
        let s = Duration::from_secs(30);
        assert_eq!(p.get_retry_timeout(s, 0), s);
        assert_eq!(p.get_retry_timeout(s, 1), Duration::from_secs(45));
        assert_eq!(p.get_retry_timeout(s, 2), Duration::from_millis(67_500));
        assert_eq!(p.get_retry_timeout(s, 40), MAX_RETRY_TIMEOUT);
        let long = Duration::from_secs(3600);
        assert_eq!(p.get_retry_timeout(long, 3), long);
    }
}
