//! Keeping the write-ahead log bounded while a run writes without pause.
//!
//! SQLite appends every commit to the `-wal` file and only starts writing it from the
//! beginning again (a *restart*) when a checkpoint has copied every frame into the
//! database and no reader still reads from the log. A background checkpoint alone never
//! gets there while the writer keeps appending, and the file grew to gigabytes. So:
//! - a checkpoint thread copies frames into the database every [`CHECKPOINT_EVERY`]
//!   (PASSIVE: it never waits for, nor blocks, the writer or a reader);
//! - the writer counts the frames after each commit (SQLite's WAL hook) and, past
//!   [`RESTART_FRAMES`], finishes the copy itself right after its commit, when nothing
//!   new can arrive, so the next write starts the log over; readers that began after the
//!   copy read the database file and do not hold the restart up;
//! - should readers keep the log from starting over until it holds [`HARD_FACTOR`] times
//!   that, the writer waits for them to finish their current statement, at most
//!   [`READER_WAIT`];
//! - `journal_size_limit` trims the file back to [`KEEP_BYTES`] when the log restarts.
//!
//! A reader that holds one read transaction open for long (a `sqlite3` shell inside
//! `BEGIN`) keeps the frames it may read; plexus's own readers read in short statements.

use std::cell::Cell;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::{open_connection, StoreError};

/// Interval between background checkpoints.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// Frames in the log after a commit past which the writer completes a checkpoint itself
/// (512 frames of 16 KiB pages: 8 MiB).
pub const RESTART_FRAMES: u32 = 512;

/// The size the log file is trimmed back to when it starts over.
pub const KEEP_BYTES: i64 = 8 * 1024 * 1024;

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
pub const HARD_FACTOR: u32 = 3;

/// Longest the writer waits for readers to leave the log once it holds
/// [`HARD_FACTOR`] times its threshold; a reader that stays longer only delays the
/// restart to a later commit, it never stops the run.
pub const READER_WAIT: Duration = Duration::from_millis(250);

/// Run on the writer's connection right after a commit once the log holds `frames` past
/// `limit`: copies what is left into the database without waiting for anyone (PASSIVE),
/// or, at [`HARD_FACTOR`] times the limit, waiting up to [`READER_WAIT`] for the readers
/// still reading the log to finish their statement (RESTART). `None` below the limit or
/// when another checkpoint was running.
pub fn bound_after_commit(
    conn: &Connection,
    frames: u32,
    limit: u32,
) -> Result<Option<Checkpointed>, StoreError> {
    if frames < limit {
        return Ok(None);
    }
    let hard = frames >= limit.saturating_mul(HARD_FACTOR);
    if hard {
        conn.busy_timeout(READER_WAIT)?;
    }
    let mode = if hard { "RESTART" } else { "PASSIVE" };
    let result = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    });
    if hard {
        conn.busy_timeout(super::open::BUSY_TIMEOUT)?;
    }
    let (busy, log, copied) = result?;
    Ok((busy == 0).then_some(Checkpointed { log, copied }))
}

/// The background checkpoint thread of a writer: PASSIVE every [`CHECKPOINT_EVERY`] on
/// its own connection, at once when the writer nudges it (the log is half way to its
/// threshold: so the writer's own checkpoint finds little left to copy), and a last
/// TRUNCATE one on stop.
pub struct Checkpointer {
    tell: std::sync::mpsc::Sender<Nudge>,
    thread: JoinHandle<()>,
}

/// What the writer tells its checkpoint thread.
enum Nudge {
    /// Copy now.
    Now,
    /// Copy a last time and stop.
    Stop,
}

impl Checkpointer {
    /// Starts the thread on the database at `path`.
    pub fn start(path: &Path) -> Result<Checkpointer, StoreError> {
        let conn = open_connection(path)?;
        let (tell, rx) = std::sync::mpsc::channel::<Nudge>();
        let thread = std::thread::Builder::new()
            .name("plexus-checkpoint".into())
            .spawn(move || loop {
                let last = match rx.recv_timeout(CHECKPOINT_EVERY) {
                    Ok(Nudge::Now) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
                    Ok(Nudge::Stop) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => true,
                };
                let mode = if last { "TRUNCATE" } else { "PASSIVE" };
                if let Err(e) =
                    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()))
                {
                    tracing::warn!("checkpoint failed: {e}");
                }
                if last {
                    return;
                }
            })
            .map_err(|e| StoreError::WriterGone(e.to_string()))?;
        Ok(Checkpointer { tell, thread })
    }

    /// Asks for a checkpoint now (does not wait for it).
    pub fn nudge(&self) {
        let _ = self.tell.send(Nudge::Now);
    }

    /// Stops the thread after its last checkpoint.
    pub fn stop(self) {
        let _ = self.tell.send(Nudge::Stop);
        let _ = self.thread.join();
    }
}
