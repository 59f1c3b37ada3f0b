//! The coordinator: owns the DAG state, dispatches ready tasks up to the concurrency
//! limit, blocks downstream of failures (E006), handles pause / cancel / interrupt, and
//! ends the run with its status.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::emit::Scope;
use super::graph::{
    self, block, fallback_allows, final_status, resumed, status_after, tally, write_task, Node,
};
use super::outcome::{StopSignal, TaskOutcome};
use super::run_ctx::{task_scope, write_run_status, RunCtx};
use super::run_spec::{Control, RunHandle, RunOutcome, RunSpec};
use super::worker::run_task;
use super::EngineError;
use crate::event::{
    AgentInfo, CancelRequested, CrashDetected, Empty, EngineEvent, RunFinished, RunStarted,
    RunStatus, TaskFinished, TaskInfo, TaskStatus,
};
use crate::protocol::{ErrorCode, GradeCounts};

/// Starts a run on the current tokio runtime.
pub fn start_run(spec: RunSpec) -> RunHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let join = tokio::spawn(coordinate(spec, rx));
    RunHandle { control: tx, join }
}

async fn coordinate(
    spec: RunSpec,
    mut control: mpsc::UnboundedReceiver<Control>,
) -> Result<RunOutcome, EngineError> {
    let plan = spec.plan.clone();
    let resume = spec.resume.clone();
    let index: HashMap<&str, usize> = plan
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    let ctx = Arc::new(RunCtx::new(spec, &index));
    let em = &ctx.emitter;
    let run_scope = Scope::default();

    // The graph.
    let mut nodes = graph::build(&plan, &index);
    let mut totals = resume.as_ref().map(|r| r.grades).unwrap_or_default();
    match &resume {
        None => {
            em.emit(
                &run_scope,
                EngineEvent::RunStarted(RunStarted {
                    plan_id: plan.plan_id.clone(),
                    execution_mode: plan.execution_mode.as_str().to_string(),
                    provider: ctx.provider.name(),
                    seed: ctx.config.seed,
                    concurrency: ctx.config.concurrency,
                    agents: plan
                        .agents
                        .values()
                        .map(|a| AgentInfo {
                            name: a.name.clone(),
                            max_input_tokens: a.max_input_tokens,
                            data_area_tokens: a.data_area_tokens,
                        })
                        .collect(),
                    tasks: plan
                        .tasks
                        .iter()
                        .map(|t| TaskInfo {
                            task_id: t.task_id.clone(),
                            agent: t.agent.clone(),
                            depends_on: t.depends_on.clone(),
                        })
                        .collect(),
                }),
            )?;
        }
        Some(r) => {
            if let Some(t) = &r.taken_over {
                em.emit(&run_scope, EngineEvent::LeaseTakenOver(t.clone()))?;
            }
            if r.previous_status == Some(RunStatus::Running)
                || r.previous_status == Some(RunStatus::Paused)
            {
                em.emit(
                    &run_scope,
                    EngineEvent::CrashDetected(CrashDetected {
                        last_seq: r.last_event.0,
                        last_ts: r.last_event.1,
                        interrupted_tasks: r.interrupted.clone(),
                    }),
                )?;
            }
            for (tid, (status, attempts, atoms)) in &r.finished {
                if let Some(&i) = index.get(tid.as_str()) {
                    nodes[i].status = *status;
                    nodes[i].attempts = *attempts;
                    nodes[i].atoms = *atoms;
                }
            }
            for (tid, a) in &r.attempts {
                if let Some(&i) = index.get(tid.as_str()) {
                    nodes[i].attempts = *a;
                }
            }
            em.emit(
                &run_scope,
                resumed(&nodes, r.previous_status.unwrap_or(RunStatus::Interrupted)),
            )?;
            write_run_status(&ctx, RunStatus::Running)?;
            for i in r.unblocked.iter().filter_map(|t| index.get(t.as_str())) {
                super::reopen::reset_task(
                    &ctx,
                    &mut nodes,
                    *i,
                    "unblocked: a review upstream was accepted",
                )?;
            }
            // Re-apply finished tasks to their dependents.
            let order: Vec<usize> = plan.layers().into_iter().flatten().collect();
            for &i in &order {
                let st = nodes[i].status;
                if st.is_final() {
                    let deps = nodes[i].dependents.clone();
                    for d in deps {
                        if nodes[d].status.is_final() {
                            continue;
                        }
                        if st.satisfies_dependents() || fallback_allows(&plan, d) {
                            nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
                        } else {
                            block(&ctx, &mut nodes, d, i, None)?;
                        }
                    }
                }
            }
        }
    }

    let mut ready: VecDeque<usize> = VecDeque::new();
    for (i, n) in nodes.iter_mut().enumerate() {
        if n.status == TaskStatus::Pending && n.remaining == 0 {
            n.status = TaskStatus::Ready;
            ready.push_back(i);
        }
    }
    for &i in &ready {
        em.emit(&task_scope(&ctx, i), EngineEvent::TaskReady(Empty {}))?;
    }

    let (stop_tx, stop_rx) = watch::channel(StopSignal::None);
    let mut workers: JoinSet<TaskOutcome> = JoinSet::new();
    let mut running: HashMap<tokio::task::Id, usize> = HashMap::new();
    let mut paused = false;
    let mut stopping: Option<StopSignal> = None;
    let mut control_open = true;
    let mut reported = false;
    let concurrency = ctx.config.concurrency.max(1);
    let backlog = ctx.emitter.writer().stats().clone();
    loop {
        let mut backlog_wait = false;
        while stopping.is_none() && !paused && workers.len() < concurrency && !ready.is_empty() {
            if backlog.backlog.load(std::sync::atomic::Ordering::Relaxed) > ctx.config.backlog_limit
            {
                backlog_wait = true;
                break;
            }
            if let Some(f) = ctx.emitter.writer().failure() {
                return Err(EngineError::Internal(format!(
                    "the database writer failed: {f}"
                )));
            }
            let Some(i) = ready.pop_front() else { break };
            nodes[i].status = TaskStatus::Running;
            let h = workers.spawn(run_task(ctx.clone(), i, nodes[i].attempts, stop_rx.clone()));
            running.insert(h.id(), i);
        }
        if workers.is_empty() && (ready.is_empty() || stopping.is_some()) {
            if stopping.is_some() || !ctx.config.hold_open || !control_open {
                break;
            }
            // Held open: report the outcome once, then wait for a retry or a quit. A pause
            // ends here (nothing is left to hold back), so a retry dispatches at once.
            if paused {
                paused = false;
                em.emit(&run_scope, EngineEvent::RunUnpaused(Empty {}))?;
            }
            if !reported {
                let status = final_status(&nodes, None);
                report_end(&ctx, &run_scope, &nodes, status, totals)?;
                reported = true;
            }
            match control.recv().await {
                None => break,
                Some(Control::Review(req)) => {
                    if super::review::handle(
                        &ctx,
                        &mut nodes,
                        &mut ready,
                        &mut totals,
                        req,
                        true,
                        false,
                    )? {
                        reported = false;
                    }
                }
                Some(Control::Retry(task)) => {
                    let previous = status_after(&nodes);
                    if super::reopen::retry(&ctx, &mut nodes, &mut ready, &task)? {
                        reported = false;
                        em.emit(&run_scope, resumed(&nodes, previous))?;
                        write_run_status(&ctx, RunStatus::Running)?;
                        for &i in &ready {
                            em.emit(&task_scope(&ctx, i), EngineEvent::TaskReady(Empty {}))?;
                        }
                    }
                }
                Some(Control::Interrupt | Control::Cancel(_)) => break,
                // Nothing runs while held open: pause and resume have nothing to act on.
                Some(Control::Pause | Control::Resume) => {}
            }
            continue;
        }
        tokio::select! {
            res = workers.join_next_with_id(), if !workers.is_empty() => {
                let Some(res) = res else { continue };
                let (id, outcome) = match res {
                    Ok((id, o)) => (id, o),
                    Err(e) => {
                        let id = e.id();
                        let msg = format!("worker crashed: {e}");
                        tracing::error!("{msg}");
                        (id, TaskOutcome { status: TaskStatus::Failed, attempts: 0, atoms: 0, error_code: Some(ErrorCode::E008), output: None, grades: Default::default(), invocation_id: None, error_message: Some(msg) })
                    }
                };
                let Some(i) = running.remove(&id) else { continue };
                finish(&ctx, &mut nodes, &mut ready, i, outcome, &mut totals)?;
            }
            cmd = control.recv(), if control_open => match cmd {
                None => control_open = false,
                Some(Control::Pause) => if !paused && stopping.is_none() {
                    paused = true;
                    em.emit(&run_scope, EngineEvent::RunPaused(Empty {}))?;
                    write_run_status(&ctx, RunStatus::Paused)?;
                },
                Some(Control::Resume) => if paused {
                    paused = false;
                    em.emit(&run_scope, EngineEvent::RunUnpaused(Empty {}))?;
                    write_run_status(&ctx, RunStatus::Running)?;
                },
                Some(Control::Cancel(reason)) => if stopping.is_none() {
                    em.emit(&run_scope, EngineEvent::CancelRequested(CancelRequested { reason }))?;
                    stopping = Some(StopSignal::Cancel);
                    let _ = stop_tx.send(StopSignal::Cancel);
                },
                Some(Control::Interrupt) => if stopping.is_none() {
                    stopping = Some(StopSignal::Interrupt);
                    let _ = stop_tx.send(StopSignal::Interrupt);
                },
                Some(Control::Review(req)) => {
                    super::review::handle(&ctx, &mut nodes, &mut ready, &mut totals, req, false, stopping.is_some())?;
                },
                Some(Control::Retry(task)) => if stopping.is_none() {
                    let before = ready.len();
                    super::reopen::retry(&ctx, &mut nodes, &mut ready, &task)?;
                    for &i in ready.iter().skip(before) {
                        em.emit(&task_scope(&ctx, i), EngineEvent::TaskReady(Empty {}))?;
                    }
                },
            },
            _ = tokio::time::sleep(Duration::from_millis(2)), if backlog_wait => {}
            // paused with nobody left to resume it: leave the run resumable
            else => break,
        }
    }

    // The end.
    if stopping == Some(StopSignal::Cancel) {
        for (i, node) in nodes.iter_mut().enumerate() {
            if !node.status.is_final() && node.status != TaskStatus::Cancelled {
                node.status = TaskStatus::Cancelled;
                write_task(&ctx, i, node, None, None)?;
                em.emit(
                    &task_scope(&ctx, i),
                    EngineEvent::TaskFinished(TaskFinished {
                        status: TaskStatus::Cancelled,
                        attempts: node.attempts,
                        atoms: 0,
                        error_code: None,
                        error_message: None,
                    }),
                )?;
            }
        }
    }
    let status = final_status(&nodes, stopping);
    let (tasks, atoms) = if reported && stopping.is_none() {
        // Held open and already reported: the outcome stands.
        tally(&nodes)
    } else {
        report_end(&ctx, &run_scope, &nodes, status, totals)?
    };
    ctx.emitter.writer().flush()?;
    Ok(RunOutcome {
        run_id: ctx.run_id.to_string(),
        status,
        tasks,
        atoms,
        grades: totals,
    })
}

/// Emits `run_finished` and writes the run's status.
fn report_end(
    ctx: &RunCtx,
    run_scope: &Scope,
    nodes: &[Node],
    status: RunStatus,
    totals: GradeCounts,
) -> Result<(BTreeMap<TaskStatus, u32>, u32), EngineError> {
    let (tasks, atoms) = tally(nodes);
    ctx.emitter.emit(
        run_scope,
        EngineEvent::RunFinished(RunFinished {
            status,
            tasks: tasks.clone(),
            atoms,
            grades: totals,
        }),
    )?;
    write_run_status(ctx, status)?;
    Ok((tasks, atoms))
}

/// Records task `i`'s outcome, releases or blocks its dependents, and frees the
/// outputs nobody downstream still needs.
fn finish(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    i: usize,
    outcome: TaskOutcome,
    totals: &mut GradeCounts,
) -> Result<(), EngineError> {
    nodes[i].attempts = outcome.attempts;
    nodes[i].atoms = outcome.atoms;
    nodes[i].status = outcome.status;
    if outcome.status == TaskStatus::Pending || outcome.status == TaskStatus::Cancelled {
        // interrupted: back to pending, resumable; cancelled: recorded at the end
        write_task(ctx, i, &nodes[i], None, outcome.invocation_id.as_ref())?;
        if outcome.status == TaskStatus::Cancelled {
            ctx.emitter.emit(
                &task_scope(ctx, i),
                EngineEvent::TaskFinished(TaskFinished {
                    status: TaskStatus::Cancelled,
                    attempts: outcome.attempts,
                    atoms: 0,
                    error_code: None,
                    error_message: None,
                }),
            )?;
        }
        return Ok(());
    }
    totals.merge(&outcome.grades);
    write_task(
        ctx,
        i,
        &nodes[i],
        outcome.error_code,
        outcome.invocation_id.as_ref(),
    )?;
    ctx.emitter.emit(
        &task_scope(ctx, i),
        EngineEvent::TaskFinished(TaskFinished {
            status: outcome.status,
            attempts: outcome.attempts,
            atoms: outcome.atoms,
            error_code: outcome.error_code,
            error_message: outcome.error_message,
        }),
    )?;
    if let Some(out) = &outcome.output {
        if let Ok(mut o) = ctx.outputs.write() {
            o.insert(i, out.clone());
        }
    }
    let satisfied = outcome.status.satisfies_dependents();
    for d in nodes[i].dependents.clone() {
        if nodes[d].status != TaskStatus::Pending {
            continue;
        }
        if satisfied || fallback_allows(&ctx.plan, d) {
            nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
            if nodes[d].remaining == 0 {
                nodes[d].status = TaskStatus::Ready;
                ctx.emitter
                    .emit(&task_scope(ctx, d), EngineEvent::TaskReady(Empty {}))?;
                ready.push_back(d);
            }
        } else {
            block(ctx, nodes, d, i, Some(ready))?;
        }
    }
    // Free outputs nobody downstream still needs (kept when a retry may need them).
    let deps = if ctx.config.hold_open {
        Vec::new()
    } else {
        ctx.plan.tasks[i].depends_on.clone()
    };
    for dep in deps {
        if let Some(j) = ctx.plan.task_index(&dep) {
            if nodes[j]
                .dependents
                .iter()
                .all(|&k| nodes[k].status.is_final())
            {
                if let Ok(mut o) = ctx.outputs.write() {
                    o.remove(&j);
                }
            }
        }
    }
    Ok(())
}
