//! Keeping the write-ahead log bounded while a run writes without pause.
//!
//! SQLite appends every commit to the `-wal` file and only starts writing it from the
//! beginning again (a *restart*) when a checkpoint has copied every frame into the
//! database and no reader still reads from the log. A background checkpoint alone never
//! gets there while the writer keeps appending, and the file grew to gigabytes. So:
//! - a checkpoint thread copies frames into the database every [`CHECKPOINT_EVERY`]
//!   (PASSIVE: it never waits for, nor blocks, the writer or a reader);
//! - the writer counts the frames after each commit (SQLite's WAL hook); half way to
//!   [`RESTART_FRAMES`] it nudges the checkpoint thread, and past it, once that thread
//!   has copied all but [`CATCH_UP_FRAMES`], it copies the rest itself right after its
//!   commit, when nothing new can arrive, so the next write starts the log over (the
//!   writer's share of the copying stays small); readers that began after the copy read
//!   the database file and do not hold the restart up;
//! - should readers keep the log from starting over until it holds [`HARD_FACTOR`] times
//!   that, the writer waits for them to finish their current statement, at most
//!   [`READER_WAIT`] (and, if that was not enough, not again for [`HARD_BACKOFF`]);
//! - `journal_size_limit` trims the file back to [`KEEP_BYTES`] when the log restarts.
//!
//! A reader that holds one read transaction open for long (a `sqlite3` shell inside
//! `BEGIN`) keeps the frames it may read; plexus's own readers read in short statements.

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::{open_connection, StoreError};

/// Interval between background checkpoints.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// Frames in the log after a commit past which the writer completes a checkpoint itself
/// (1,024 frames of 16 KiB pages: 16 MiB).
pub const RESTART_FRAMES: u32 = 1024;

/// The size the log file is trimmed back to when it starts over.
pub const KEEP_BYTES: i64 = 16 * 1024 * 1024;

thread_local! {
    /// Frames in the log after this thread's last commit, from the WAL hook.
    static FRAMES: Cell<u32> = const { Cell::new(0) };
}

fn note_frames(_: &rusqlite::hooks::Wal, frames: std::os::raw::c_int) -> rusqlite::Result<()> {
    FRAMES.with(|f| f.set(u32::try_from(frames).unwrap_or(0)));
    Ok(())
}

/// Sets the writer's connection up: no automatic checkpoints (they would run inside the
/// writer's commits), the frame count after each commit noted, the file trimmed on
/// restart.
pub fn prepare_writer(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    // After the pragma, which installs a hook of its own.
    conn.wal_hook(Some(note_frames));
    conn.query_row(
        &format!("PRAGMA journal_size_limit = {KEEP_BYTES}"),
        [],
        |_| Ok(()),
    )?;
    Ok(())
}

/// Frames in the log after the calling thread's last commit.
pub fn frames_after_commit() -> u32 {
    FRAMES.with(Cell::get)
}

/// What a writer's own checkpoint did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpointed {
    /// Frames in the log.
    pub log: i64,
    /// Frames copied into the database (all of them: the next write restarts the log).
    pub copied: i64,
}

/// How many times [`RESTART_FRAMES`] the log may hold before the writer waits (at most
/// [`READER_WAIT`]) for readers to leave it.
pub const HARD_FACTOR: u32 = 2;

/// Longest the writer waits for readers to leave the log once it holds
/// [`HARD_FACTOR`] times its threshold; a reader that stays longer only delays the
/// restart to a later commit, it never stops the run.
pub const READER_WAIT: Duration = Duration::from_millis(250);

/// Frames the writer's own checkpoint may find left to copy: more, and it leaves the copy
/// to the checkpoint thread (nudged again) rather than hold its writes up for it.
pub const CATCH_UP_FRAMES: u32 = 256;

/// The writer's side of keeping the log bounded: its checkpoint thread, nudged half way
/// to the threshold, and the writer's own checkpoint at the threshold once that thread
/// has copied nearly everything (or at once at [`HARD_FACTOR`] times the threshold).
pub struct WalBound {
    checkpointer: Checkpointer,
    nudged: bool,
    /// After a wait for readers that did not restart the log: no other before then, so a
    /// reader that stays (a `sqlite3` shell inside `BEGIN`) does not slow every commit.
    hard_again: Option<std::time::Instant>,
}

/// How long after a wait for readers that did not restart the log the writer waits
/// again.
pub const HARD_BACKOFF: Duration = Duration::from_secs(2);

impl WalBound {
    /// Starts the checkpoint thread of the database at `path`.
    pub fn start(path: &Path) -> Result<WalBound, StoreError> {
        Ok(WalBound {
            checkpointer: Checkpointer::start(path)?,
            nudged: false,
            hard_again: None,
        })
    }

    /// Run on the writer's connection right after a commit, the log holding `frames`;
    /// `limit` is the threshold. `Some` when the writer checkpointed itself: without
    /// waiting for anyone (PASSIVE), or, at [`HARD_FACTOR`] times the limit, waiting up
    /// to [`READER_WAIT`] for the readers still reading the log (RESTART).
    pub fn after_commit(
        &mut self,
        conn: &Connection,
        frames: u32,
        limit: u32,
    ) -> Result<Option<Checkpointed>, StoreError> {
        if frames < limit / 2 {
            self.nudged = false;
        } else if !self.nudged {
            self.checkpointer.nudge();
            self.nudged = true;
        }
        if frames < limit {
            return Ok(None);
        }
        let backing_off = self
            .hard_again
            .is_some_and(|t| std::time::Instant::now() < t);
        if frames < limit.saturating_mul(HARD_FACTOR) || backing_off {
            if !self.checkpointer.caught_up(frames) {
                self.checkpointer.nudge();
                return Ok(None);
            }
            return checkpoint(conn, "PASSIVE");
        }
        // At the hard limit: wait for readers (the busy handler) and for a checkpoint of
        // the thread's that holds the checkpoint lock (SQLite never waits for that lock
        // itself), within the same bound.
        let until = std::time::Instant::now() + READER_WAIT;
        conn.busy_timeout(READER_WAIT)?;
        let result = loop {
            match checkpoint(conn, "RESTART") {
                Ok(None) if std::time::Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                other => break other,
            }
        };
        conn.busy_timeout(super::open::BUSY_TIMEOUT)?;
        self.hard_again = match &result {
            Ok(Some(c)) if c.copied >= c.log => None,
            _ => Some(std::time::Instant::now() + HARD_BACKOFF),
        };
        result
    }

    /// Stops the checkpoint thread after its last checkpoint.
    pub fn stop(self) {
        self.checkpointer.stop();
    }
}

/// One checkpoint on `conn` in `mode`; `None` when it could not complete (another
/// checkpoint was running, or readers held it up).
fn checkpoint(conn: &Connection, mode: &str) -> Result<Option<Checkpointed>, StoreError> {
    let (busy, log, copied) =
        conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
    Ok((busy == 0).then_some(Checkpointed { log, copied }))
}

/// The background checkpoint thread of a writer: PASSIVE every [`CHECKPOINT_EVERY`] on
/// its own connection, at once when the writer nudges it, and a last TRUNCATE one on
/// stop. What its last pass found is kept for the writer to read.
struct Checkpointer {
    tell: std::sync::mpsc::Sender<Nudge>,
    thread: JoinHandle<()>,
    /// Frames in the log, and frames copied, at the thread's last checkpoint.
    last: Arc<(AtomicU64, AtomicU64)>,
    /// Passes the thread has made.
    passes: Arc<AtomicU64>,
    /// The pass count when it was last nudged: a nudge is sent only once the thread has
    /// served the one before, so the writer's own checkpoints find the lock free.
    nudged_at: Option<u64>,
}

/// What the writer tells its checkpoint thread.
enum Nudge {
    /// Copy now.
    Now,
    /// Copy a last time and stop.
    Stop,
}

impl Checkpointer {
    fn start(path: &Path) -> Result<Checkpointer, StoreError> {
        let conn = open_connection(path)?;
        let (tell, rx) = std::sync::mpsc::channel::<Nudge>();
        let last = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
        let passes = Arc::new(AtomicU64::new(0));
        let (seen, made) = (last.clone(), passes.clone());
        let thread = std::thread::Builder::new()
            .name("plexus-checkpoint".into())
            .spawn(move || loop {
                let mut stop = match rx.recv_timeout(CHECKPOINT_EVERY) {
                    Ok(Nudge::Now) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
                    Ok(Nudge::Stop) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => true,
                };
                // Nudges that piled up meanwhile are served by this one pass.
                for n in rx.try_iter() {
                    stop |= matches!(n, Nudge::Stop);
                }
                match checkpoint(&conn, if stop { "TRUNCATE" } else { "PASSIVE" }) {
                    Ok(Some(c)) => {
                        seen.0
                            .store(u64::try_from(c.log).unwrap_or(0), Ordering::Relaxed);
                        seen.1
                            .store(u64::try_from(c.copied).unwrap_or(0), Ordering::Relaxed);
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!("checkpoint failed: {e}"),
                }
                made.fetch_add(1, Ordering::Relaxed);
                if stop {
                    return;
                }
            })
            .map_err(|e| StoreError::WriterGone(e.to_string()))?;
        Ok(Checkpointer {
            tell,
            thread,
            last,
            passes,
            nudged_at: None,
        })
    }

    /// Asks for a checkpoint now (does not wait for it), unless the last ask is still
    /// being served.
    fn nudge(&mut self) {
        let passes = self.passes.load(Ordering::Relaxed);
        if self.nudged_at.is_some_and(|at| at >= passes) {
            return;
        }
        self.nudged_at = Some(passes);
        let _ = self.tell.send(Nudge::Now);
    }

    /// Whether the thread's last checkpoint, of this turn of the log, left at most
    /// [`CATCH_UP_FRAMES`] of the `frames` now in it to copy.
    fn caught_up(&self, frames: u32) -> bool {
        let log = self.last.0.load(Ordering::Relaxed);
        let copied = self.last.1.load(Ordering::Relaxed);
        let frames = u64::from(frames);
        log <= frames && frames.saturating_sub(copied) <= u64::from(CATCH_UP_FRAMES)
    }

    fn stop(self) {
        let _ = self.tell.send(Nudge::Stop);
        let _ = self.thread.join();
    }
}
