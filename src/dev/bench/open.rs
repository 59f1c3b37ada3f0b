//! `plexus bench open`: the time to the first frame of a big finished run opened from
//! the database — `browse RUN` and `replay RUN --at end` (the run's state at its last
//! event, drawn), and the Failures screen of that run (its failed attempts listed and
//! the state drawn) — read from the run's stored snapshot, interleaved with the same
//! opening from the log alone (every event folded, as before snapshots were stored).
//! The run is made by this binary itself (`run --headless`, in a child process) unless
//! an existing one is named.

use std::path::{Path, PathBuf};
use std::time::Instant;

use color_eyre::eyre::{eyre, Result, WrapErr};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde::Serialize;

use crate::cli::args::OpenBenchOpts;
use crate::data::replay::log::ReplayLog;
use crate::data::store::Store;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::{Screen, UiState};
use crate::tui::ui::theme::Theme;

/// What `bench open` measured (milliseconds are medians over the rounds).
#[derive(Debug, Clone, Serialize)]
pub struct OpenBenchReport {
    /// The run opened.
    pub run_id: String,
    /// Its tasks.
    pub tasks: usize,
    /// Events in its log.
    pub events: u64,
    /// Bytes of the stored snapshot at its end.
    pub snapshot_bytes: usize,
    /// Decoding that snapshot alone, ms (median).
    pub decode_ms: f64,
    /// Seconds the generated run took (0 when an existing run was named).
    pub generate_seconds: f64,
    /// Rounds.
    pub runs: usize,
    /// `browse` / `replay --at end`: first frame from the snapshot, ms.
    pub browse_ms: f64,
    /// The same from the log alone, ms (`None` with `--no-log`).
    pub browse_from_log_ms: Option<f64>,
    /// The Failures screen of the run: first frame from the snapshot, ms.
    pub failures_ms: f64,
    /// The same from the log alone, ms (`None` with `--no-log`).
    pub failures_from_log_ms: Option<f64>,
    /// Failed attempts listed.
    pub failures_listed: usize,
    /// Peak memory of this process, MiB.
    pub peak_rss_mib: f64,
}

/// The existing database and run `--db-file` and `--run` name, to open instead of
/// generating one (both or neither).
fn existing_run(o: &OpenBenchOpts) -> Result<Option<(PathBuf, String)>> {
    match (&o.db, &o.run) {
        (Some(db), Some(run)) => Ok(Some((db.clone(), run.clone()))),
        (None, None) => Ok(None),
        _ => Err(color_eyre::eyre::eyre!(
            "--db-file and --run go together (an existing run to open)"
        )),
    }
}

/// Runs the benchmark.
pub async fn run_open_bench(o: &OpenBenchOpts) -> Result<OpenBenchReport> {
    let (db, run, generate_seconds) = match existing_run(o)? {
        Some((db, run)) => (db, run, 0.0),
        None => generate(o)?,
    };
    let store = Store::open(&db)?;
    let run_id = store.run(&run)?.run_id;
    let (events, _) = store.last_event(&run_id)?;
    let snapshot = store.snapshot_before(&run_id, events)?;
    let snapshot_bytes = snapshot.as_ref().map_or(0, |s| s.data.len());
    let tasks = store.run(&run_id)?.task_count as usize;
    drop(store);
    let mut browse = Vec::new();
    let mut browse_log = Vec::new();
    let mut failures = Vec::new();
    let mut failures_log = Vec::new();
    let mut listed = 0;
    let mut decode = Vec::new();
    // Also open the run from its log alone (the figures before snapshots).
    let from_log = !o.no_log;
    for _ in 0..o.runs.max(1) {
        if let Some(s) = &snapshot {
            let t = Instant::now();
            let st = crate::model::state::snapshot::decode(&s.data)
                .map_err(|e| eyre!("the stored snapshot: {e}"))?;
            decode.push(t.elapsed().as_secs_f64() * 1e3);
            drop(st);
        }
        browse.push(first_frame(&db, &run_id, true, false, o.size)?.0);
        if from_log {
            browse_log.push(first_frame(&db, &run_id, false, false, o.size)?.0);
        }
        let (ms, n) = first_frame(&db, &run_id, true, true, o.size)?;
        failures.push(ms);
        listed = n;
        if from_log {
            failures_log.push(first_frame(&db, &run_id, false, true, o.size)?.0);
        }
    }
    Ok(OpenBenchReport {
        run_id,
        tasks,
        events,
        snapshot_bytes,
        decode_ms: median(decode),
        generate_seconds,
        runs: o.runs.max(1),
        browse_ms: median(browse),
        browse_from_log_ms: from_log.then(|| median(browse_log)),
        failures_ms: median(failures),
        failures_from_log_ms: from_log.then(|| median(failures_log)),
        failures_listed: listed,
        peak_rss_mib: super::engine::peak_rss_mib(),
    })
}

/// Opens the run at its end as the screens do and draws one frame with its tasks; the
/// milliseconds it took and the failed attempts listed.
fn first_frame(
    db: &Path,
    run: &str,
    snapshots: bool,
    failures: bool,
    (w, h): (u16, u16),
) -> Result<(f64, usize)> {
    let t = Instant::now();
    let mut ui = UiState::new(false);
    let mut listed = 0;
    if failures {
        let rows = Store::open(db)?.failed_invocations(Some(run))?;
        listed = rows.len();
        ui.failures
            .set_rows(rows, chrono::Utc::now().timestamp_millis());
        ui.screen = Screen::Failures;
        ui.failures.this_run_only = true;
        ui.failures_run = Some(run.to_string());
    }
    let mut log = ReplayLog::open(db, run)?;
    if !snapshots {
        log = log.without_stored_snapshots();
    }
    let state = log.seek(log.total())?;
    if state.tasks.is_empty() {
        return Err(eyre!("run {run} opened with no tasks"));
    }
    let mut term = Terminal::new(TestBackend::new(w, h))?;
    let theme = Theme::dark();
    let keys = Keymap::default_keys();
    term.draw(|f| crate::tui::ui::draw(f, &state, &mut ui, &theme, &keys))?;
    Ok((t.elapsed().as_secs_f64() * 1e3, listed))
}

/// Generates a plan and runs it headless in a child process of this binary (so the run
/// stores its snapshots as any run does); the database, the run and the seconds taken.
fn generate(o: &OpenBenchOpts) -> Result<(PathBuf, String, f64)> {
    std::fs::create_dir_all(&o.dir)
        .wrap_err_with(|| format!("cannot create {}", o.dir.display()))?;
    let db = o.dir.join("open.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let plan = o.dir.join("open-plan.json");
    let spec = crate::dev::gen_plan::GenSpec {
        tasks: o.tasks,
        width: o.width,
        max_atoms: 1,
        ..crate::dev::gen_plan::GenSpec::default()
    };
    std::fs::write(&plan, crate::dev::gen_plan::generate(spec).to_string())
        .wrap_err_with(|| format!("cannot write {}", plan.display()))?;
    let exe = std::env::current_exe().wrap_err("cannot find this program")?;
    crate::errln!(
        "generating a run of {} tasks in {} (this takes a while)…",
        o.tasks,
        db.display()
    );
    let t = Instant::now();
    let out = std::process::Command::new(exe)
        .arg("--db")
        .arg(&db)
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--chunk-ms", "0", "--first-chunk-ms", "0"])
        .args(["--concurrency", "64"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .wrap_err("cannot run the generated plan")?;
    if !out.success() {
        return Err(eyre!("the generated run failed ({out})"));
    }
    let secs = t.elapsed().as_secs_f64();
    let run = Store::open(&db)?
        .list_runs()?
        .first()
        .map(|r| r.run_id.clone())
        .ok_or_else(|| eyre!("the generated run is not in {}", db.display()))?;
    Ok((db, run, secs))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Prints the report.
pub fn print_open_report(r: &OpenBenchReport) {
    crate::outln!(
        "run                   {} ({} tasks, {} events)",
        r.run_id,
        r.tasks,
        r.events
    );
    if r.generate_seconds > 0.0 {
        crate::outln!("generated in          {:.1} s", r.generate_seconds);
    }
    crate::outln!(
        "snapshot at the end   {:.1} MiB",
        r.snapshot_bytes as f64 / (1024.0 * 1024.0)
    );
    crate::outln!("decoding it alone     {:.0} ms", r.decode_ms);
    crate::outln!(
        "first frame (median of {} interleaved rounds)   from snapshot   from the log",
        r.runs
    );
    let log = |ms: Option<f64>| ms.map_or("not measured".to_string(), |ms| format!("{ms:>9.0} ms"));
    crate::outln!(
        "  browse / replay --at end            {:>9.0} ms   {}",
        r.browse_ms,
        log(r.browse_from_log_ms)
    );
    crate::outln!(
        "  Failures screen ({} listed)   {:>9.0} ms   {}",
        r.failures_listed,
        r.failures_ms,
        log(r.failures_from_log_ms)
    );
    crate::outln!("peak memory (RSS)     {:.1} MiB", r.peak_rss_mib);
}
