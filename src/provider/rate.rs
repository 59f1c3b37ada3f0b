//! A token-bucket rate limit (as GCRA: one reservation per request, no polling): up to
//! `burst` requests at once, then one every `60 / rpm` seconds.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Limits requests per minute.
#[derive(Debug)]
pub struct RateLimiter {
    interval: f64,
    tau: f64,
    start: Instant,
    /// Theoretical arrival time of the next request, seconds since `start`.
    tat: Mutex<f64>,
}

impl RateLimiter {
    /// `rpm` requests per minute with bursts of `burst` (`None` for rpm = 0: no limit).
    pub fn new(rpm: u32, burst: Option<u32>) -> Option<RateLimiter> {
        if rpm == 0 {
            return None;
        }
        let interval = 60.0 / f64::from(rpm);
        let burst = burst.unwrap_or_else(|| rpm.div_ceil(60)).max(1);
        Some(RateLimiter {
            interval,
            tau: f64::from(burst - 1) * interval,
            start: Instant::now(),
            tat: Mutex::new(0.0),
        })
    }

    /// Reserves the next slot and returns how long to wait for it.
    pub fn reserve(&self) -> Duration {
        let now = self.start.elapsed().as_secs_f64();
        let mut tat = match self.tat.lock() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        let send_at = now.max(*tat - self.tau);
        *tat = tat.max(now) + self.interval;
        Duration::from_secs_f64((send_at - now).max(0.0))
    }

    /// Waits for the next slot.
    pub async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_spaces_requests() {
        let r = RateLimiter::new(60, Some(3)).expect("should succeed");
        let waits: Vec<f64> = (0..6).map(|_| r.reserve().as_secs_f64()).collect();
        for w in &waits[..3] {
            assert!(*w < 0.05, "{waits:?}");
        }
        for (i, w) in waits[3..].iter().enumerate() {
            let want = (i + 1) as f64;
            assert!((w - want).abs() < 0.05, "{waits:?}");
        }
        assert!(RateLimiter::new(0, None).is_none());
    }
}
