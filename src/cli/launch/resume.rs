//! Resuming a run: taking it over from the process that ran it, and reading from its
//! log what the engine needs to go on where it stopped.

use std::collections::HashMap;
use std::path::Path;

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::config::RunConfig;
use crate::data::store::lease::HeldLease;
use crate::data::store::Store;
use crate::model::event::{LeaseTakenOver, RunStatus, TaskStatus};
use crate::model::plan::{parse_plan, Plan};
use crate::run::engine::ResumeState;

/// The command that resumes `run` in database `db`: `plexus resume RUN`, with
/// `--db PATH` when `db` is not the one plexus opens by default.
pub fn resume_command(db: &std::path::Path, run: &str) -> String {
    super::next_steps::plexus_command(db, &format!("resume {run}"))
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
    crate::base::signals::stop_if_signalled()?;
    if !db.is_file() {
        return Err(crate::data::store::StoreError::Missing(db.to_path_buf()).into());
    }
    drop(crate::data::store::open_connection(db)?);
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

/// Reads what `resume` needs from the database.
pub fn load_resume(store: &Store, run_id: &str) -> Result<(Plan, RunConfig, ResumeState)> {
    let summary = store.run(run_id)?;
    let status = resumable_status(store, &summary.run_id, &summary.plan_id, run_id)?;
    let run_id = summary.run_id.as_str();
    let (plan, config) = stored_plan(store, run_id)?;
    let mut state = ResumeState {
        previous_status: Some(status),
        spent_usd: summary.spend.usd,
        recorded_retry: Some(config.engine.retry.clone()),
        ..Default::default()
    };
    read_finished(store, run_id, &plan, &mut state)?;
    go_on_after_review(run_id, status, &mut state)?;
    read_attempts(store, run_id, &mut state)?;
    read_recorded(store, run_id, &mut state)?;
    for (tid, out) in store.task_outputs(run_id)? {
        if let Ok(v) = serde_json::from_str(&out) {
            state.outputs.insert(tid, v);
        }
    }
    state.last_event = store.last_event(run_id)?;
    state.next_seq = state.last_event.0 + 1;
    state.grades = store.run_grades(run_id)?;
    Ok((plan, config, state))
}

/// The run's status as its last owner left it, when a resume can take it up: not a
/// debate, and not a run that ended (a failed one, or one that waited for review, is
/// checked once the reviews are read). `asked` is the id the caller gave.
fn resumable_status(store: &Store, run_id: &str, plan_id: &str, asked: &str) -> Result<RunStatus> {
    if crate::features::debate::is_debate(plan_id) {
        return Err(eyre!(
            "run {} is a debate session; a debate is not resumed: start a new one with `plexus debate`, or retrace it with `plexus rerun {}`",
            run_id,
            run_id
        ));
    }
    // As its last owner left it: a killed run says `running`, and the resume logs the
    // crash it finds.
    let stored = store.stored_run_status(run_id)?;
    let status = RunStatus::parse(&stored)
        .ok_or_else(|| eyre!("run {asked} has an unknown status `{stored}`"))?;
    // A run that ended is over, except a failed one (or one that waited for review)
    // whose blocked tasks a person's acceptance of a review has freed since.
    if matches!(
        status,
        RunStatus::Succeeded | RunStatus::Partial | RunStatus::Cancelled
    ) {
        return Err(ended(run_id, status));
    }
    Ok(status)
}

/// The run's plan and config as stored with it.
fn stored_plan(store: &Store, run_id: &str) -> Result<(Plan, RunConfig)> {
    let (source, plan_json, config_json) = store.run_plan(run_id)?;
    let plan = parse_plan(&plan_json, &format!("{source} (snapshot of run {run_id})"))
        .map_err(|e| eyre!("the stored plan no longer validates:\n{e}"))?;
    let config: RunConfig =
        serde_json::from_str(&config_json).wrap_err("the stored run config does not decode")?;
    Ok((plan, config))
}

/// The finished tasks, those an accepted review unblocked, and those waiting for review.
fn read_finished(store: &Store, run_id: &str, plan: &Plan, state: &mut ResumeState) -> Result<()> {
    let mut statuses: HashMap<String, TaskStatus> = HashMap::new();
    for t in store.tasks(run_id)? {
        let st = TaskStatus::parse(&t.status).unwrap_or(TaskStatus::Pending);
        if st.is_final() {
            state
                .finished
                .insert(t.task_id.clone(), (st, t.attempts as u32, t.atoms as u32));
        }
        statuses.insert(t.task_id, st);
    }
    if store.accepted_reviews(run_id)? > 0 {
        state.unblocked = crate::run::review::unblocked_tasks(plan, &statuses);
    }
    state.awaiting_review = super::next_steps::waiting_tasks(store, run_id)?
        .into_iter()
        .collect();
    Ok(())
}

/// A failed run (or one that waited for review) goes on only with the tasks accepted
/// reviews unblocked: refused without any, else they run again (said on stderr).
fn go_on_after_review(run_id: &str, status: RunStatus, state: &mut ResumeState) -> Result<()> {
    if status.is_failed_or_waiting() && state.unblocked.is_empty() {
        let waiting = state.awaiting_review.len();
        return Err(if waiting > 0 {
            crate::data::exit::RunEnded {
                status,
                message: format!(
                    "run {0} already ended ({1}); {waiting} task(s) wait for review: decide with `plexus review {0} TASK --accept` or `--reject --reason TEXT` (the list: `plexus review {0}`); accepting one lets the tasks it blocked run on `plexus resume {0}`",
                    run_id,
                    status.label()
                ),
            }
            .into()
        } else {
            ended(run_id, status)
        });
    }
    if !state.unblocked.is_empty() {
        crate::errln!(
            "run {}{}: accepted review(s) unblocked {} task(s), which run now: {}",
            run_id,
            match status {
                RunStatus::Failed => " ended failed",
                RunStatus::AwaitingReview => " ended awaiting review",
                _ => "",
            },
            state.unblocked.len(),
            state.unblocked.join(", ")
        );
        for t in &state.unblocked {
            state.finished.remove(t);
        }
    }
    Ok(())
}

/// The attempts of the unfinished tasks: those completed, the calls lost in flight
/// (their tasks restart), and the retries scheduled with when they are due.
fn read_attempts(store: &Store, run_id: &str, state: &mut ResumeState) -> Result<()> {
    // Unfinished tasks keep the attempts they completed; in-flight ones restart.
    for (task, n) in store.invocation_counts(run_id)? {
        if !state.finished.contains_key(&task) {
            state.attempts.insert(task, n as u32);
        }
    }
    // Calls in flight when the process died: closed as lost by the resume, their tasks
    // restarted.
    state.lost = store.open_calls(run_id)?;
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
    for (task, list) in store.retry_history_timed(run_id)? {
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
    Ok(())
}

/// Calls that succeeded for tasks that had not finished (the process stopped between
/// the two): the resume ends those tasks with them rather than calling again.
fn read_recorded(store: &Store, run_id: &str, state: &mut ResumeState) -> Result<()> {
    for (task, batch, invocation_id, attempt, output, grades) in
        store.unfinished_successes(run_id)?
    {
        if state.finished.contains_key(&task) {
            continue;
        }
        let (Ok(output), Ok(grades)) =
            (serde_json::from_str(&output), serde_json::from_str(&grades))
        else {
            tracing::warn!("call {invocation_id} of task {task}: its stored answer does not decode; the task runs again");
            continue;
        };
        state.recorded.insert(
            (task, batch),
            crate::run::engine::RecordedSuccess {
                invocation_id,
                attempt,
                output,
                grades,
            },
        );
    }
    Ok(())
}

/// The refusal to resume a run that ended: it exits with the run's own outcome.
fn ended(run_id: &str, status: RunStatus) -> color_eyre::Report {
    crate::data::exit::RunEnded {
        status,
        message: format!(
            "run {run_id} already ended ({}); nothing to resume",
            status.as_str()
        ),
    }
    .into()
}
