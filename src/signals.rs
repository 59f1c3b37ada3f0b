//! Stop signals: SIGINT, SIGTERM and SIGHUP all mean "stop and leave the run
//! resumable". The first one asks the engine to interrupt (dispatch stops, in-flight
//! invocations end cancelled, the run ends `interrupted`); a second one within
//! [`FORCE_WINDOW`] exits at once — the database stays consistent (every commit is
//! atomic) and the run is resumed like a crashed one.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// A second stop signal this soon after the first exits at once.
pub const FORCE_WINDOW: Duration = Duration::from_secs(2);

/// A receiver of stop signals by name (`SIGINT`, `SIGTERM`, `SIGHUP`). The channel
/// never closes.
pub fn stop_signals() -> mpsc::UnboundedReceiver<&'static str> {
    let (tx, rx) = mpsc::unbounded_channel();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        for (kind, name) in [
            (SignalKind::interrupt(), "SIGINT"),
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::hangup(), "SIGHUP"),
        ] {
            match signal(kind) {
                Ok(mut s) => {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        while s.recv().await.is_some() {
                            if tx.send(name).is_err() {
                                break;
                            }
                        }
                    });
                }
                Err(e) => tracing::warn!("cannot listen for {name}: {e}"),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let tx = tx.clone();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                if tx.send("Ctrl-C").is_err() {
                    break;
                }
            }
        });
    }
    // Keep one sender alive so the channel never reports closed.
    std::mem::forget(tx);
    rx
}

/// What to do about one more stop signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The first: stop gracefully.
    Stop,
    /// Another within the window: exit now.
    ExitNow,
    /// Another, later: still stopping.
    StillStopping,
}

/// Counts stop signals and decides what each one means.
#[derive(Debug, Default)]
pub struct SignalCount {
    last: Option<Instant>,
}

impl SignalCount {
    /// One more signal, arrived at `now`.
    pub fn arrived(&mut self, now: Instant) -> Verdict {
        let verdict = match self.last {
            None => Verdict::Stop,
            Some(t) if now.duration_since(t) <= FORCE_WINDOW => Verdict::ExitNow,
            Some(_) => Verdict::StillStopping,
        };
        self.last = Some(now);
        verdict
    }
}

/// Exits at once with `code` after a second signal, saying how to resume.
pub fn exit_now(name: &str, run_id: &str, code: u8) -> ! {
    crate::errln!("{name} again: exiting at once; the run stays resumable: plexus resume {run_id}");
    std::process::exit(i32::from(code));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_signal_within_the_window_exits_now() {
        let t0 = Instant::now();
        let mut c = SignalCount::default();
        assert_eq!(c.arrived(t0), Verdict::Stop);
        assert_eq!(
            c.arrived(t0 + Duration::from_millis(1500)),
            Verdict::ExitNow
        );
        let mut c = SignalCount::default();
        c.arrived(t0);
        assert_eq!(
            c.arrived(t0 + Duration::from_secs(3)),
            Verdict::StillStopping
        );
        assert_eq!(
            c.arrived(t0 + Duration::from_millis(3500)),
            Verdict::ExitNow
        );
    }
}
