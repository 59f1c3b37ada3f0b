//! Running an eval: the run of its copies started (or resumed) on the engine, the scorer
//! following its events on a thread of its own, the tree written as samples finish, and
//! at the end the eval's status, the summary, the problems report, the handoff and the
//! report on standard output.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};
use tokio::sync::mpsc::UnboundedReceiver;

use super::judging::JudgeSet;
use super::report::print_results;
use super::scorer::{Msg, Scorer, TaskFact};
use super::tree_writer::TreeWriter;
use crate::cli::launch::headless::spawn_stop_watcher;
use crate::cli::launch::{start, Globals, Resuming, RunConfig, Started};
use crate::data::store::{RowsWrite, Store, WriteOp};
use crate::features::eval::finish::{write_end, SampleFiles};
use crate::features::eval::read;
use crate::features::eval::record::{self, EvalRow, SampleRow};
use crate::features::eval::tree;
use crate::model::event::{Envelope, RunStatus};
use crate::model::plan::Plan;

/// What an eval run starts from.
pub struct Launch {
    /// The eval's row (its run is set here).
    pub row: EvalRow,
    /// Its samples.
    pub samples: Vec<SampleRow>,
    /// Whether the eval is new (its rows are stored as the run starts).
    pub new_eval: bool,
    /// Print the report as JSON.
    pub json: bool,
}

/// The exit code of a missed gate.
pub const GATE_MISSED: u8 = 8;

/// Runs (or resumes) the eval's run and scores it; returns the exit code.
pub async fn run_eval(
    g: &Globals,
    launch: Launch,
    plan: Plan,
    config: RunConfig,
    resume: Option<Resuming>,
) -> Result<ExitCode> {
    let resuming = resume.is_some();
    // The judges first: a profile that does not exist stops the eval before anything.
    let judges = JudgeSet::for_scoring(
        g,
        &read::scoring_of(&launch.row)?,
        &config.provider,
        false,
        &config.engine.retry,
    )?;
    if launch.new_eval {
        store_eval(&g.db, &launch)?;
    }
    // A stop signal also stops the scoring that goes on after the run has ended.
    let stopped = Arc::new(AtomicBool::new(false));
    // The scorer keeps a few bytes of each sample: every sample's row is in the
    // database, and none is held through the run (its start is the busiest moment).
    let total = launch.samples.len();
    let mut scorer = Scorer::new(
        g.db.clone(),
        launch.row.clone(),
        &launch.samples,
        true,
        stopped.clone(),
        judges,
    )?;
    drop(launch.samples);
    let mut started = start(g, plan, config, resume, false)?;
    let run_id = started.run_id.clone();
    let mut row = launch.row;
    row.run_id = Some(run_id.clone());
    row.status = "running".into();
    store_running(&started, &row)?;
    let out = PathBuf::from(row.out_dir.clone().unwrap_or_else(|| "evals".into()));
    let it = tree::iteration_dir(&out, row.iteration);
    announce(g, &row, &run_id, total, &it)?;
    if launch.new_eval {
        note_foreign_iterations(&g.db, &out, row.iteration);
    }
    let tree = start_tree(&g.db, &row, it, total, resuming)?;
    scorer.on_run(row.clone());
    let (tx, rx) = channel::<Msg>();
    let scorer_thread = std::thread::Builder::new()
        .name("plexus-eval-scorer".into())
        .spawn(move || scorer.run(rx, resuming, tree))
        .map_err(|e| eyre!("cannot start the scorer: {e}"))?;
    let events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let watcher = spawn_stop_watcher(
        started.handle.control.clone(),
        run_id.clone(),
        Some(stopped.clone()),
    );
    let _status = crate::cli::launch::status::StatusTicker::start();
    let forward = tokio::spawn(forward_facts(events, tx.clone()));
    let status = started.finish().await;
    let _ = forward.await;
    let _ = tx.send(Msg::End(
        *status.as_ref().unwrap_or(&RunStatus::Interrupted),
    ));
    drop(tx);
    let scored = join_scorer(scorer_thread).await?;
    watcher.abort();
    let run_status = status?;
    conclude(
        g,
        &row,
        &out,
        &run_id,
        run_status,
        scored,
        resuming,
        launch.json,
    )
}

/// Says on standard error what the eval runs: its samples and epochs, its run, its
/// database and its tree (iteration directory `it`).
fn announce(
    g: &Globals,
    row: &EvalRow,
    run_id: &str,
    total: usize,
    it: &std::path::Path,
) -> Result<()> {
    crate::errln!(
        "eval {}: {} samples × {} epoch(s) in run {run_id}; database {}; tree {}",
        row.eval_id,
        total,
        read::scoring_of(row)?.epochs,
        g.db.display(),
        it.display()
    );
    Ok(())
}

/// Says so when the iterations before this one in `out` were written by evals this
/// database does not have (another database's, which numbered them): this eval's
/// number follows theirs, so it overwrites none of them, and none of them is its parent.
fn note_foreign_iterations(db: &std::path::Path, out: &std::path::Path, iteration: u32) {
    let Ok(store) = crate::data::store::Store::open(db) else {
        return;
    };
    let known = |id: &str| {
        store
            .conn()
            .query_row("SELECT 1 FROM evals WHERE eval_id = ?1", [id], |_| Ok(()))
            .is_ok()
    };
    let foreign: Vec<u32> = (1..iteration)
        .filter(|&k| tree::iteration_eval_id(out, k).is_some_and(|id| !known(&id)))
        .collect();
    if let (Some(first), Some(last)) = (foreign.first(), foreign.last()) {
        let which = if first == last {
            format!("iteration {first}")
        } else {
            format!("iterations {first}–{last}")
        };
        crate::errln!(
            "note: {} holds {which} written from another database; this eval is iteration {iteration}, after them (none of them is its parent here)",
            out.join(crate::data::failures::layout::OUTPUTS_DIR).display()
        );
    }
}

/// What the scorer's thread scored, once it ends (without blocking the runtime).
async fn join_scorer(
    scorer_thread: std::thread::JoinHandle<Result<super::scorer::Scored>>,
) -> Result<super::scorer::Scored> {
    tokio::task::spawn_blocking(move || scorer_thread.join())
        .await
        .map_err(|e| eyre!("the scorer stopped: {e}"))?
        .map_err(|_| eyre!("the scorer crashed"))?
}

/// Stores a new eval and its samples before its run starts: a crash from here on leaves
/// it for the same command (or `eval resume`) to find.
fn store_eval(db: &std::path::Path, launch: &Launch) -> Result<()> {
    let conn = crate::data::store::open_connection(db)?;
    let tx = conn.unchecked_transaction()?;
    record::insert_eval(&tx, &launch.row, &launch.samples)?;
    tx.commit()?;
    Ok(())
}

/// Sets the eval's run and its `running` status through the run's writer, and waits
/// until they are committed.
fn store_running(started: &Started, row: &EvalRow) -> Result<()> {
    let r = row.clone();
    started
        .writer
        .send(WriteOp::Rows(RowsWrite(Box::new(move |tx| {
            record::set_run(tx, &r.eval_id, r.run_id.as_deref().unwrap_or_default())?;
            record::set_status(tx, &r.eval_id, "running", None)
        }))))?;
    started.writer.flush()?;
    Ok(())
}

/// Passes the task facts of the run's committed events to the scorer, until the events
/// end or the scorer is gone.
async fn forward_facts(mut events: UnboundedReceiver<Vec<Arc<Envelope>>>, fwd: Sender<Msg>) {
    while let Some(batch) = events.recv().await {
        let facts: Vec<TaskFact> = batch.iter().filter_map(|e| TaskFact::of(e)).collect();
        if !facts.is_empty() && fwd.send(Msg::Facts(facts)).is_err() {
            break;
        }
    }
}

/// Scores what is left of eval `launch.row` whose run ended (`run_status`) before its
/// scoring did (a crash or a stop while the scorer was behind): no engine, no call.
pub async fn score_only(g: &Globals, launch: Launch, run_status: RunStatus) -> Result<ExitCode> {
    let row = launch.row;
    let run_id = row
        .run_id
        .clone()
        .ok_or_else(|| eyre!("eval {} has no run", row.eval_id))?;
    let out = PathBuf::from(row.out_dir.clone().unwrap_or_else(|| "evals".into()));
    crate::errln!(
        "eval {}: its run {run_id} has ended ({}); scoring what is left without running the plan again",
        row.eval_id,
        run_status.as_str()
    );
    let it = tree::iteration_dir(&out, row.iteration);
    let tree = start_tree(&g.db, &row, it, launch.samples.len(), true)?;
    let stopped = Arc::new(AtomicBool::new(false));
    let (control, _engine) = tokio::sync::mpsc::unbounded_channel();
    let watcher = spawn_stop_watcher(control, run_id.clone(), Some(stopped.clone()));
    let _status = crate::cli::launch::status::StatusTicker::start();
    // The judges of the run's provider (the plan is not run again; a judge may be asked).
    let provider = super::judging::run_provider(&crate::data::store::Store::open(&g.db)?, &run_id)?;
    let judges = JudgeSet::for_scoring(
        g,
        &read::scoring_of(&row)?,
        &provider,
        false,
        &crate::run::engine::retry::RetryPolicy::default(),
    )?;
    let scorer = Scorer::new(
        g.db.clone(),
        row.clone(),
        &launch.samples,
        true,
        stopped,
        judges,
    )?;
    // Every sample's row is in the database: none is held through the run.
    drop(launch.samples);
    // The run cannot go on (a task waiting for review included: a decision and its
    // resume would have gone through the engine): what is left is scored as it stands.
    let (tx, rx) = channel::<Msg>();
    let _ = tx.send(Msg::End(RunStatus::Failed));
    drop(tx);
    let scored = tokio::task::spawn_blocking(move || scorer.run(rx, true, tree))
        .await
        .map_err(|e| eyre!("the scorer stopped: {e}"))??;
    watcher.abort();
    conclude(
        g,
        &row,
        &out,
        &run_id,
        run_status,
        scored,
        true,
        launch.json,
    )
}

/// The end of an eval: the end of its tree, then its status, the report, the exit code.
/// `finished` is stored only once the tree is whole: a kill or a failed write before
/// that leaves the eval unfinished, and the same command (or `eval resume`) completes
/// the tree from the database without a model call.
#[allow(clippy::too_many_arguments)]
fn conclude(
    g: &Globals,
    row: &EvalRow,
    out: &std::path::Path,
    run_id: &str,
    run_status: RunStatus,
    scored: super::scorer::Scored,
    resumed: bool,
    json: bool,
) -> Result<ExitCode> {
    let complete = scored.left == 0;
    let at = crate::base::clock::now_rfc3339();
    crate::base::pause_point::here("eval-end:scored");
    let store = Store::open(&g.db)?;
    let row = read::find_eval(store.conn(), &row.eval_id)?;
    // A rerun's inherited samples were never written by its scorer: its tree is written
    // whole from the database. A resumed eval, or one whose tree writer could not write
    // everything, gets the documents that are missing.
    let files = if row.kind == "rerun" {
        SampleFiles::All(&store)
    } else if resumed || !scored.tree_whole {
        SampleFiles::Missing(&store)
    } else {
        SampleFiles::Written
    };
    let results = write_end(store.conn(), files, &row, out, &at, !complete).map_err(|e| {
        eyre!(
            "eval {}: its results are stored, but its failure tree could not be written: {e}; once that is mended, the same command (or {}) writes it without calling a model",
            row.eval_id,
            crate::cli::launch::plexus_command(&g.db, &format!("eval resume {}", row.eval_id))
        )
    })?;
    crate::base::pause_point::here("eval-end:handoff");
    let (eval_status, finished_at) = if complete {
        ("finished", Some(at.as_str()))
    } else {
        ("interrupted", None)
    };
    {
        let conn = crate::data::store::open_connection(&g.db)?;
        let tx = conn.unchecked_transaction()?;
        record::set_status(&tx, &row.eval_id, eval_status, finished_at)?;
        tx.commit()?;
    }
    crate::base::pause_point::here("eval-end:finished");
    let row = read::find_eval(store.conn(), &row.eval_id)?;
    print_results(&row, &results, json)?;
    if !complete {
        crate::errln!(
            "the eval stopped before its end (run {}: {}); resume with: {}",
            run_id,
            run_status.as_str(),
            crate::cli::launch::plexus_command(&g.db, &format!("eval resume {}", row.eval_id))
        );
        return Ok(ExitCode::from(crate::data::exit::RUN_FAILED));
    }
    if !results.gates_missed.is_empty() {
        return Ok(ExitCode::from(GATE_MISSED));
    }
    Ok(ExitCode::SUCCESS)
}

/// The tree writer of eval `row` (of `total` samples) in iteration directory `it`: the
/// pending samples to dispatch and, for a resumed eval, the entries of those that failed
/// before.
fn start_tree(
    db: &std::path::Path,
    row: &EvalRow,
    it: PathBuf,
    total: usize,
    resuming: bool,
) -> Result<TreeWriter> {
    let failed = if resuming {
        crate::features::eval::finish::failed_entries(Store::open(db)?.conn(), row)?
    } else {
        BTreeMap::new()
    };
    Ok(TreeWriter::start(
        row.clone(),
        it,
        total as u64,
        db.to_path_buf(),
        failed,
    ))
}
