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
        self.reserve_marked().0
    }

    /// Reserves the next slot: the wait, and the bucket's state right after it.
    fn reserve_marked(&self) -> (Duration, f64) {
        let now = self.start.elapsed().as_secs_f64();
        let mut tat = match self.tat.lock() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        let send_at = now.max(*tat - self.tau);
        *tat = tat.max(now) + self.interval;
        (Duration::from_secs_f64((send_at - now).max(0.0)), *tat)
    }

    /// Gives back a reservation whose wait was abandoned (cancelled or timed out), so
    /// later callers do not wait for a request that never went out. Only the latest
    /// reservation is given back: refunding one in the middle would let two later
    /// requests share a slot.
    fn refund(&self, mark: f64) {
        let now = self.start.elapsed().as_secs_f64();
        let mut tat = match self.tat.lock() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        if *tat == mark {
            *tat = (*tat - self.interval).max(now);
        }
    }

    /// Waits for the next slot; dropped while waiting, it gives the slot back.
    pub async fn acquire(&self) {
        let (wait, mark) = self.reserve_marked();
        if wait.is_zero() {
            return;
        }
        let mut refund = Refund {
            limiter: self,
            mark,
            armed: true,
        };
        tokio::time::sleep(wait).await;
        refund.armed = false;
    }
}

/// Refunds a reservation unless disarmed (the wait completed).
struct Refund<'a> {
    limiter: &'a RateLimiter,
    mark: f64,
    armed: bool,
}

impl Drop for Refund<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.limiter.refund(self.mark);
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
            assert!(*w < 0.25, "{waits:?}");
        }
        for (i, w) in waits[3..].iter().enumerate() {
            let want = (i + 1) as f64;
            assert!((w - want).abs() < 0.25, "{waits:?}");
        }
        assert!(RateLimiter::new(0, None).is_none());
    }

    #[tokio::test]
    async fn abandoned_waits_give_their_slots_back() {
        let r = RateLimiter::new(60, Some(1)).expect("limiter");
        r.acquire().await;
        for _ in 0..10 {
            let waited = tokio::time::timeout(Duration::from_millis(1), r.acquire()).await;
            assert!(waited.is_err(), "a slot a second: the wait is cut short");
        }
        let next = r.reserve().as_secs_f64();
        assert!(next <= 1.0, "ten abandoned waits left {next:.2}s to wait");
    }

    #[tokio::test]
    async fn only_the_latest_reservation_is_given_back() {
        let r = RateLimiter::new(60, Some(1)).expect("limiter");
        let _a = r.reserve(); // now
        let (_b, b_mark) = r.reserve_marked(); // in 1 s
        let _c = r.reserve(); // in 2 s
        r.refund(b_mark); // B gave up, but C is behind it: nothing moves
        let d = r.reserve().as_secs_f64();
        assert!((d - 3.0).abs() < 0.25, "D must come after C: {d:.2}");
    }
}
