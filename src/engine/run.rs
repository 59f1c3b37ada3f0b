//! The coordinator: owns the DAG state, dispatches ready tasks up to the concurrency
//! limit, blocks downstream of failures (E006), handles pause / cancel / interrupt, and
//! ends the run with its status.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::emit::{Emitter, Scope};
use super::outcome::{StopSignal, TaskOutcome};
use super::request::{constraints_for, prompt_hash};
use super::worker::run_task;
use super::{EngineConfig, EngineError};
use crate::event::{
    AgentInfo, CancelRequested, CrashDetected, Empty, EngineEvent, LeaseTakenOver, RunFinished,
    RunResumed, RunStarted, RunStatus, TaskBlocked, TaskFinished, TaskInfo, TaskStatus,
};
use crate::plan::Plan;
use crate::protocol::{Constraints, ErrorCode, FallbackStrategy, GradeCounts, ResponseOutput};
use crate::provider::Provider;
use crate::store::{WriteOp, Writer};

/// A command to a running run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Stop dispatching new tasks.
    Pause,
    /// Dispatch again.
    Resume,
    /// Stop everything; unfinished tasks end `cancelled`.
    Cancel(String),
    /// Stop everything but leave the run resumable (quit, Ctrl-C).
    Interrupt,
    /// Run a failed or timed-out task again (and the tasks it blocked).
    Retry(String),
    /// A person's decision on a task stopped for review (E007): accepted atoms are
    /// stored and the tasks it blocked run; the request's reply slot gets the outcome.
    Review(crate::review::ReviewRequest),
}

/// State of a run being resumed.
#[derive(Debug, Clone, Default)]
pub struct ResumeState {
    /// Status the run had.
    pub previous_status: Option<RunStatus>,
    /// Final tasks: status, attempts, atoms.
    pub finished: HashMap<String, (TaskStatus, u32, u32)>,
    /// Attempts made by unfinished tasks.
    pub attempts: HashMap<String, u32>,
    /// Tasks that were running when the process died.
    pub interrupted: Vec<String>,
    /// Outputs of finished tasks.
    pub outputs: HashMap<String, ResponseOutput>,
    /// Next event seq.
    pub next_seq: u64,
    /// Last event (seq, ts) before the resume.
    pub last_event: (u64, i64),
    /// Invocations already made per agent.
    pub invocations_per_agent: HashMap<String, u32>,
    /// Grades of the atoms accepted before the resume.
    pub grades: GradeCounts,
    /// The owner this process took the run over from, when it was gone.
    pub taken_over: Option<LeaseTakenOver>,
    /// Retries already scheduled by unfinished tasks since they last started afresh,
    /// in order: their budget and adjustments carry over.
    pub retries: HashMap<String, Vec<crate::event::RetryScheduled>>,
    /// Blocked tasks a person's acceptance of a review freed since the run last ran:
    /// they go back to pending (absent from `finished`).
    pub unblocked: Vec<String>,
}

/// Everything a run needs.
pub struct RunSpec {
    /// Run id.
    pub run_id: String,
    /// The validated plan.
    pub plan: Arc<Plan>,
    /// Provider.
    pub provider: Arc<dyn Provider>,
    /// Settings.
    pub config: EngineConfig,
    /// Store writer.
    pub writer: Writer,
    /// Asset ids that already exist in the store.
    pub known_assets: HashSet<String>,
    /// Set when resuming.
    pub resume: Option<ResumeState>,
    /// The database file `db_query` references read (None: such references fail).
    pub db: Option<std::path::PathBuf>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Run id.
    pub run_id: String,
    /// Final status.
    pub status: RunStatus,
    /// Tasks by status.
    pub tasks: BTreeMap<TaskStatus, u32>,
    /// Atoms accepted.
    pub atoms: u32,
    /// Their grades.
    pub grades: GradeCounts,
}

/// A started run.
pub struct RunHandle {
    /// Send commands here.
    pub control: mpsc::UnboundedSender<Control>,
    /// Resolves when the run ends.
    pub join: tokio::task::JoinHandle<Result<RunOutcome, EngineError>>,
}

/// Shared, read-mostly context of a run's workers.
pub struct RunCtx {
    pub(super) run_id: Arc<str>,
    pub(super) plan: Arc<Plan>,
    pub(super) provider: Arc<dyn Provider>,
    pub(super) config: EngineConfig,
    pub(super) emitter: Emitter,
    pub(super) known_assets: RwLock<rustc_hash::FxHashSet<String>>,
    pub(super) outputs: RwLock<rustc_hash::FxHashMap<usize, Arc<ResponseOutput>>>,
    pub(super) base_constraints: Vec<Constraints>,
    pub(super) db: Option<std::path::PathBuf>,
    agents: rustc_hash::FxHashMap<String, AgentCache>,
    inv_seq: Mutex<rustc_hash::FxHashMap<String, u32>>,
    /// Whether the run was resumed with retries to carry over (the history below is
    /// not looked at otherwise).
    resumed_retries: bool,
    /// Retry history of resumed tasks, by plan index, taken by each task's first run.
    retry_history: Mutex<rustc_hash::FxHashMap<usize, Vec<crate::event::RetryScheduled>>>,
}

struct AgentCache {
    name: Arc<str>,
    prompt: Arc<str>,
    prompt_hash: String,
    prompt_tokens: u64,
}

impl RunCtx {
    pub(super) fn agent_arc(&self, agent: &str) -> Arc<str> {
        self.agents
            .get(agent)
            .map(|a| a.name.clone())
            .unwrap_or_else(|| Arc::from(agent))
    }

    pub(super) fn system_prompt_info(&self, agent: &str) -> (String, u64) {
        self.agents
            .get(agent)
            .map(|a| (a.prompt_hash.clone(), a.prompt_tokens))
            .unwrap_or_default()
    }

    pub(super) fn system_prompt_arc(&self, agent: &str) -> Arc<str> {
        self.agents
            .get(agent)
            .map(|a| a.prompt.clone())
            .unwrap_or_else(|| Arc::from(""))
    }

    /// The retries a resumed task (or `batch` of it) had scheduled; each is handed out
    /// once.
    pub(super) fn take_retry_history(
        &self,
        idx: usize,
        batch: Option<u32>,
    ) -> Vec<crate::event::RetryScheduled> {
        if !self.resumed_retries {
            return Vec::new();
        }
        let mut m = match self.retry_history.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let Some(all) = m.get_mut(&idx) else {
            return Vec::new();
        };
        let (mine, rest) = std::mem::take(all)
            .into_iter()
            .partition(|r| r.batch == batch);
        *all = rest;
        mine
    }

    pub(super) fn next_invocation_seq(&self, agent: &str) -> u32 {
        let mut m = match self.inv_seq.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let n = m.entry(agent.to_string()).or_insert(0);
        *n += 1;
        *n
    }
}

/// Starts a run on the current tokio runtime.
pub fn start_run(spec: RunSpec) -> RunHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let join = tokio::spawn(coordinate(spec, rx));
    RunHandle { control: tx, join }
}

/// A task's place in the coordinator's graph.
pub(super) struct Node {
    /// Current status.
    pub(super) status: TaskStatus,
    /// Dependencies not yet finished (usable, or final for a lenient task).
    pub(super) remaining: usize,
    /// Downstream tasks.
    pub(super) dependents: Vec<usize>,
    /// Invocations made.
    pub(super) attempts: u32,
    /// Atoms accepted.
    pub(super) atoms: u32,
}

async fn coordinate(
    spec: RunSpec,
    mut control: mpsc::UnboundedReceiver<Control>,
) -> Result<RunOutcome, EngineError> {
    let plan = spec.plan.clone();
    let run_id: Arc<str> = Arc::from(spec.run_id.as_str());
    let resume = spec.resume.clone();
    let first_seq = resume.as_ref().map(|r| r.next_seq).unwrap_or(1);
    let emitter = Emitter::new(run_id.clone(), first_seq, spec.writer.clone());
    let agents = plan
        .agents
        .iter()
        .map(|(name, def)| {
            (
                name.clone(),
                AgentCache {
                    name: Arc::from(name.as_str()),
                    prompt: Arc::from(def.system_prompt.as_str()),
                    prompt_hash: prompt_hash(&def.system_prompt),
                    prompt_tokens: spec.config.tokens.count(&def.system_prompt),
                },
            )
        })
        .collect();
    let base_constraints = plan
        .tasks
        .iter()
        .map(|t| {
            constraints_for(
                &plan.agents[&t.agent],
                plan.execution_mode,
                &t.constraints,
                spec.config.min_temperature,
            )
        })
        .collect();
    let index: HashMap<&str, usize> = plan
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    let mut outputs = HashMap::new();
    if let Some(r) = &resume {
        for (tid, v) in &r.outputs {
            if let Some(&i) = index.get(tid.as_str()) {
                outputs.insert(i, Arc::new(v.clone()));
            }
        }
    }
    let ctx = Arc::new(RunCtx {
        run_id: run_id.clone(),
        plan: plan.clone(),
        provider: spec.provider.clone(),
        config: spec.config.clone(),
        emitter,
        known_assets: RwLock::new(spec.known_assets.into_iter().collect()),
        outputs: RwLock::new(outputs.into_iter().collect()),
        base_constraints,
        db: spec.db.clone(),
        agents,
        inv_seq: Mutex::new(
            resume
                .as_ref()
                .map(|r| r.invocations_per_agent.clone().into_iter().collect())
                .unwrap_or_default(),
        ),
        resumed_retries: resume.as_ref().is_some_and(|r| !r.retries.is_empty()),
        retry_history: Mutex::new(
            resume
                .as_ref()
                .map(|r| {
                    r.retries
                        .iter()
                        .filter_map(|(t, h)| Some((*index.get(t.as_str())?, h.clone())))
                        .collect()
                })
                .unwrap_or_default(),
        ),
    });
    let em = &ctx.emitter;
    let run_scope = Scope::default();

    // The graph.
    let mut nodes: Vec<Node> = plan
        .tasks
        .iter()
        .map(|t| Node {
            status: TaskStatus::Pending,
            remaining: t.depends_on.len(),
            dependents: Vec::new(),
            attempts: 0,
            atoms: 0,
        })
        .collect();
    for (i, t) in plan.tasks.iter().enumerate() {
        for d in &t.depends_on {
            if let Some(&j) = index.get(d.as_str()) {
                nodes[j].dependents.push(i);
            }
        }
    }
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
        run_id: run_id.to_string(),
        status,
        tasks,
        atoms,
        grades: totals,
    })
}

fn tally(nodes: &[Node]) -> (BTreeMap<TaskStatus, u32>, u32) {
    let mut tasks: BTreeMap<TaskStatus, u32> = BTreeMap::new();
    for n in nodes {
        *tasks.entry(n.status).or_insert(0) += 1;
    }
    (tasks, nodes.iter().map(|n| n.atoms).sum())
}

/// The run's status from its tasks and how it was stopped.
fn final_status(nodes: &[Node], stopping: Option<StopSignal>) -> RunStatus {
    match stopping {
        Some(StopSignal::Cancel) => RunStatus::Cancelled,
        Some(StopSignal::Interrupt) => RunStatus::Interrupted,
        _ if nodes.iter().any(|n| !n.status.is_final()) => RunStatus::Interrupted,
        _ => status_after(nodes),
    }
}

/// The status of a run whose tasks are all final.
pub(super) fn status_after(nodes: &[Node]) -> RunStatus {
    super::status::run_status_of(nodes.iter().map(|n| n.status))
}

/// Writes the run's status row; a run that ended (not interrupted) gets its finish time.
pub(super) fn write_run_status(ctx: &RunCtx, status: RunStatus) -> Result<(), EngineError> {
    let ended = !matches!(
        status,
        RunStatus::Running | RunStatus::Paused | RunStatus::Interrupted
    );
    ctx.emitter.write(WriteOp::RunStatus {
        run_id: ctx.run_id.to_string(),
        status: status.as_str().into(),
        finished_at: ended.then(crate::clock::now_rfc3339),
    })?;
    Ok(())
}

/// The `run_resumed` fact for the current graph.
pub(super) fn resumed(nodes: &[Node], previous: RunStatus) -> EngineEvent {
    let finished = nodes.iter().filter(|n| n.status.is_final()).count() as u32;
    EngineEvent::RunResumed(RunResumed {
        previous_status: previous,
        finished_tasks: finished,
        remaining_tasks: nodes.len() as u32 - finished,
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

pub(super) fn task_scope(ctx: &RunCtx, i: usize) -> Scope {
    let t = &ctx.plan.tasks[i];
    Scope {
        task_id: Some(Arc::from(t.task_id.as_str())),
        invocation_id: None,
        agent: Some(ctx.agent_arc(&t.agent)),
    }
}

pub(super) fn fallback_allows(plan: &Plan, i: usize) -> bool {
    matches!(
        plan.tasks[i].fallback_config.as_ref().map(|f| f.strategy),
        Some(FallbackStrategy::Skip | FallbackStrategy::UseDefault)
    )
}

pub(super) fn write_task(
    ctx: &RunCtx,
    i: usize,
    n: &Node,
    error: Option<ErrorCode>,
    invocation: Option<&Arc<str>>,
) -> Result<(), EngineError> {
    let t = &ctx.plan.tasks[i];
    ctx.emitter.write(WriteOp::TaskState {
        run_id: ctx.run_id.clone(),
        task_id: Arc::from(t.task_id.as_str()),
        status: n.status.as_str(),
        attempts: n.attempts,
        atoms: n.atoms,
        error_code: error.map(|e| e.as_str()),
        final_invocation_id: invocation.cloned(),
    })?;
    Ok(())
}

/// Marks `i` blocked (E006) because `upstream` failed, and everything below it.
///
/// A lenient dependent (fallback skip / use_default) counts the blocked task as finished;
/// when that was its last dependency it becomes ready and is queued on `ready`. Without a
/// queue (resume) the caller's walk over finished tasks does the counting.
fn block(
    ctx: &RunCtx,
    nodes: &mut [Node],
    i: usize,
    upstream: usize,
    mut ready: Option<&mut VecDeque<usize>>,
) -> Result<(), EngineError> {
    let mut stack = vec![(i, upstream)];
    while let Some((i, up)) = stack.pop() {
        if nodes[i].status.is_final() || nodes[i].status == TaskStatus::Running {
            continue;
        }
        nodes[i].status = TaskStatus::Blocked;
        let up_id = ctx.plan.tasks[up].task_id.clone();
        let scope = task_scope(ctx, i);
        ctx.emitter.emit(
            &scope,
            EngineEvent::TaskBlocked(TaskBlocked {
                error_code: ErrorCode::E006,
                upstream: up_id.clone(),
                message: format!("dependency `{up_id}` ended {}", nodes[up].status.as_str()),
            }),
        )?;
        write_task(ctx, i, &nodes[i], Some(ErrorCode::E006), None)?;
        ctx.emitter.emit(
            &scope,
            EngineEvent::TaskFinished(TaskFinished {
                status: TaskStatus::Blocked,
                attempts: nodes[i].attempts,
                atoms: 0,
                error_code: Some(ErrorCode::E006),
                error_message: None,
            }),
        )?;
        for &d in &nodes[i].dependents.clone() {
            if fallback_allows(&ctx.plan, d) {
                // On resume (no queue) the caller's walk over finished tasks counts it.
                if let Some(q) = ready.as_deref_mut() {
                    if nodes[d].status == TaskStatus::Pending {
                        nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
                        if nodes[d].remaining == 0 {
                            nodes[d].status = TaskStatus::Ready;
                            ctx.emitter
                                .emit(&task_scope(ctx, d), EngineEvent::TaskReady(Empty {}))?;
                            q.push_back(d);
                        }
                    }
                }
                continue;
            }
            stack.push((d, i));
        }
    }
    Ok(())
}

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
