//! `plexus bench engine`: the engine benchmark — a generated plan of layered fan-out
//! and fan-in run on the simulated provider with zero latency, every event logged, next
//! to a bare batched SQLite insert loop measured on the same machine in the same process.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use color_eyre::eyre::{eyre, Result};
use rusqlite::params;

use crate::cli::args::EngineBenchOpts;
use crate::cli::launch::RunConfig;
use crate::data::provider::{Provider, SimConfig, SimulatedProvider};
use crate::data::store::{open_connection, spawn_writer, RunRow, WriteOp, Writer};
use crate::dev::gen_plan::{generate, GenSpec};
use crate::model::plan::parse_plan;
use crate::run::engine::{start_run, EngineConfig, RunOutcome, RunSpec};

/// Figures of one benchmark run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// Tasks run.
    pub tasks: usize,
    /// Wall time of the run, s.
    pub seconds: f64,
    /// Tasks per second.
    pub tasks_per_s: f64,
    /// Events logged.
    pub events: u64,
    /// Events per second.
    pub events_per_s: f64,
    /// Chunk events among them.
    pub chunk_events: u64,
    /// Chunks the provider streamed.
    pub chunks_streamed: u64,
    /// Most chunks per chunk event.
    pub chunk_flush_max: usize,
    /// Database size after checkpoint divided by events.
    pub bytes_per_event_file: f64,
    /// execution_logs pages divided by events (when dbstat is available).
    pub bytes_per_event_log: Option<f64>,
    /// Rows/s of the bare batched insert loop.
    pub bare_rows_per_s: f64,
    /// events_per_s / bare_rows_per_s.
    pub ratio_to_bare: f64,
    /// Peak resident memory, MiB.
    pub peak_rss_mib: f64,
    /// Resident memory when `--rss-at` tasks had finished (unless the run had fewer).
    pub rss_at: Option<RssAt>,
    /// Resident memory when the run ended.
    pub rss_end: RssAt,
    /// What the engine held for finished tasks at its last sample (every 1,000
    /// finished tasks): memory that grows with finished work shows here.
    pub retained: Option<crate::run::engine::Retained>,
    /// Median and p99 of the time from an event's timestamp to its commit, ms.
    pub commit_latency_ms: (u64, u64),
    /// The paced run's figures, unless it was skipped.
    pub paced: Option<PacedFigures>,
    /// Final run status.
    pub status: String,
    /// Largest size of the write-ahead log file during the run, MiB.
    pub wal_peak_mib: f64,
    /// Most frames the log held after a commit.
    pub wal_peak_frames: u64,
    /// Checkpoints the writer completed to keep the log bounded (and of those, the ones
    /// a reader kept short).
    pub wal_checkpoints: (u64, u64),
    /// Time the writer spent in them, ms.
    pub wal_checkpoint_ms: f64,
    /// Events a follower beside the run read (`--follow`).
    pub followed_events: Option<u64>,
}

/// Resident memory at one point of the run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RssAt {
    /// Tasks finished then.
    pub tasks: usize,
    /// Resident memory then, MiB.
    pub rss_mib: f64,
    /// Peak resident memory until then, MiB.
    pub peak_rss_mib: f64,
}

impl RssAt {
    /// This process's memory now, `tasks` tasks finished.
    fn now(tasks: usize) -> RssAt {
        RssAt {
            tasks,
            rss_mib: rss_mib(),
            peak_rss_mib: peak_rss_mib(),
        }
    }
}

/// Figures of the paced run: the engine streaming a chunk every 10 ms, like a real
/// provider, so that the writer is not saturated.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PacedFigures {
    /// Tasks run.
    pub tasks: usize,
    /// Events per second.
    pub events_per_s: f64,
    /// Median and p99 of the time from an event's timestamp to its commit, ms.
    pub commit_latency_ms: (u64, u64),
    /// The longest time a batch took to be written into its transaction, ms, and the
    /// longest a commit took, ms (not necessarily of the same batch).
    pub longest_write_commit_ms: (f64, f64),
}

pub(crate) fn peak_rss_mib() -> f64 {
    proc_status_mib("VmHWM:")
}

/// Current resident memory, MiB (Linux; 0 elsewhere).
pub(crate) fn rss_mib() -> f64 {
    proc_status_mib("VmRSS:")
}

fn proc_status_mib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.to_string())
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// The bare loop: the same `execution_logs` table, rows shaped like chunk events,
/// prepared statement, one transaction per 8192 rows, WAL + synchronous=FULL.
pub fn bare_insert_rate(path: &Path, rows: usize) -> Result<f64> {
    let _ = std::fs::remove_file(path);
    let mut conn = open_connection(path)?;
    let text = "\"content\": \"The update refines the noisy trajectory toward a feasible one.\"";
    let payload = serde_json::json!({ "text": text }).to_string();
    let start = Instant::now();
    let mut seq = 0i64;
    while (seq as usize) < rows {
        let tx = conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT INTO execution_logs (event_id, run_id, seq, ts, kind, task_id, invocation_id, agent, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for _ in 0..8192 {
                if seq as usize >= rows {
                    break;
                }
                seq += 1;
                st.execute(params![
                    crate::data::store::schema::event_base(1) | seq,
                    "R20261125-000000-bare",
                    seq,
                    1_764_000_000_000i64 + seq,
                    "chunk",
                    "T00042",
                    "INV_20261125_000000_SCHOLAR_042",
                    "Scholar_Internalizer",
                    payload
                ])?;
            }
        }
        tx.commit()?;
    }
    let rate = rows as f64 / start.elapsed().as_secs_f64();
    drop(conn);
    // Write the scratch file out and delete it, so its writeback does not slow the run
    // measured next.
    sync_files(path);
    remove_database(path);
    Ok(rate)
}

/// Forces a database and its WAL to disk, so their writeback does not disturb what is
/// measured next.
fn sync_files(path: &Path) {
    for suffix in ["", "-wal"] {
        if let Ok(f) = std::fs::File::open(format!("{}{suffix}", path.display())) {
            let _ = f.sync_all();
        }
    }
}

/// Deletes a scratch database with its WAL and shared-memory files.
fn remove_database(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Writes out every dirty page of the file system holding `dir` (Linux `syncfs`), so the
/// paced run does not inherit the writeback the flood before it left behind (its
/// commits stalled behind it now and then; README, Benchmark).
fn sync_filesystem(dir: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(d) = std::fs::File::open(dir) {
        use std::os::fd::AsRawFd;
        let _ = nix::unistd::syncfs(d.as_raw_fd());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = dir;
}

/// Runs the benchmark and returns its figures.
pub async fn run_bench(opts: &EngineBenchOpts) -> Result<BenchReport> {
    // As `run` does: the encoder loads while the database and the plan are prepared.
    EngineConfig::default().tokens.encoding.preload();
    std::fs::create_dir_all(&opts.dir).map_err(|e| {
        eyre!(
            "cannot create the scratch directory {}: {e}",
            opts.dir.display()
        )
    })?;
    let bare_path = opts.dir.join("bare.db");
    let db = opts.dir.join("bench.db");
    remove_database(&db);
    remove_database(&bare_path);
    crate::errln!("bench: bare batched insert loop, {} rows…", opts.bare_rows);
    let bare_path2 = bare_path.clone();
    let rows = opts.bare_rows;
    let bare = tokio::task::spawn_blocking(move || bare_insert_rate(&bare_path2, rows)).await??;
    crate::errln!("bench: bare loop {:.0} rows/s", bare);

    let plan = generated_plan(opts.tasks, opts.width)?;
    let sim = simulated(opts, 0, 0);
    let engine = EngineConfig {
        concurrency: opts.concurrency,
        chunk_flush_max: opts.chunk_flush_max,
        ..EngineConfig::default()
    };
    crate::errln!(
        "bench: running {} tasks (concurrency {}, ≥{} chunks each)…",
        plan.tasks.len(),
        opts.concurrency,
        opts.chunks
    );
    let full = measured_run(
        &db,
        plan.clone(),
        sim,
        engine.clone(),
        opts.follow,
        opts.rss_at,
    )
    .await?;

    let paced = match opts.paced_tasks {
        0 => None,
        tasks => Some(paced_run(opts, tasks, engine).await?),
    };
    let (seconds, events, chunk_events, chunks_streamed) = (
        full.seconds,
        full.events,
        full.chunk_events,
        full.chunks_streamed,
    );
    let stats = full.stats;
    let outcome_status = full.status;
    let conn = open_connection(&db)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let file = std::fs::metadata(&db)?.len() as f64;
    let log_bytes: Option<f64> = conn
        .query_row(
            "SELECT SUM(pgsize) FROM dbstat WHERE name = 'execution_logs'",
            [],
            |r| r.get::<_, f64>(0),
        )
        .ok();
    Ok(BenchReport {
        tasks: plan.tasks.len(),
        seconds,
        tasks_per_s: plan.tasks.len() as f64 / seconds,
        events,
        events_per_s: events as f64 / seconds,
        chunk_events,
        chunks_streamed,
        chunk_flush_max: opts.chunk_flush_max,
        bytes_per_event_file: file / events as f64,
        bytes_per_event_log: log_bytes.map(|b| b / events as f64),
        bare_rows_per_s: bare,
        ratio_to_bare: (events as f64 / seconds) / bare,
        peak_rss_mib: peak_rss_mib(),
        rss_at: full.rss_at,
        rss_end: full.rss_end,
        retained: full.retained,
        commit_latency_ms: (stats.latency_quantile(0.5), stats.latency_quantile(0.99)),
        paced,
        status: outcome_status,
        wal_peak_mib: full.wal.peak_bytes as f64 / (1024.0 * 1024.0),
        wal_peak_frames: stats.wal_frames_peak.load(Ordering::Relaxed),
        wal_checkpoints: (
            stats.wal_checkpoints.load(Ordering::Relaxed),
            stats.wal_checkpoints_short.load(Ordering::Relaxed),
        ),
        wal_checkpoint_ms: stats.wal_checkpoint_us.load(Ordering::Relaxed) as f64 / 1000.0,
        followed_events: full.wal.followed_events,
    })
}

/// The same engine at a pace like a real provider's: durability latency when the writer
/// is not saturated.
async fn paced_run(
    opts: &EngineBenchOpts,
    tasks: usize,
    engine: EngineConfig,
) -> Result<PacedFigures> {
    let db = opts.dir.join("paced.db");
    remove_database(&db);
    crate::errln!("bench: paced run, {tasks} tasks streaming a chunk every 10 ms…");
    sync_filesystem(&opts.dir);
    let sim = simulated(opts, 40, 10);
    let plan = generated_plan(tasks, 100)?;
    let planned = plan.tasks.len();
    let run = measured_run(&db, plan, sim, engine, false, 0).await?;
    Ok(PacedFigures {
        tasks: planned,
        events_per_s: run.events as f64 / run.seconds,
        commit_latency_ms: (
            run.stats.latency_quantile(0.5),
            run.stats.latency_quantile(0.99),
        ),
        longest_write_commit_ms: (
            run.stats.longest_write_us.load(Ordering::Relaxed) as f64 / 1000.0,
            run.stats.longest_commit_us.load(Ordering::Relaxed) as f64 / 1000.0,
        ),
    })
}

/// The simulated provider of the benchmark, streaming at the given pace.
fn simulated(opts: &EngineBenchOpts, first_chunk_ms: u64, chunk_ms: u64) -> SimConfig {
    SimConfig {
        seed: 1,
        first_chunk_ms,
        chunk_ms,
        min_chunks: opts.chunks,
        ..SimConfig::default()
    }
}

fn generated_plan(tasks: usize, width: usize) -> Result<Arc<crate::model::plan::Plan>> {
    let json = generate(GenSpec {
        tasks,
        width,
        fan_in: 3,
        max_atoms: 1,
    })
    .to_string();
    Ok(Arc::new(
        parse_plan(&json, "generated").map_err(|e| eyre!("{e}"))?,
    ))
}

/// Figures of one run.
struct RunFigures {
    seconds: f64,
    events: u64,
    chunk_events: u64,
    chunks_streamed: u64,
    stats: Arc<crate::data::store::WriterStats>,
    status: String,
    wal: super::wal_watch::WalFigures,
    rss_at: Option<RssAt>,
    rss_end: RssAt,
    retained: Option<crate::run::engine::Retained>,
}

/// Runs `plan` into a fresh database at `db`, counting what a consumer receives, and
/// measuring resident memory once `rss_at` tasks have finished (0: never).
async fn measured_run(
    db: &Path,
    plan: Arc<crate::model::plan::Plan>,
    sim: SimConfig,
    engine: EngineConfig,
    follow: bool,
    rss_at: usize,
) -> Result<RunFigures> {
    let (sub_tx, mut sub_rx) =
        tokio::sync::mpsc::unbounded_channel::<Vec<Arc<crate::model::event::Envelope>>>();
    let (writer, thread) = spawn_writer(db, Some(sub_tx))?;
    let run_id = "R-bench".to_string();
    create_run(
        &writer,
        &run_id,
        &plan,
        "simulated",
        &engine,
        &sim,
        "simulated",
    )?;
    let consumer = tokio::spawn(async move {
        let mut tally = Tally::default();
        while let Some(batch) = sub_rx.recv().await {
            for e in batch {
                tally.count(&e, rss_at);
            }
        }
        (tally.all, tally.chunk_events, tally.streamed, tally.rss_at)
    });
    let stats = writer.stats().clone();
    let watch = super::wal_watch::WalWatch::start(db, &run_id, follow);
    let timed = run_to_end(
        writer,
        thread,
        run_id,
        plan,
        Arc::new(SimulatedProvider::new(sim)),
        engine,
    )
    .await?;
    let wal = watch.stop();
    let (outcome, seconds) = (timed.outcome, timed.run_seconds);
    let (seen, chunk_events, chunks_streamed, rss_at) = consumer.await?;
    let rss_end = RssAt::now(outcome.tasks.values().map(|&n| n as usize).sum());
    let events = stats.events.load(Ordering::Relaxed);
    if seen != events {
        return Err(eyre!(
            "consumer saw {seen} events but {events} were committed"
        ));
    }
    Ok(RunFigures {
        seconds,
        events,
        chunk_events,
        chunks_streamed,
        stats,
        status: outcome.status.as_str().to_string(),
        wal,
        rss_at,
        rss_end,
        retained: outcome.retained.last().copied(),
    })
}

/// What the run's consumer counts of the committed events.
#[derive(Default)]
struct Tally {
    /// Events seen.
    all: u64,
    /// Chunk events.
    chunk_events: u64,
    /// Chunks the finished invocations streamed.
    streamed: u64,
    /// Tasks finished.
    finished: usize,
    /// Resident memory when `rss_at` tasks had finished.
    rss_at: Option<RssAt>,
}

impl Tally {
    /// Counts one event, measuring memory as the `rss_at`-th task finishes.
    fn count(&mut self, e: &crate::model::event::Envelope, rss_at: usize) {
        self.all += 1;
        match &e.event {
            crate::model::event::EngineEvent::Chunk(_) => self.chunk_events += 1,
            crate::model::event::EngineEvent::InvocationFinished(f) => self.streamed += f.chunks,
            crate::model::event::EngineEvent::TaskFinished(_) => {
                self.finished += 1;
                if self.finished == rss_at {
                    self.rss_at = Some(RssAt::now(self.finished));
                }
            }
            _ => {}
        }
    }
}

/// Creates the run `run_id` of `plan` (provider `provider_name`, its config stored with
/// `profile` as the profile name) and waits until the writer has it.
pub(crate) fn create_run(
    writer: &Writer,
    run_id: &str,
    plan: &crate::model::plan::Plan,
    provider_name: &str,
    engine: &EngineConfig,
    sim: &SimConfig,
    profile: &str,
) -> Result<()> {
    let config = serde_json::to_string(&RunConfig {
        engine: engine.clone(),
        simulated: sim.clone(),
        provider: profile.into(),
        replay: None,
    })?;
    writer.send(WriteOp::CreateRun(Box::new(RunRow::for_plan(
        run_id,
        plan,
        provider_name,
        config,
    ))))?;
    writer.flush()?;
    Ok(())
}

/// A benchmark run that went to the end.
pub(crate) struct TimedRun {
    /// How it ended.
    pub outcome: RunOutcome,
    /// Seconds until the engine finished.
    pub run_seconds: f64,
    /// Seconds until the writer had committed everything and stopped.
    pub total_seconds: f64,
}

/// Runs a created run on the engine to the end, then stops its writer.
pub(crate) async fn run_to_end(
    writer: Writer,
    thread: std::thread::JoinHandle<()>,
    run_id: String,
    plan: Arc<crate::model::plan::Plan>,
    provider: Arc<dyn Provider>,
    engine: EngineConfig,
) -> Result<TimedRun> {
    let start = Instant::now();
    let handle = start_run(RunSpec {
        db: None,
        run_id,
        plan,
        provider,
        config: engine,
        writer: writer.clone(),
        known_assets: Default::default(),
        resume: None,
    });
    let outcome = handle
        .join
        .await
        .map_err(|e| eyre!("engine crashed: {e}"))??;
    let run_seconds = start.elapsed().as_secs_f64();
    drop(writer);
    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    Ok(TimedRun {
        outcome,
        run_seconds,
        total_seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_small_bench_reports_its_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = run_bench(&EngineBenchOpts {
            tasks: 60,
            width: 20,
            concurrency: 16,
            chunks: 20,
            bare_rows: 2_000,
            chunk_flush_max: 2,
            paced_tasks: 10,
            dir: dir.path().to_path_buf(),
            follow: true,
            rss_at: 30,
        })
        .await
        .expect("bench runs");
        assert_eq!((r.tasks, r.status.as_str()), (60, "succeeded"));
        assert!(r.chunks_streamed >= 60 * 20, "{}", r.chunks_streamed);
        // At most two chunks per chunk event.
        assert!(r.chunk_events * 2 >= r.chunks_streamed, "{r:?}");
        assert!(r.bare_rows_per_s > 0.0 && r.ratio_to_bare > 0.0, "{r:?}");
        // The paced run committed something, and its writes and commits were timed.
        let paced = r.paced.as_ref().expect("a paced run");
        assert_eq!(paced.tasks, 10);
        assert!(paced.events_per_s > 0.0, "{r:?}");
        let (write, commit) = paced.longest_write_commit_ms;
        assert!(write > 0.0 && commit > 0.0, "{r:?}");
        // Memory was measured at 30 finished tasks and at the end.
        let at = r.rss_at.expect("memory at 30 tasks");
        assert_eq!((at.tasks, r.rss_end.tasks), (30, 60), "{r:?}");
        assert!(at.rss_mib > 0.0 && r.rss_end.rss_mib > 0.0, "{r:?}");
        // The bare loop's scratch file is gone.
        assert!(!dir.path().join("bare.db").exists());
    }
}
