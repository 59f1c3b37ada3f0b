//! The player thread: owns a [`ReplayLog`] (and so a read-only connection), indexes the
//! log in the background a page at a time, answers seeks (only the newest of several
//! waiting) and page requests, and while another process writes the run, looks for new
//! events every [`FOLLOW_EVERY`]. Answers go back to the UI as messages.

use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::log::ReplayLog;
use super::marks::Marks;
use crate::model::event::Envelope;
use crate::model::state::RunState;

/// How often a followed run's log is looked at for new events.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(100);

/// Most events sent in one answer to a page request.
pub const MAX_PAGE: u64 = 8192;

/// A request to the player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// The state after event `to`; answered with [`PlayerMsg::Seeked`] carrying `token`.
    Seek {
        /// Target event (0 = before the first).
        to: u64,
        /// Names the request; only the newest seek waiting is answered.
        token: u64,
    },
    /// Events from `from` on (at most [`MAX_PAGE`]), for playing forward.
    Events {
        /// First event wanted.
        from: u64,
    },
    /// A task's streamed text as it was after event `upto`.
    Output {
        /// Task index.
        task: usize,
        /// The position it is for.
        upto: u64,
    },
}

/// What the player tells the UI.
#[derive(Debug)]
pub enum PlayerMsg {
    /// The run was opened: its id and the events in its log.
    Opened {
        /// Run id.
        run_id: String,
        /// Events in the log.
        total: u64,
        /// Whether a live process is writing it.
        live: bool,
    },
    /// More of the log was read, or the log grew.
    Progress {
        /// Events in the log.
        total: u64,
        /// Events indexed.
        indexed: u64,
        /// Whether a live process is writing it.
        live: bool,
    },
    /// The state after event `position`.
    Seeked {
        /// The seek answered.
        token: u64,
        /// Its event.
        position: u64,
        /// The state.
        state: Box<RunState>,
    },
    /// Events `from..=to` in order (an event that does not decode is left out but its
    /// number is covered).
    Events {
        /// First event's number.
        from: u64,
        /// Last event's number.
        to: u64,
        /// The events.
        events: Vec<Arc<Envelope>>,
    },
    /// A task's text after event `upto`.
    Output {
        /// Task index.
        task: usize,
        /// The position it is for.
        upto: u64,
        /// The text.
        text: crate::model::state::OutputBuffer,
    },
    /// The run could not be opened or read.
    Failed(String),
}

/// Handle to a player thread; dropping it stops the thread (also in the middle of a
/// long seek).
pub struct Player {
    tx: std_mpsc::Sender<Command>,
    /// Times and jump targets of the events indexed so far.
    pub marks: Arc<RwLock<Marks>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Player {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Player {
    /// Opens `run` in the database at `db` on a thread of its own; its answers go to
    /// `out`, which says whether anyone still listens (the thread stops when not).
    pub fn spawn(
        db: PathBuf,
        run: String,
        out: impl Fn(PlayerMsg) -> bool + Send + 'static,
    ) -> Player {
        let (tx, rx) = std_mpsc::channel::<Command>();
        let marks = Arc::new(RwLock::new(Marks::default()));
        let shared = marks.clone();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop_flag = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("plexus-replay".into())
            .spawn(move || {
                let log = match ReplayLog::open_sharing(&db, &run, shared) {
                    Ok(log) => log.with_stop(stop_flag),
                    Err(e) => {
                        out(PlayerMsg::Failed(format!(
                            "cannot open run {run} in {}: {e}",
                            db.display()
                        )));
                        return;
                    }
                };
                serve(log, rx, out);
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the replay thread: {e}");
        }
        Player { tx, marks, stop }
    }

    /// Sends a request (answers arrive as [`PlayerMsg`]s).
    pub fn ask(&self, c: Command) {
        let _ = self.tx.send(c);
    }
}

fn serve(mut log: ReplayLog, rx: std_mpsc::Receiver<Command>, send: impl Fn(PlayerMsg) -> bool) {
    // A failed send means the UI went away: stop.
    let out = |m: PlayerMsg| -> Result<(), ()> {
        if send(m) {
            Ok(())
        } else {
            Err(())
        }
    };
    let mut live = log.live().unwrap_or(false);
    let _ = out(PlayerMsg::Opened {
        run_id: log.run_id().to_string(),
        total: log.total(),
        live,
    });
    let mut last_look = Instant::now();
    let mut waiting: Vec<Command> = Vec::new();
    let mut told = (log.total(), log.indexed(), live);
    loop {
        // Tell the UI how far the log is read and how long it is, when that changed
        // (a seek reads ahead too).
        let now = (log.total(), log.indexed(), live);
        if now != told {
            told = now;
            if out(PlayerMsg::Progress {
                total: now.0,
                indexed: now.1,
                live: now.2,
            })
            .is_err()
            {
                return;
            }
        }
        // Take what was asked; wait only when there is nothing to index.
        let caught_up = log.indexed() >= log.total();
        let first = if !waiting.is_empty() {
            None
        } else if caught_up && !live {
            match rx.recv() {
                Ok(c) => Some(c),
                Err(_) => return,
            }
        } else if caught_up {
            match rx.recv_timeout(FOLLOW_EVERY.saturating_sub(last_look.elapsed())) {
                Ok(c) => Some(c),
                Err(std_mpsc::RecvTimeoutError::Timeout) => None,
                Err(std_mpsc::RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match rx.try_recv() {
                Ok(c) => Some(c),
                Err(std_mpsc::TryRecvError::Empty) => None,
                Err(std_mpsc::TryRecvError::Disconnected) => return,
            }
        };
        waiting.extend(first);
        waiting.extend(rx.try_iter());
        if !waiting.is_empty() {
            let answers = answer(&mut log, &mut waiting);
            for a in answers {
                if out(a).is_err() {
                    return;
                }
            }
        }
        if live && last_look.elapsed() >= FOLLOW_EVERY {
            last_look = Instant::now();
            let before = log.total();
            match log.refresh() {
                // Nothing new: is anyone still writing?
                Ok(total) if total == before && !log.live().unwrap_or(false) => {
                    // One last look, for what was committed just before it ended.
                    let _ = log.refresh();
                    live = false;
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("replay: cannot look for new events: {e}"),
            }
        }
        if log.indexed() < log.total() {
            match log.index_page() {
                Ok(_) => {}
                Err(e) => {
                    let _ = out(PlayerMsg::Failed(format!("cannot read the log: {e}")));
                    return;
                }
            }
        }
    }
}

/// Answers the waiting requests: the newest seek only, and every page request.
fn answer(log: &mut ReplayLog, waiting: &mut Vec<Command>) -> Vec<PlayerMsg> {
    let newest_seek = waiting
        .iter()
        .rposition(|c| matches!(c, Command::Seek { .. }));
    let mut out = Vec::new();
    for (i, c) in waiting.drain(..).enumerate() {
        match c {
            Command::Seek { to, token } => {
                if Some(i) != newest_seek {
                    continue;
                }
                match log.seek(to) {
                    Ok(state) => out.push(PlayerMsg::Seeked {
                        token,
                        position: to.min(log.total()),
                        state: Box::new(state),
                    }),
                    Err(e) => out.push(PlayerMsg::Failed(format!("cannot seek: {e}"))),
                }
            }
            Command::Events { from } => {
                let to = from.saturating_add(MAX_PAGE - 1).min(log.total());
                if to < from {
                    continue;
                }
                match log.events(from, to) {
                    Ok(events) => out.push(PlayerMsg::Events {
                        from,
                        to,
                        events: events.into_iter().map(Arc::new).collect(),
                    }),
                    Err(e) => out.push(PlayerMsg::Failed(format!("cannot read events: {e}"))),
                }
            }
            Command::Output { task, upto } => match log.task_output(task, upto) {
                Ok(text) => out.push(PlayerMsg::Output { task, upto, text }),
                Err(e) => tracing::warn!("replay: cannot read task {task}'s text back: {e}"),
            },
        }
    }
    out
}
