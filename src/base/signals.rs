//! Stop signals: SIGINT, SIGTERM and SIGHUP all mean "stop and leave the run
//! resumable". The first one asks the engine to interrupt (dispatch stops, in-flight
//! invocations end cancelled, the run ends `interrupted`); a second one within
//! [`FORCE_WINDOW`] exits at once — the database stays consistent (every commit is
//! atomic) and the run is resumed like a crashed one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// A second stop signal this soon after the first exits at once.
pub const FORCE_WINDOW: Duration = Duration::from_secs(2);

/// Where stop signals go: every receiver [`stop_signals`] handed out; a signal that
/// arrives before the first one is kept for it.
struct Hub {
    receivers: Vec<mpsc::UnboundedSender<&'static str>>,
    early: Vec<&'static str>,
}

static HUB: Mutex<Option<Hub>> = Mutex::new(None);

/// The last stop signal seen by the handler itself (0 for none), set the moment it
/// arrives: the async listener that hands signals out may run much later on a busy
/// machine, and a run must not begin after a signal that came before it.
static CAUGHT: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

/// The signal names by the number [`CAUGHT`] holds.
const NAMES: [&str; 4] = ["", "SIGINT", "SIGTERM", "SIGHUP"];

fn hub() -> std::sync::MutexGuard<'static, Option<Hub>> {
    match HUB.lock() {
        Ok(h) => h,
        Err(p) => p.into_inner(),
    }
}

/// Takes over SIGINT, SIGTERM and SIGHUP for the rest of the process (once; later calls
/// do nothing). A command that stops gracefully calls this first thing, before it opens
/// the database, so a signal that arrives before it is ready is kept for it rather than
/// killing it half-way (a lease taken for a run not created yet). Needs a Tokio runtime.
pub fn install() {
    let mut h = hub();
    if h.is_some() {
        return;
    }
    *h = Some(Hub {
        receivers: Vec::new(),
        early: Vec::new(),
    });
    drop(h);
    #[cfg(unix)]
    {
        let caught = CAUGHT.get_or_init(|| Arc::new(AtomicUsize::new(0)));
        for (n, sig) in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ]
        .into_iter()
        .enumerate()
        {
            if let Err(e) = signal_hook::flag::register_usize(sig, Arc::clone(caught), n + 1) {
                tracing::warn!("cannot flag signal {sig}: {e}");
            }
        }
    }
    #[cfg(unix)]
    {
        use tokio::signal::unix::SignalKind;
        for (kind, name) in [
            (SignalKind::interrupt(), "SIGINT"),
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::hangup(), "SIGHUP"),
        ] {
            listen(kind, name);
        }
    }
    #[cfg(not(unix))]
    {
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                deliver("Ctrl-C");
            }
        });
    }
}

/// Listens for signal `kind` (named `name`) in a task of its own, handing each one on.
#[cfg(unix)]
fn listen(kind: tokio::signal::unix::SignalKind, name: &'static str) {
    match tokio::signal::unix::signal(kind) {
        Ok(mut s) => {
            tokio::spawn(async move {
                while s.recv().await.is_some() {
                    deliver(name);
                }
            });
        }
        Err(e) => tracing::warn!("cannot listen for {name}: {e}"),
    }
}

/// Hands a signal to every receiver, or keeps it for the first one.
fn deliver(name: &'static str) {
    let mut h = hub();
    let Some(h) = h.as_mut() else { return };
    h.receivers.retain(|r| !r.is_closed());
    if h.receivers.is_empty() {
        h.early.push(name);
    } else {
        for r in &h.receivers {
            let _ = r.send(name);
        }
        // A receiver has it now: later start-up checks of this process must not
        // mistake a signal that was already handled for a new one.
        forget_caught();
    }
}

/// Clears the handler's flag once a receiver holds the signal.
fn forget_caught() {
    if let Some(c) = CAUGHT.get() {
        c.store(0, Ordering::SeqCst);
    }
}

/// A stop signal that arrived before anyone listened, if any (it stays kept for the
/// first receiver).
pub fn pending() -> Option<&'static str> {
    let early = hub().as_ref().and_then(|h| h.early.first().copied());
    early.or_else(caught)
}

/// The last stop signal the handler saw, however late its listener runs.
fn caught() -> Option<&'static str> {
    let n = CAUGHT.get()?.load(Ordering::SeqCst);
    NAMES.get(n).copied().filter(|s| !s.is_empty())
}

/// A stop signal arrived before the run was created: nothing of it was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}: stopped before the run was created; nothing of it was written")]
pub struct StoppedBeforeStart(pub &'static str);

/// Fails with [`StoppedBeforeStart`] when a stop signal is waiting: called before each
/// step that would leave something of a run behind (its lease, its row).
pub fn stop_if_signalled() -> Result<(), StoppedBeforeStart> {
    match pending() {
        Some(name) => Err(StoppedBeforeStart(name)),
        None => Ok(()),
    }
}

/// A receiver of stop signals by name (`SIGINT`, `SIGTERM`, `SIGHUP`), installing the
/// handlers if [`install`] was not called; the first receiver also gets the signals that
/// arrived before it. The channel never closes.
pub fn stop_signals() -> mpsc::UnboundedReceiver<&'static str> {
    install();
    let (tx, rx) = mpsc::unbounded_channel();
    let mut h = hub();
    if let Some(h) = h.as_mut() {
        // Signals that came while the command started up count as one stop: their
        // times are gone, and two of them at once must not read as "again, at once".
        if let Some(&name) = h.early.first() {
            let _ = tx.send(name);
        }
        if !h.early.is_empty() {
            forget_caught();
        }
        h.early.clear();
        h.receivers.push(tx.clone());
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
