//! The calls this process has in flight, as the one call path sees them: since when,
//! for whom, how many tokens have streamed. A headless command prints a status line from
//! it every few seconds and the TUI shows it, so a slow model is never silent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// One call in flight.
#[derive(Debug)]
struct Live {
    /// Who is calling: the task, or the debate role, or the judge.
    label: String,
    started: Instant,
    tokens: Arc<AtomicU64>,
    /// `Some`: not a call but a wait before one is tried again, until then.
    retry_at: Option<Instant>,
}

/// Every call of this process in flight, and totals of the calls that ended.
#[derive(Debug, Default)]
pub struct CallMeter {
    live: Mutex<HashMap<u64, Live>>,
    next: AtomicU64,
    /// Tokens streamed by calls that ended.
    ended_tokens: AtomicU64,
    /// Calls that ended with an answer.
    answered: AtomicU64,
    /// Of those, the ones whose server reported its usage.
    reported: AtomicU64,
    /// Something shows the meter (a status line, a screen): streamed tokens are counted.
    watched: std::sync::atomic::AtomicBool,
}

/// What the meter shows at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reading {
    /// Calls in flight.
    pub in_flight: usize,
    /// Tokens streamed, by the calls in flight and the ones that ended (plexus's count).
    pub tokens: u64,
    /// The call in flight the longest: who, and for how long.
    pub slowest: Option<(String, Duration)>,
    /// Calls waiting to be tried again (a rate limit, a backoff).
    pub waiting: usize,
    /// The wait that ends first: whose, and how long is left.
    pub next_retry: Option<(String, Duration)>,
    /// Calls answered so far.
    pub answered: u64,
    /// Of those, the ones whose server reported its usage.
    pub reported: u64,
}

impl Reading {
    /// Whether every answered call's tokens are plexus's own count: the server reported
    /// no usage (`false` before any call is answered).
    pub fn own_count_only(&self) -> bool {
        self.answered > 0 && self.reported == 0
    }
}

/// A call on the meter; it leaves the meter when dropped.
pub struct Entry {
    id: u64,
    tokens: Arc<AtomicU64>,
    meter: &'static CallMeter,
}

impl Entry {
    /// `n` more tokens streamed.
    pub fn streamed(&self, n: u64) {
        self.tokens.fetch_add(n, Ordering::Relaxed);
    }

    /// The call was answered; `reported`: its server said how many tokens it used.
    pub fn answered(&self, reported: bool) {
        self.meter.answered.fetch_add(1, Ordering::Relaxed);
        if reported {
            self.meter.reported.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let m = self.meter;
        if let Ok(mut live) = m.live.lock() {
            live.remove(&self.id);
        }
        m.ended_tokens
            .fetch_add(self.tokens.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

impl CallMeter {
    /// The process's meter.
    pub fn global() -> &'static CallMeter {
        static METER: OnceLock<CallMeter> = OnceLock::new();
        METER.get_or_init(CallMeter::default)
    }

    /// From now on something shows the meter, so calls count their streamed tokens.
    pub fn watch(&self) {
        self.watched.store(true, Ordering::Relaxed);
    }

    /// Whether something shows the meter.
    pub fn watched(&self) -> bool {
        self.watched.load(Ordering::Relaxed)
    }

    /// A call for `label` starts now.
    pub fn start(&'static self, label: String) -> Entry {
        self.enter(label, None)
    }

    /// A call for `label` waits `wait` before it is tried again.
    pub fn wait(&'static self, label: String, wait: Duration) -> Entry {
        self.enter(label, Some(Instant::now() + wait))
    }

    fn enter(&'static self, label: String, retry_at: Option<Instant>) -> Entry {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let tokens = Arc::new(AtomicU64::new(0));
        if let Ok(mut live) = self.live.lock() {
            live.insert(
                id,
                Live {
                    label,
                    started: Instant::now(),
                    tokens: tokens.clone(),
                    retry_at,
                },
            );
        }
        Entry {
            id,
            tokens,
            meter: self,
        }
    }

    /// What the meter shows now.
    pub fn read(&self) -> Reading {
        let mut r = Reading {
            tokens: self.ended_tokens.load(Ordering::Relaxed),
            answered: self.answered.load(Ordering::Relaxed),
            reported: self.reported.load(Ordering::Relaxed),
            ..Reading::default()
        };
        if let Ok(live) = self.live.lock() {
            let now = Instant::now();
            for l in live.values() {
                r.tokens += l.tokens.load(Ordering::Relaxed);
                if let Some(at) = l.retry_at {
                    r.waiting += 1;
                    let left = at.saturating_duration_since(now);
                    if r.next_retry.as_ref().is_none_or(|(_, d)| left < *d) {
                        r.next_retry = Some((l.label.clone(), left));
                    }
                    continue;
                }
                r.in_flight += 1;
                let age = l.started.elapsed();
                if r.slowest.as_ref().is_none_or(|(_, d)| age > *d) {
                    r.slowest = Some((l.label.clone(), age));
                }
            }
        }
        r
    }
}

/// A short span of time: `9 s`, `4 m 05 s`, `1 h 02 m`.
pub fn span(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} m {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} m", s / 3600, s % 3600 / 60),
    }
}

/// The status line of `r`, `elapsed` into the work: calls in flight, tokens streamed,
/// the time so far, the slowest call.
pub fn status_line(r: &Reading, elapsed: Duration) -> String {
    let mut line = format!(
        "status: {} call(s) in flight · {} token(s) streamed{} · {} elapsed",
        r.in_flight,
        r.tokens,
        if r.own_count_only() {
            " (own count only)"
        } else {
            ""
        },
        span(elapsed)
    );
    if let Some((who, age)) = &r.slowest {
        line.push_str(&format!(
            " · slowest {} for {}",
            crate::base::text::sanitize::sanitize(who),
            span(*age)
        ));
    }
    if let Some((who, left)) = &r.next_retry {
        line.push_str(&format!(
            " · {} waiting to retry (next: {} in {})",
            r.waiting,
            crate::base::text::sanitize::sanitize(who),
            span(*left)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_shows_while_in_flight_and_its_tokens_stay_counted_after() {
        let m: &'static CallMeter = Box::leak(Box::default());
        let a = m.start("task T1".into());
        let b = m.start("task T2".into());
        a.streamed(40);
        b.streamed(2);
        let r = m.read();
        assert_eq!((r.in_flight, r.tokens), (2, 42));
        assert!(r.slowest.as_ref().is_some_and(|(w, _)| w == "task T1"));
        a.answered(false);
        drop(a);
        let r = m.read();
        assert_eq!((r.in_flight, r.tokens, r.answered), (1, 42, 1));
        assert!(r.own_count_only());
        let line = status_line(&r, Duration::from_secs(75));
        assert!(line.contains("1 call(s) in flight"), "{line}");
        assert!(
            line.contains("42 token(s) streamed (own count only)"),
            "{line}"
        );
        assert!(line.contains("1 m 15 s elapsed"), "{line}");
        assert!(line.contains("slowest task T2"), "{line}");
        b.answered(true);
        assert!(!m.read().own_count_only());
        drop(b);
        let w = m.wait("turn critic".into(), Duration::from_secs(30));
        let r = m.read();
        assert_eq!((r.in_flight, r.waiting), (0, 1));
        let line = status_line(&r, Duration::from_secs(5));
        assert!(
            line.contains("1 waiting to retry (next: turn critic in 29 s)"),
            "{line}"
        );
        drop(w);
        assert_eq!(m.read().waiting, 0);
    }
}
