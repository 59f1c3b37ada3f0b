//! The one writer thread: owns the write connection, applies operations in batches (one
//! transaction per batch, group commit), and only then hands the batch's events to the
//! subscriber, so every event a consumer sees is already durable.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use rusqlite::{params, CachedStatement, Connection, Transaction};

pub use super::gather::COMMIT_GAP;
use super::gather::{gather, Gathered, MAX_BATCH};
use super::lease::{Lease, HEARTBEAT_EVERY};
use super::log_insert::{held, insert_events};
pub use super::ops::{
    AssetRow, AtomRow, InvocationRecord, PaperRow, ReviewWrite, RowsWrite, RunRow, WriteOp,
};
use super::row_write;
pub use super::writer_stats::WriterStats;
use super::{open_connection, StoreError};
use crate::base::clock::now_rfc3339;
use crate::model::event::Envelope;

/// Page cache of the writer's connection, KiB.
const WRITER_CACHE_KIB: i64 = 32 * 1024;

/// Handle to the writer thread. Dropping every handle stops the thread after a final commit.
#[derive(Clone)]
pub struct Writer {
    tx: Sender<WriteOp>,
    stats: Arc<WriterStats>,
    end: Arc<WriterEnd>,
}

/// How the writer thread ended: its failure, recorded before anything it held is let go,
/// and whether it has finished (a sender that finds the channel closed waits for that,
/// so it always learns the cause).
#[derive(Default)]
struct WriterEnd {
    state: Mutex<(bool, Option<String>)>,
    finished: std::sync::Condvar,
}

/// Marks the writer finished when dropped (at the end of its thread, or as a panic
/// unwinds it).
struct FinishOnDrop(Arc<WriterEnd>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Longest a sender that found the writer gone waits for the thread to say why.
const END_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl WriterEnd {
    fn fail(&self, why: String) {
        if let Ok(mut s) = self.state.lock() {
            s.1.get_or_insert(why);
        }
    }

    fn finish(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.0 = true;
        }
        self.finished.notify_all();
    }

    /// The failure, if one is recorded yet.
    fn failure(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.1.clone())
    }

    /// The error for a sender that found the writer gone: once the thread has finished
    /// (at most [`END_WAIT`]), what stopped it.
    fn gone(&self) -> StoreError {
        let why = match self.state.lock() {
            Ok(guard) => {
                let guard = self
                    .finished
                    .wait_timeout_while(guard, END_WAIT, |s| !s.0)
                    .map(|(g, _)| g);
                guard.ok().and_then(|s| s.1.clone())
            }
            Err(_) => None,
        };
        StoreError::WriterGone(why.unwrap_or_else(|| "it was stopped".into()))
    }
}

/// Where committed events go.
pub type Subscriber = tokio::sync::mpsc::UnboundedSender<Vec<Arc<Envelope>>>;

impl Writer {
    /// Queues an operation.
    pub fn send(&self, op: WriteOp) -> Result<(), StoreError> {
        self.stats.backlog.fetch_add(1, Ordering::Relaxed);
        self.tx.send(op).map_err(|_| self.end.gone())
    }

    /// Waits until everything queued so far is committed.
    pub fn flush(&self) -> Result<(), StoreError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.send(WriteOp::Flush(tx))?;
        rx.recv().map_err(|_| self.end.gone())
    }

    /// Reserves `count` invocation numbers of the agent short name `name` (see
    /// [`super::ids`]); returns the first once the reservation is committed.
    pub async fn reserve_ids(&self, name: &str, count: u64) -> Result<u64, StoreError> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.send(WriteOp::ReserveIds {
            name: name.to_string(),
            count,
            reply,
        })?;
        match rx.await {
            Ok(first) => Ok(first),
            Err(_) => Err(self.gone_async().await),
        }
    }

    /// Waits, without blocking the runtime, until everything queued so far is
    /// committed; the writer's failure when it cannot be.
    pub async fn committed(&self) -> Result<(), StoreError> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.send(WriteOp::Committed(reply))?;
        match rx.await {
            Ok(()) => Ok(()),
            Err(_) => Err(self.gone_async().await),
        }
    }

    /// Why the writer is gone, for an async waiter (learning it is a blocking wait).
    async fn gone_async(&self) -> StoreError {
        let end = self.end.clone();
        tokio::task::spawn_blocking(move || end.gone())
            .await
            .unwrap_or_else(|e| StoreError::WriterGone(e.to_string()))
    }

    /// Counters.
    pub fn stats(&self) -> &Arc<WriterStats> {
        &self.stats
    }

    /// The error that stopped the writer, if any (recorded so far: this does not wait).
    pub fn failure(&self) -> Option<String> {
        self.end.failure()
    }
}

/// Starts the writer thread on `path`; committed events go to `subscriber` if given.
pub fn spawn_writer(
    path: &std::path::Path,
    subscriber: Option<Subscriber>,
) -> Result<(Writer, JoinHandle<()>), StoreError> {
    spawn_writer_holding(path, subscriber, None)
}

/// [`spawn_writer`] with a page cache of `cache_kib` KiB instead of the run writer's:
/// for a writer of a few rows at a time beside a run (an eval's scorer), whose memory
/// counts more than its speed.
pub fn spawn_writer_with_cache(
    path: &std::path::Path,
    cache_kib: i64,
) -> Result<(Writer, JoinHandle<()>), StoreError> {
    spawn_writer_inner(path, None, None, cache_kib)
}

/// [`spawn_writer`] for a process that owns a run: the writer refreshes `lease`'s
/// heartbeat (every batch, and on its own when idle), stops with
/// [`StoreError::LeaseLost`] if another process took the run over, and gives the lease
/// back when it stops.
pub fn spawn_writer_holding(
    path: &std::path::Path,
    subscriber: Option<Subscriber>,
    lease: Option<Lease>,
) -> Result<(Writer, JoinHandle<()>), StoreError> {
    spawn_writer_inner(path, subscriber, lease, WRITER_CACHE_KIB)
}

fn spawn_writer_inner(
    path: &std::path::Path,
    subscriber: Option<Subscriber>,
    lease: Option<Lease>,
    cache_kib: i64,
) -> Result<(Writer, JoinHandle<()>), StoreError> {
    let conn = open_connection(path)?;
    // Checkpoints run on a thread of their own, so the writer seldom waits for them; the
    // writer completes one only to keep the log bounded (see store/wal.rs).
    super::wal::prepare_writer(&conn)?;
    // A page cache that holds the pages the writer keeps coming back to (the ends of the
    // log and of the atom tables, the task rows, the text indexes); with SQLite's default
    // of 2 MB the writer kept reading its own WAL back (README, Benchmark).
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    let mut wal = super::wal::WalBound::start(path)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let stats = Arc::new(WriterStats {
        latency_ms: Mutex::new(vec![0; 1001]),
        ..Default::default()
    });
    let end = Arc::new(WriterEnd::default());
    let writer = Writer {
        tx,
        stats: stats.clone(),
        end: end.clone(),
    };
    let file = path.display().to_string();
    let handle = std::thread::Builder::new()
        .name("plexus-store".into())
        .spawn(move || {
            // Whatever happens below (a panic too), senders waiting to learn why the
            // writer is gone are let go when the thread ends.
            let _finished = FinishOnDrop(end.clone());
            // Owned here, not by `run_writer`: the waiting flushes they hold are answered
            // (by being dropped) only after the failure is recorded.
            let mut batch: Vec<WriteOp> = Vec::with_capacity(MAX_BATCH);
            let mut state = WriterState {
                payload: Vec::with_capacity(1 << 16),
                prompts: HashSet::new(),
                events: Vec::new(),
                flushes: Vec::new(),
                committed: Vec::new(),
                reserved: Vec::new(),
                run_nos: Default::default(),
            };
            let result = run_writer(
                &conn,
                &rx,
                subscriber,
                &stats,
                lease.as_ref(),
                &mut wal,
                &mut batch,
                &mut state,
            );
            if let Err(e) = &result {
                tracing::error!("store writer stopped: {e}");
                // Recorded before the channel closes and before any waiting flush is
                // let go, so every sender that finds the writer gone also finds why.
                end.fail(format!("{file}: {e}{}", file_size_limit(e)));
            }
            drop(batch);
            drop(state);
            drop(rx);
            end.finish();
            if let Some(lease) = &lease {
                if let Err(e) = super::lease::release(&conn, lease) {
                    tracing::warn!("cannot give back the lease of {}: {e}", lease.run_id);
                }
            }
            wal.stop();
        })
        .map_err(|e| StoreError::WriterGone(e.to_string()))?;
    Ok((writer, handle))
}

/// What SQLite does not say about a failed write: past this process's file size limit
/// (`ulimit -f`) a write fails with EFBIG, which SQLite reports as a mere "disk I/O
/// error". Empty when there is no such limit or the error is another one.
fn file_size_limit(e: &StoreError) -> String {
    let StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) = e else {
        return String::new();
    };
    if !matches!(
        f.code,
        rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::DiskFull
    ) {
        return String::new();
    }
    #[cfg(unix)]
    if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::FSIZE) {
        if soft != rlimit::INFINITY {
            return format!(" (this process may not write a file past {soft} bytes: ulimit -f)");
        }
    }
    String::new()
}

/// What the writer keeps between operations.
struct WriterState {
    /// Payload bytes of the batch's events, back to back.
    payload: Vec<u8>,
    /// System prompts already stored.
    prompts: HashSet<String>,
    /// Events of the current batch, inserted together before the commit.
    events: Vec<Arc<Envelope>>,
    /// Barriers answered after the commit.
    flushes: Vec<std::sync::mpsc::Sender<()>>,
    /// Async barriers answered after the commit.
    committed: Vec<tokio::sync::oneshot::Sender<()>>,
    /// Id reservations answered after the commit: (reply, first number).
    reserved: Vec<(tokio::sync::oneshot::Sender<u64>, u64)>,
    /// Run numbers of event ids (`log_runs`), by run id.
    run_nos: rustc_hash::FxHashMap<Arc<str>, i64>,
}

/// How long until the lease's heartbeat is due (`last`: when it was last refreshed; none
/// yet: due now).
fn until_beat(last: Option<Instant>) -> std::time::Duration {
    last.map_or(std::time::Duration::ZERO, |t| {
        HEARTBEAT_EVERY.saturating_sub(t.elapsed())
    })
}

#[allow(clippy::too_many_arguments)]
fn run_writer(
    conn: &Connection,
    rx: &Receiver<WriteOp>,
    subscriber: Option<Subscriber>,
    stats: &WriterStats,
    lease: Option<&Lease>,
    wal: &mut super::wal::WalBound,
    batch: &mut Vec<WriteOp>,
    state: &mut WriterState,
) -> Result<(), StoreError> {
    let mut subscriber = subscriber;
    // The first batch refreshes the heartbeat: the lease may have been taken a while
    // before the writer started.
    let mut last_beat: Option<Instant> = None;
    let mut last_commit: Option<Instant> = None;
    loop {
        let wait = lease.map(|_| until_beat(last_beat));
        if gather(rx, batch, wait, last_commit) == Gathered::Closed {
            return Ok(());
        }
        let n = batch.len();
        let times = commit_batch(conn, lease, &mut last_beat, batch, state)?;
        last_commit = Some(times.committed);
        let frames = super::wal::frames_after_commit();
        stats
            .wal_frames_peak
            .fetch_max(u64::from(frames), Ordering::Relaxed);
        if n == 0 {
            // A heartbeat alone: not a batch the figures are about.
            continue;
        }
        stats
            .longest_write_us
            .fetch_max(micros(times.written - times.started), Ordering::Relaxed);
        stats
            .longest_commit_us
            .fetch_max(micros(times.committed - times.written), Ordering::Relaxed);
        deliver(stats, n, state, &mut subscriber);
        answer_waiters(state);
        // Once the batch is delivered: keep the log bounded (a failed checkpoint is
        // tried again after a later commit; it never stops the writer).
        checkpoint(conn, wal, frames, stats);
    }
}

/// When one batch's transaction began, was written and was committed.
struct BatchTimes {
    started: Instant,
    written: Instant,
    committed: Instant,
}

/// Writes the batch in one transaction (with the lease's heartbeat, or the check that it
/// is still held) and commits it. On an error the transaction is rolled back.
fn commit_batch(
    conn: &Connection,
    lease: Option<&Lease>,
    last_beat: &mut Option<Instant>,
    batch: &mut Vec<WriteOp>,
    state: &mut WriterState,
) -> Result<BatchTimes, StoreError> {
    let started = Instant::now();
    // IMMEDIATE: the write lock is taken (waiting out other processes' writers)
    // before the lease is read, so the read cannot go stale before the writes.
    let tx = Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    // The heartbeat goes in the batch's transaction: a process that lost its
    // lease while it was stopped finds out before it writes anything else.
    if let Some(lease) = lease {
        if until_beat(*last_beat).is_zero() {
            super::lease::heartbeat(&tx, lease)?;
            *last_beat = Some(Instant::now());
        } else {
            super::lease::still_held(&tx, lease)?;
        }
    }
    {
        let mut stmts = Stmts::default();
        for op in batch.drain(..) {
            apply(&tx, op, state, &mut stmts)?;
        }
    }
    insert_events(&tx, &state.events, &mut state.payload, &mut state.run_nos)?;
    let written = Instant::now();
    tx.commit()?;
    Ok(BatchTimes {
        started,
        written,
        committed: Instant::now(),
    })
}

/// Counts the committed batch of `n` operations and hands its events to the subscriber
/// (dropped, and the events kept only in the store, once the consumer has gone away).
fn deliver(
    stats: &WriterStats,
    n: usize,
    state: &mut WriterState,
    subscriber: &mut Option<Subscriber>,
) {
    let events = std::mem::take(&mut state.events);
    stats.backlog.fetch_sub(n, Ordering::Relaxed);
    stats.batches.fetch_add(1, Ordering::Relaxed);
    stats
        .events
        .fetch_add(events.len() as u64, Ordering::Relaxed);
    if events.is_empty() {
        return;
    }
    record_latency(stats, &events);
    if let Some(sub) = subscriber {
        if sub.send(events).is_err() {
            *subscriber = None; // the consumer went away; keep persisting
        }
    }
}

/// Adds each event's time from its stamp to its commit to the latency histogram (ms,
/// the last bucket for a second or more).
fn record_latency(stats: &WriterStats, events: &[Arc<Envelope>]) {
    let now = chrono::Utc::now().timestamp_millis();
    if let Ok(mut h) = stats.latency_ms.lock() {
        for e in events {
            let ms = (now - e.ts).clamp(0, 1000) as usize;
            h[ms] += 1;
        }
    }
}

/// Answers the barriers and id reservations of the committed batch.
fn answer_waiters(state: &mut WriterState) {
    for f in state.flushes.drain(..) {
        let _ = f.send(());
    }
    for c in state.committed.drain(..) {
        let _ = c.send(());
    }
    for (reply, first) in state.reserved.drain(..) {
        let _ = reply.send(first);
    }
}

/// Checkpoints the log if it has grown past its bound, counting the time it took; a
/// failed checkpoint is only logged.
fn checkpoint(conn: &Connection, wal: &mut super::wal::WalBound, frames: u32, stats: &WriterStats) {
    let checkpoint_from = Instant::now();
    match wal.after_commit(conn, frames, stats.restart_frames()) {
        Ok(Some(c)) => {
            stats
                .wal_checkpoint_us
                .fetch_add(micros(checkpoint_from.elapsed()), Ordering::Relaxed);
            stats.wal_checkpoints.fetch_add(1, Ordering::Relaxed);
            if c.copied < c.log {
                // A reader still reads frames the copy could not pass.
                stats.wal_checkpoints_short.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!("checkpoint after a commit failed: {e}"),
    }
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The per-row statements of one transaction, prepared on first use and kept until the
/// batch ends: taking a statement from rusqlite's cache for every row (a hash of its SQL,
/// then a reset and clear on return) cost as much as some of the inserts.
#[derive(Default)]
struct Stmts<'t> {
    task_state: Option<CachedStatement<'t>>,
    invocation: Option<CachedStatement<'t>>,
}

/// Applies one operation inside the batch's transaction `tx`: its rows are written now,
/// its events and the waiters it carries are kept in `state` for after the commit.
fn apply<'t>(
    tx: &'t Transaction<'_>,
    op: WriteOp,
    state: &mut WriterState,
    stmts: &mut Stmts<'t>,
) -> Result<(), StoreError> {
    match op {
        WriteOp::Event(env) => state.events.push(env),
        WriteOp::CreateRun(run) => row_write::create_run(tx, &run)?,
        WriteOp::RunStatus {
            run_id,
            status,
            finished_at,
        } => {
            tx.execute(
                "UPDATE runs SET status = ?2, finished_at = COALESCE(?3, finished_at) WHERE run_id = ?1",
                params![run_id, status, finished_at],
            )?;
        }
        WriteOp::TaskState {
            run_id,
            task_id,
            status,
            attempts,
            atoms,
            error_code,
            final_invocation_id,
        } => {
            held(&mut stmts.task_state, tx,
                "UPDATE tasks SET status = ?3, attempts = ?4, atoms = ?5, error_code = ?6, final_invocation_id = COALESCE(?7, final_invocation_id), updated_at = ?8 WHERE run_id = ?1 AND task_id = ?2",
            )?
            .execute(params![
                &*run_id,
                &*task_id,
                status,
                attempts,
                atoms,
                error_code,
                final_invocation_id.as_deref(),
                now_rfc3339()
            ])?;
        }
        WriteOp::AddTask {
            run_id,
            task_id,
            agent,
        } => row_write::add_task(tx, &run_id, &task_id, &agent)?,
        WriteOp::Invocation(r) => {
            row_write::invocation(tx, &r, &mut state.prompts, &mut stmts.invocation)?;
        }
        WriteOp::Atoms { run_id, atoms } => row_write::atoms(tx, &run_id, &atoms)?,
        WriteOp::Import { papers, assets } => row_write::import(tx, &papers, &assets)?,
        WriteOp::Review(w) => {
            super::review_write::apply_rows(tx, &w)?;
            state
                .events
                .extend(super::review_write::events(&w).cloned());
        }
        WriteOp::WithEvent(op, env) => {
            apply(tx, *op, state, stmts)?;
            state.events.push(env);
        }
        WriteOp::Many(ops) => {
            for op in ops {
                apply(tx, op, state, stmts)?;
            }
        }
        WriteOp::Rows(write) => (write.0)(tx)?,
        WriteOp::Flush(f) => state.flushes.push(f),
        WriteOp::Committed(c) => state.committed.push(c),
        WriteOp::ReserveIds { name, count, reply } => {
            let first = super::ids::reserve(tx, &name, count)?;
            state.reserved.push((reply, first));
        }
    }
    Ok(())
}
