//! The run's own clock: time spent running, without its pauses and without the gap
//! between a stop (a quit, a crash) and the resume that continued it.

use crate::model::event::EngineEvent;

/// Active time of a run, kept from its events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunClock {
    /// Milliseconds of closed running intervals.
    pub active_ms: i64,
    /// Start of the running interval still open.
    pub running_since: Option<i64>,
    /// When the run was paused, while it is.
    pub paused_since: Option<i64>,
}

impl RunClock {
    /// Follows one event at time `ts`.
    pub fn on_event(&mut self, ev: &EngineEvent, ts: i64) {
        match ev {
            EngineEvent::RunStarted(_) => self.start(ts),
            EngineEvent::RunResumed(_) | EngineEvent::RunUnpaused(_) => self.run(ts),
            EngineEvent::RunPaused(_) => self.pause(ts),
            EngineEvent::RunFinished(_) => self.stop(ts),
            _ => {}
        }
    }

    /// The run started at `ts`.
    pub fn start(&mut self, ts: i64) {
        *self = RunClock {
            running_since: Some(ts),
            ..RunClock::default()
        };
    }

    /// The run runs again from `ts` (unpaused, or resumed after a stop).
    pub fn run(&mut self, ts: i64) {
        self.close(ts);
        self.running_since = Some(ts);
        self.paused_since = None;
    }

    /// The run was paused at `ts`.
    pub fn pause(&mut self, ts: i64) {
        self.close(ts);
        self.paused_since = Some(ts);
    }

    /// The run stopped at `ts` (finished, cancelled, interrupted).
    pub fn stop(&mut self, ts: i64) {
        self.close(ts);
        self.paused_since = None;
    }

    fn close(&mut self, ts: i64) {
        if let Some(s) = self.running_since.take() {
            self.active_ms += (ts - s).max(0);
        }
    }

    /// Active time at `now` (ms).
    pub fn active_at(&self, now: i64) -> i64 {
        self.active_ms + self.running_since.map_or(0, |s| (now - s).max(0))
    }

    /// How long the run has been paused at `now`, while it is.
    pub fn paused_for(&self, now: i64) -> Option<i64> {
        self.paused_since.map(|p| (now - p).max(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_and_stops_do_not_count() {
        let mut c = RunClock::default();
        c.start(1_000);
        assert_eq!(c.active_at(4_000), 3_000);
        c.pause(4_000);
        assert_eq!(c.active_at(9_000), 3_000, "a pause does not count");
        assert_eq!(
            c.paused_for(9_000),
            Some(5_000),
            "but how long it lasts is known"
        );
        c.run(9_000);
        c.stop(10_000);
        assert_eq!(
            c.active_at(60_000),
            4_000,
            "the gap after a stop does not count"
        );
        assert_eq!(c.paused_for(60_000), None);
        c.run(60_000);
        assert_eq!(c.active_at(61_000), 5_000, "a resume counts again");
    }
}

/// Quiet time after which a running invocation counts as stalled (ms).
pub const STALL_AFTER_MS: i64 = 10_000;

/// What a running invocation is doing at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    /// Time since it started (ms).
    pub running_ms: i64,
    /// Time since it last streamed text, or since it started when it has not (ms).
    pub quiet_ms: i64,
    /// Time left before its time limit (ms; `None` without a limit).
    pub timeout_left_ms: Option<i64>,
}

impl Activity {
    /// Whether it has been quiet for [`STALL_AFTER_MS`] or more.
    pub fn stalled(&self) -> bool {
        self.quiet_ms >= STALL_AFTER_MS
    }

    /// `no output for 40 s · timeout in 110 s`, or `running 12 s · output 1 s ago`.
    pub fn describe(&self) -> String {
        self.parts().join(" · ")
    }

    /// What [`Activity::describe`] joins, most important first: what it is doing, then
    /// (when running) since when it streamed, then the time left before its limit. A
    /// narrow pane leaves out the last ones whole rather than cutting a figure.
    pub fn parts(&self) -> Vec<String> {
        let secs = |ms: i64| (ms.max(0) + 500) / 1000;
        let mut parts = if self.stalled() {
            vec![format!("no output for {} s", secs(self.quiet_ms))]
        } else {
            vec![
                format!("running {} s", secs(self.running_ms)),
                format!("output {} s ago", secs(self.quiet_ms)),
            ]
        };
        if let Some(left) = self.timeout_left_ms {
            parts.push(format!("timeout in {} s", secs(left)));
        }
        parts
    }

    /// How long it has been quiet, short and whole, longest form first: `45s`;
    /// `2m05s`, `2m`; `1h02m`, `1h`.
    pub fn quiet_forms(&self) -> Vec<String> {
        let s = self.quiet_ms.max(0) / 1000;
        match s {
            0..=59 => vec![format!("{s}s")],
            60..=3599 => vec![format!("{}m{:02}s", s / 60, s % 60), format!("{}m", s / 60)],
            _ => vec![
                format!("{}h{:02}m", s / 3600, s / 60 % 60),
                format!("{}h", s / 3600),
            ],
        }
    }
}

impl crate::model::state::TaskView {
    /// Its running invocation's activity at `now`; `None` when it is not running.
    pub fn activity(&self, now: i64) -> Option<Activity> {
        if self.status != crate::model::event::TaskStatus::Running {
            return None;
        }
        let since = self.running_since?;
        let last = self.last_output_ts.unwrap_or(since);
        Some(Activity {
            running_ms: (now - since).max(0),
            quiet_ms: (now - last).max(0),
            timeout_left_ms: (self.timeout_ms > 0)
                .then(|| (since + self.timeout_ms as i64 - now).max(0)),
        })
    }
}
