//! Starting runs: new runs from a plan, resumed runs from the database; headless driver
//! with progress on stderr, Ctrl-C leaving the run resumable.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result, WrapErr};
use serde_json::Value;

use super::headless::{print_progress, Progress};
use super::{Globals, RunConfig};
use crate::engine::{start_run, Control, ResumeState, RunSpec};
use crate::event::LeaseTakenOver;
use crate::event::{RunStatus, TaskStatus};
use crate::plan::{parse_plan, Plan};
use crate::store::lease::HeldLease;
use crate::store::writer::spawn_writer_holding;
use crate::store::{PaperRow, RunRow, Store, WriteOp};

/// A new run id: `R{YYYYMMDD}-{HHMMSS}-{4 hex}`.
pub fn new_run_id() -> String {
    let now = chrono::Utc::now();
    format!("R{}-{:04x}", now.format("%Y%m%d-%H%M%S"), fastrand::u16(..))
}

/// Imports the bundled asset library (papers and atoms) so the demo's references exist.
pub fn import_demo_assets(writer: &crate::store::Writer) -> Result<()> {
    let lib: Value = serde_json::from_str(include_str!("../../fixtures/assets/avp_library.json"))?;
    let papers = lib["papers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| PaperRow {
            paper_id: p["paper_id"].as_str().unwrap_or_default().to_string(),
            title: p["title"].as_str().unwrap_or_default().to_string(),
            authors: p["authors"].as_str().map(str::to_string),
            year: p["year"].as_i64(),
            domain: p["domain"].as_str().map(str::to_string),
            abstract_text: p["abstract"].as_str().map(str::to_string),
        })
        .collect();
    let assets = lib["assets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["atom_id"].as_str().unwrap_or_default().to_string(),
                a["atom_type"].as_str().unwrap_or_default().to_string(),
                a["domain"].as_str().map(str::to_string),
                a["paper_id"].as_str().map(str::to_string),
                a["content"].to_string(),
            )
        })
        .collect();
    writer.send(WriteOp::Import { papers, assets })?;
    Ok(())
}

/// How a launched run ended, for the exit code.
pub struct Finished {
    /// Run id.
    pub run_id: String,
    /// Status.
    pub status: RunStatus,
    /// Summary table to print at the end.
    pub summary: String,
}

/// A run started on the engine, its events flowing to `events`.
pub struct Started {
    /// Run id.
    pub run_id: String,
    /// Engine handle.
    pub handle: crate::engine::RunHandle,
    /// Writer handle (dropped at the end so the writer thread can finish).
    pub writer: crate::store::Writer,
    /// The writer thread.
    pub writer_thread: std::thread::JoinHandle<()>,
    /// Committed events.
    pub events: tokio::sync::mpsc::UnboundedReceiver<Vec<Arc<crate::event::Envelope>>>,
}

/// A run about to be resumed: its state read from the log, and the lease this process
/// took on it (so no other process executes it meanwhile; given back if the resume
/// fails before the run starts).
pub struct Resuming {
    /// Run id.
    pub run_id: String,
    /// What the log says.
    pub state: ResumeState,
    /// This process's ownership of the run.
    pub lease: HeldLease,
}

/// Takes the run over (refused while another live process executes it) and reads what
/// a resume needs. A file written by an older plexus is upgraded first.
pub fn prepare_resume(db: &Path, run: &str) -> Result<(Plan, RunConfig, Resuming)> {
    crate::signals::stop_if_signalled()?;
    if !db.is_file() {
        return Err(crate::store::StoreError::Missing(db.to_path_buf()).into());
    }
    drop(crate::store::open_connection(db)?);
    let run_id = Store::open(db)?.run(run)?.run_id;
    let lease = HeldLease::acquire(db, &run_id)?;
    let store = Store::open(db)?;
    let (plan, config, mut state) = load_resume(&store, &run_id)?;
    state.taken_over = lease
        .lease()
        .and_then(|l| l.taken_over.as_ref())
        .map(|(o, why)| LeaseTakenOver {
            previous_pid: o.pid,
            previous_host: o.host.clone(),
            previous_since: o.started_at.clone(),
            previous_heartbeat_ms: o.heartbeat_ms,
            reason: why.as_str().into(),
        });
    Ok((
        plan,
        config,
        Resuming {
            run_id,
            state,
            lease,
        },
    ))
}

/// Opens the database, creates (or resumes) the run and starts the engine.
pub fn start(
    globals: &Globals,
    plan: Plan,
    config: RunConfig,
    resume: Option<Resuming>,
    demo_assets: bool,
) -> Result<Started> {
    config.engine.tokens.encoding.preload();
    let provider = match super::rerun::replay_source(&config) {
        Some(source) => super::rerun::replay_provider(source)?,
        None => {
            let profile = super::providers::profile_named(globals, &config.provider)?;
            crate::provider::build(&profile, &config.simulated).map_err(|e| eyre!("{e}"))?
        }
    };
    // A rerun grades against the assets its recording was graded against.
    let replay_known = match super::rerun::replay_source(&config) {
        Some(source) => Some(super::rerun::known_assets_of(
            source,
            &globals.db,
            resume.as_ref().map(|r| r.run_id.as_str()),
        )?),
        None => None,
    };
    let mut config = config;
    // File references resolve against the directory the run started in (stored with the
    // run, so a resume reads the same files).
    if resume.is_none() && config.engine.workspace.is_relative() {
        if let Ok(cwd) = std::env::current_dir() {
            config.engine.workspace = cwd.join(&config.engine.workspace);
        }
    }
    let (sub_tx, sub_rx) = tokio::sync::mpsc::unbounded_channel();
    // A stop signal before the run exists ends the command with nothing written (a held
    // resume lease is given back as `resume` is dropped).
    crate::signals::stop_if_signalled()?;
    let (run_id, lease, resume) = match resume {
        Some(r) => (r.run_id, r.lease, Some(r.state)),
        None => {
            let id = new_run_id();
            let lease = HeldLease::acquire(&globals.db, &id)?;
            (id, lease, None)
        }
    };
    let (writer, writer_thread) =
        spawn_writer_holding(&globals.db, Some(sub_tx), lease.lease().cloned())?;
    // From here the writer gives the lease back when it stops.
    drop(lease.handed_over());
    let new_run = resume.is_none();
    let begun = crate::signals::stop_if_signalled()
        .map_err(color_eyre::Report::from)
        .and_then(|()| {
            begin(
                globals,
                &plan,
                &config,
                &run_id,
                &provider,
                &writer,
                new_run,
                demo_assets,
            )
        });
    match begun {
        Ok(known_assets) => {
            let known_assets = replay_known.unwrap_or(known_assets);
            let handle = start_run(RunSpec {
                db: Some(globals.db.clone()),
                run_id: run_id.clone(),
                plan: Arc::new(plan),
                provider,
                config: config.engine.clone(),
                writer: writer.clone(),
                known_assets,
                resume,
            });
            Ok(Started {
                run_id,
                handle,
                writer,
                writer_thread,
                events: sub_rx,
            })
        }
        Err(e) => {
            // Let the writer stop (and give the lease back) before the error ends the
            // process.
            drop(writer);
            let _ = writer_thread.join();
            Err(e)
        }
    }
}

/// What a run needs written before its engine starts: the demo's assets, the run row of
/// a new run; returns the asset ids already in the store.
#[allow(clippy::too_many_arguments)]
fn begin(
    globals: &Globals,
    plan: &Plan,
    config: &RunConfig,
    run_id: &str,
    provider: &Arc<dyn crate::provider::Provider>,
    writer: &crate::store::Writer,
    new_run: bool,
    demo_assets: bool,
) -> Result<std::collections::HashSet<String>> {
    if demo_assets {
        import_demo_assets(writer)?;
    }
    if new_run {
        writer.send(WriteOp::CreateRun(Box::new(RunRow::for_plan(
            run_id,
            plan,
            &provider.name(),
            serde_json::to_string(config)?,
        ))))?;
    }
    writer.flush()?;
    Ok(Store::open(&globals.db)?.known_asset_ids()?)
}

impl Started {
    /// Waits for the engine, then for the writer thread to drain (also when the engine
    /// failed: the writer gives the run's lease back as it stops).
    pub async fn finish(self) -> Result<RunStatus> {
        let outcome = self.handle.join.await;
        drop(self.writer);
        // The writer thread ends when the last handle is gone (the engine's were dropped).
        let t = self.writer_thread;
        let _ = tokio::task::spawn_blocking(move || t.join()).await;
        Ok(outcome
            .map_err(|e| eyre!("the engine crashed: {e}"))??
            .status)
    }
}

/// Runs `plan` (new run) or resumes `resume_id`, headless. Returns the final status.
pub async fn run_headless(
    globals: &Globals,
    plan: Plan,
    config: RunConfig,
    resume: Option<Resuming>,
    demo_assets: bool,
) -> Result<Finished> {
    let mut started = start(globals, plan, config, resume, demo_assets)?;
    let run_id = started.run_id.clone();
    crate::errln!("run {run_id}: database {}", globals.db.display());
    let events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let printer = tokio::spawn(print_progress(events));
    let control = started.handle.control.clone();
    let signal_run = run_id.clone();
    let ctrl_c = tokio::spawn(async move {
        let mut signals = crate::signals::stop_signals();
        let mut count = crate::signals::SignalCount::default();
        while let Some(name) = signals.recv().await {
            match count.arrived(std::time::Instant::now()) {
                crate::signals::Verdict::Stop => {
                    crate::errln!(
                        "{name}: stopping; the run stays resumable (another signal within 2 s exits at once)"
                    );
                    let _ = control.send(Control::Interrupt);
                }
                crate::signals::Verdict::ExitNow => {
                    crate::signals::exit_now(name, &signal_run, crate::exit::RUN_FAILED)
                }
                crate::signals::Verdict::StillStopping => {
                    crate::errln!(
                        "{name}: still stopping (another signal within 2 s exits at once)"
                    );
                }
            }
        }
    });
    let status = started.finish().await.wrap_err_with(|| {
        format!("run {run_id} stopped before its end; once the cause is fixed it resumes with: plexus resume {run_id}")
    })?;
    ctrl_c.abort();
    let progress: Progress = printer
        .await
        .map_err(|e| eyre!("progress printer failed: {e}"))?;
    Ok(Finished {
        run_id,
        status,
        summary: progress.summary(),
    })
}

/// Reads what `resume` needs from the database.
pub fn load_resume(store: &Store, run_id: &str) -> Result<(Plan, RunConfig, ResumeState)> {
    let summary = store.run(run_id)?;
    if super::debate::is_debate(&summary.plan_id) {
        return Err(eyre!(
            "run {} is a debate session; a debate is not resumed: start a new one with `plexus debate`, or retrace it with `plexus rerun {}`",
            summary.run_id,
            summary.run_id
        ));
    }
    let status = RunStatus::parse(&summary.status)
        .ok_or_else(|| eyre!("run {run_id} has an unknown status `{}`", summary.status))?;
    // A run that ended is over, except a failed one whose blocked tasks a person's
    // acceptance of a review has freed since.
    if matches!(
        status,
        RunStatus::Succeeded | RunStatus::Partial | RunStatus::Cancelled
    ) {
        return Err(ended(&summary.run_id, &summary.status));
    }
    let (source, plan_json, config_json) = store.run_plan(&summary.run_id)?;
    let plan = parse_plan(
        &plan_json,
        &format!("{source} (snapshot of run {})", summary.run_id),
    )
    .map_err(|e| eyre!("the stored plan no longer validates:\n{e}"))?;
    let config: RunConfig =
        serde_json::from_str(&config_json).wrap_err("the stored run config does not decode")?;
    let mut state = ResumeState {
        previous_status: Some(status),
        recorded_retry: Some(config.engine.retry.clone()),
        ..Default::default()
    };
    let mut statuses: HashMap<String, TaskStatus> = HashMap::new();
    for t in store.tasks(&summary.run_id)? {
        let st = TaskStatus::parse(&t.status).unwrap_or(TaskStatus::Pending);
        if st.is_final() {
            state
                .finished
                .insert(t.task_id.clone(), (st, t.attempts as u32, t.atoms as u32));
        }
        statuses.insert(t.task_id, st);
    }
    if store.accepted_reviews(&summary.run_id)? > 0 {
        state.unblocked = crate::review::unblocked_tasks(&plan, &statuses);
    }
    if status == RunStatus::Failed && state.unblocked.is_empty() {
        let waiting = store
            .review_queue(Some(&summary.run_id))?
            .iter()
            .filter(|i| i.decision.is_none())
            .count();
        return Err(if waiting > 0 {
            eyre!(
                "run {0} already ended (failed); {waiting} task(s) wait for review (plexus review {0}), and accepting one lets the tasks it blocked run on resume",
                summary.run_id
            )
        } else {
            ended(&summary.run_id, &summary.status)
        });
    }
    if !state.unblocked.is_empty() {
        crate::errln!(
            "run {}{}: accepted review(s) unblocked {} task(s), which run now: {}",
            summary.run_id,
            if status == RunStatus::Failed {
                " ended failed"
            } else {
                ""
            },
            state.unblocked.len(),
            state.unblocked.join(", ")
        );
        for t in &state.unblocked {
            state.finished.remove(t);
        }
    }
    // Unfinished tasks keep the attempts they completed; in-flight ones restart.
    for (task, n) in store.invocation_counts(&summary.run_id)? {
        if !state.finished.contains_key(&task) {
            state.attempts.insert(task, n as u32);
        }
    }
    // Calls in flight when the process died: closed as lost by the resume, their tasks
    // restarted.
    state.lost = store.open_calls(&summary.run_id)?;
    // (A call left open long ago, of a task that has finished since, is closed too but
    // restarts nothing.)
    state.interrupted = state
        .lost
        .iter()
        .filter(|c| !state.finished.contains_key(&c.task_id))
        .map(|c| c.task_id.clone())
        .collect();
    state.interrupted.sort();
    state.interrupted.dedup();
    // A lost call was an attempt: the restarted one takes the next number.
    for call in &state.lost {
        if !state.finished.contains_key(&call.task_id) {
            let n = state.attempts.entry(call.task_id.clone()).or_insert(0);
            *n = (*n).max(call.attempt);
        }
    }
    for (task, list) in store.retry_history_timed(&summary.run_id)? {
        if state.finished.contains_key(&task) {
            continue;
        }
        for (ts, r) in &list {
            let due = ts.saturating_add(i64::try_from(r.delay_ms).unwrap_or(i64::MAX));
            state.retry_due.insert((task.clone(), r.batch), due);
        }
        state
            .retries
            .insert(task, list.into_iter().map(|(_, r)| r).collect());
    }
    for (tid, out) in store.task_outputs(&summary.run_id)? {
        if let Ok(v) = serde_json::from_str(&out) {
            state.outputs.insert(tid, v);
        }
    }
    state.last_event = store.last_event(&summary.run_id)?;
    state.next_seq = state.last_event.0 + 1;
    state.grades = store.run_grades(&summary.run_id)?;
    Ok((plan, config, state))
}

/// The refusal to resume a run that ended.
fn ended(run_id: &str, status: &str) -> color_eyre::Report {
    eyre!("run {run_id} already ended ({status}); nothing to resume")
}
