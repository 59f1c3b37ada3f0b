//! The status line a headless command prints while model calls are in flight, so a slow
//! model is never silent: calls in flight, tokens streamed, time so far, the slowest call.

use std::time::{Duration, Instant};

use crate::data::provider::meter::{status_line, CallMeter};

/// How often the line is printed unless `PLEXUS_STATUS_EVERY` (seconds) says otherwise.
pub const STATUS_EVERY: Duration = Duration::from_secs(10);

/// The status line's period: `PLEXUS_STATUS_EVERY` seconds when it holds a number from
/// 0.1 to 3600, else [`STATUS_EVERY`].
pub fn status_every() -> Duration {
    std::env::var("PLEXUS_STATUS_EVERY")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| (0.1..=3600.0).contains(s))
        .map(Duration::from_secs_f64)
        .unwrap_or(STATUS_EVERY)
}

/// Prints the status line on stderr every period while calls are in flight or waiting
/// to be tried again; stops when dropped.
pub struct StatusTicker(tokio::task::JoinHandle<()>);

impl StatusTicker {
    /// Starts the ticker (the meter counts streamed tokens from now on).
    pub fn start() -> StatusTicker {
        let meter = CallMeter::global();
        meter.watch();
        let every = status_every();
        let began = Instant::now();
        StatusTicker(tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let r = meter.read();
                if r.in_flight + r.waiting > 0 {
                    crate::errln!("{}", status_line(&r, began.elapsed()));
                }
            }
        }))
    }
}

impl Drop for StatusTicker {
    fn drop(&mut self) {
        self.0.abort();
    }
}
