//! The coordinator: owns the DAG state, dispatches ready tasks up to the concurrency
//! limit, blocks downstream of failures (E006), handles pause / cancel / interrupt, and
//! ends the run with its status.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::{JoinError, JoinSet};

use super::emit::Scope;
use super::graph::{
    self, final_status, report_end, resumed, status_after, tally, write_task, Node,
};
use super::outcome::{panic_message, StopSignal, TaskOutcome};
use super::run_ctx::{task_scope, write_run_status, RunCtx};
use super::run_spec::{Control, Retained, RunHandle, RunOutcome, RunSpec, RETAINED_EVERY};
use super::worker::run_task;
use super::EngineError;
use crate::base::protocol::{ErrorCode, GradeCounts};
use crate::model::event::{
    AgentInfo, BudgetReached, CancelRequested, Empty, EngineEvent, RunStarted, RunStatus,
    TaskFinished, TaskInfo, TaskStatus,
};

/// Starts a run on the current tokio runtime.
pub fn start_run(spec: RunSpec) -> RunHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let join = tokio::spawn(coordinate(spec, rx));
    RunHandle { control: tx, join }
}

/// Runs a plan from start (or resume) to its end.
async fn coordinate(
    spec: RunSpec,
    control: mpsc::UnboundedReceiver<Control>,
) -> Result<RunOutcome, EngineError> {
    let mut run = Coordinator::start(spec, control)?;
    run.schedule().await?;
    let crashed = run.crashed.take();
    let outcome = run.end()?;
    match crashed {
        Some(why) => Err(EngineError::WorkerCrashed(why)),
        None => Ok(outcome),
    }
}

/// What woke the scheduling loop.
enum Wake {
    /// A worker ended (None: there was none).
    Worker(Option<Result<(tokio::task::Id, TaskOutcome), JoinError>>),
    /// A command came in (None: nobody can send any more).
    Control(Option<Control>),
    /// The wait for the store's backlog to shrink is over.
    Backlog,
    /// Nothing can wake the loop: paused with nobody left to resume it.
    Idle,
}

/// A run's coordinator: the graph, the ready queue, the running workers and how the run
/// is being steered.
struct Coordinator {
    /// What the workers share.
    ctx: Arc<RunCtx>,
    /// The graph, by plan index.
    nodes: Vec<Node>,
    /// Tasks ready to dispatch, in order.
    ready: VecDeque<usize>,
    /// Grades of the atoms accepted.
    totals: GradeCounts,
    /// Commands from the run's handle.
    control: mpsc::UnboundedReceiver<Control>,
    /// Whether the handle can still send commands.
    control_open: bool,
    /// Tells the workers to stop.
    stop_tx: watch::Sender<StopSignal>,
    /// What each worker watches for a stop.
    stop_rx: watch::Receiver<StopSignal>,
    /// The running workers.
    workers: JoinSet<TaskOutcome>,
    /// The task each worker runs.
    running: HashMap<tokio::task::Id, usize>,
    /// Whether dispatching is paused.
    paused: bool,
    /// How the run is being stopped, once it is.
    stopping: Option<StopSignal>,
    /// Whether a held-open run has reported its outcome.
    reported: bool,
    /// What a worker that panicked said: the run stops, interrupted.
    crashed: Option<String>,
    /// Tasks the workers finished (final outcomes).
    finished: u32,
    /// What the engine held for finished tasks, sampled as they finish.
    retained: Vec<Retained>,
    /// The run's money budget is spent: nothing more is dispatched, and the run ends
    /// `budget_reached` once its workers are done.
    over_budget: bool,
}

impl Coordinator {
    /// Sets the run up: its context and graph, the opening facts of a new or resumed
    /// run, and the first ready tasks.
    fn start(
        spec: RunSpec,
        control: mpsc::UnboundedReceiver<Control>,
    ) -> Result<Coordinator, EngineError> {
        let plan = spec.plan.clone();
        let resume = spec.resume.clone();
        let ctx = Arc::new(RunCtx::new(spec));
        let (stop_tx, stop_rx) = watch::channel(StopSignal::None);
        let mut run = Coordinator {
            ctx,
            nodes: graph::build(&plan),
            ready: VecDeque::new(),
            totals: resume.as_ref().map(|r| r.grades).unwrap_or_default(),
            control,
            control_open: true,
            stop_tx,
            stop_rx,
            workers: JoinSet::new(),
            running: HashMap::new(),
            paused: false,
            stopping: None,
            reported: false,
            crashed: None,
            finished: 0,
            retained: Vec::new(),
            over_budget: false,
        };
        match &resume {
            None => run.announce()?,
            Some(r) => super::resume::restore(&run.ctx, &mut run.nodes, r)?,
        }
        run.queue_roots()?;
        Ok(run)
    }

    /// Opens a new run: `run_started` with the plan's agents and tasks.
    fn announce(&self) -> Result<(), EngineError> {
        let ctx = &self.ctx;
        let plan = &ctx.plan;
        ctx.emitter.emit(
            &Scope::default(),
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
                        agent: t.agent.to_string(),
                        depends_on: t.depends_on.iter().map(|d| d.to_string()).collect(),
                    })
                    .collect(),
            }),
        )?;
        Ok(())
    }

    /// Queues every pending task whose dependencies are met, in plan order.
    fn queue_roots(&mut self) -> Result<(), EngineError> {
        for (i, n) in self.nodes.iter_mut().enumerate() {
            if n.status == TaskStatus::Pending && n.remaining == 0 {
                n.status = TaskStatus::Ready;
                self.ready.push_back(i);
            }
        }
        self.emit_ready(0)
    }

    /// Emits `task_ready` for the queued tasks from position `from` on.
    fn emit_ready(&self, from: usize) -> Result<(), EngineError> {
        for &i in self.ready.iter().skip(from) {
            self.ctx
                .emitter
                .emit(&task_scope(&self.ctx, i), EngineEvent::TaskReady(Empty {}))?;
        }
        Ok(())
    }

    /// The scheduling loop: dispatches ready tasks, takes in finished tasks and
    /// commands, and holds a finished run open for retries and reviews when asked to.
    /// Returns once the run is over, stopped, or paused with nobody left to resume it.
    async fn schedule(&mut self) -> Result<(), EngineError> {
        loop {
            let backlog_wait = self.dispatch()?;
            let held_back = self.stopping.is_some() || self.over_budget;
            if self.workers.is_empty() && (self.ready.is_empty() || held_back) {
                if held_back || !self.ctx.config.hold_open || !self.control_open {
                    break;
                }
                if !self.hold_open().await? {
                    break;
                }
                continue;
            }
            let wake = tokio::select! {
                res = self.workers.join_next_with_id(), if !self.workers.is_empty() => Wake::Worker(res),
                cmd = self.control.recv(), if self.control_open => Wake::Control(cmd),
                _ = tokio::time::sleep(Duration::from_millis(2)), if backlog_wait => Wake::Backlog,
                else => Wake::Idle,
            };
            match wake {
                Wake::Worker(Some(res)) => self.worker_ended(res)?,
                Wake::Worker(None) | Wake::Backlog => {}
                Wake::Control(cmd) => self.command(cmd)?,
                Wake::Idle => break,
            }
        }
        Ok(())
    }

    /// Starts workers for ready tasks up to the concurrency limit, unless the run is
    /// paused or stopping. Returns whether it held back because the store's backlog is
    /// over its limit; fails when the store's writer has failed.
    fn dispatch(&mut self) -> Result<bool, EngineError> {
        let concurrency = self.ctx.config.concurrency.max(1);
        let backlog = &self.ctx.emitter.writer().stats().backlog;
        while self.stopping.is_none()
            && !self.paused
            && self.workers.len() < concurrency
            && !self.ready.is_empty()
        {
            if backlog.load(std::sync::atomic::Ordering::Relaxed) > self.ctx.config.backlog_limit {
                return Ok(true);
            }
            if let Some(f) = self.ctx.emitter.writer().failure() {
                return Err(EngineError::Internal(format!(
                    "the database writer failed: {f}"
                )));
            }
            if self.ctx.money.reached() {
                self.budget_reached()?;
                return Ok(false);
            }
            let Some(i) = self.ready.pop_front() else {
                break;
            };
            self.nodes[i].status = TaskStatus::Running;
            let worker = run_task(
                self.ctx.clone(),
                i,
                self.nodes[i].attempts,
                self.stop_rx.clone(),
            );
            let h = self.workers.spawn(worker);
            self.running.insert(h.id(), i);
        }
        Ok(false)
    }

    /// The money budget is spent: says so in the log once; nothing more is dispatched.
    fn budget_reached(&mut self) -> Result<(), EngineError> {
        if !self.over_budget {
            self.over_budget = true;
            self.ctx.emitter.emit(
                &Scope::default(),
                EngineEvent::BudgetReached(BudgetReached {
                    limit_usd: self.ctx.money.limit().unwrap_or_default(),
                    spent_usd: self.ctx.money.spent(),
                }),
            )?;
        }
        Ok(())
    }

    /// A run held open with nothing left to run: reports its outcome once, then waits
    /// for a retry or a review decision. Returns false when the run should end (a quit,
    /// a cancel, or nobody left to send commands).
    async fn hold_open(&mut self) -> Result<bool, EngineError> {
        let run_scope = Scope::default();
        // A pause ends here (nothing is left to hold back), so a retry dispatches at once.
        if self.paused {
            self.paused = false;
            self.ctx
                .emitter
                .emit(&run_scope, EngineEvent::RunUnpaused(Empty {}))?;
        }
        if !self.reported {
            let status = final_status(&self.nodes, None);
            report_end(&self.ctx, &self.nodes, status, self.totals)?;
            self.reported = true;
        }
        match self.control.recv().await {
            None => return Ok(false),
            Some(Control::Review(req)) => {
                if super::review::handle(
                    &self.ctx,
                    &mut self.nodes,
                    &mut self.ready,
                    &mut self.totals,
                    req,
                    true,
                    false,
                )? {
                    self.reported = false;
                }
            }
            Some(Control::Retry(task)) => {
                let previous = status_after(&self.nodes);
                if super::reopen::retry(&self.ctx, &mut self.nodes, &mut self.ready, &task)? {
                    self.reported = false;
                    self.ctx
                        .emitter
                        .emit(&run_scope, resumed(&self.nodes, previous))?;
                    write_run_status(&self.ctx, RunStatus::Running)?;
                    self.emit_ready(0)?;
                }
            }
            Some(Control::Interrupt | Control::Cancel(_)) => return Ok(false),
            // Nothing runs while held open: pause and resume have nothing to act on.
            Some(Control::Pause | Control::Resume) => {}
        }
        Ok(true)
    }

    /// A worker ended: its task finishes with the worker's outcome (a crashed worker
    /// fails its task with E008).
    fn worker_ended(
        &mut self,
        res: Result<(tokio::task::Id, TaskOutcome), JoinError>,
    ) -> Result<(), EngineError> {
        let (id, outcome) = match res {
            Ok((id, o)) => (id, o),
            // A bug: the run stops (its other calls end as interrupted), the task stays
            // unfinished for a resume, and the process ends as a crash.
            Err(e) if e.is_panic() => {
                let id = e.id();
                let why = panic_message(e.into_panic());
                tracing::error!("worker panicked: {why}");
                if let Some(i) = self.running.remove(&id) {
                    self.nodes[i].status = TaskStatus::Pending;
                }
                self.crashed.get_or_insert(why);
                if self.stopping.is_none() {
                    self.stop(StopSignal::Interrupt);
                }
                return Ok(());
            }
            Err(e) => {
                let id = e.id();
                let msg = format!("worker crashed: {e}");
                tracing::error!("{msg}");
                let outcome = TaskOutcome {
                    status: TaskStatus::Failed,
                    attempts: 0,
                    atoms: 0,
                    error_code: Some(ErrorCode::E008),
                    output: None,
                    grades: Default::default(),
                    invocation_id: None,
                    error_message: Some(msg),
                };
                (id, outcome)
            }
        };
        let Some(i) = self.running.remove(&id) else {
            return Ok(());
        };
        let is_final = outcome.status.is_final();
        // A task its worker stopped on the spent budget waits: nothing more is dispatched
        // (and a run held open for the TUI ends rather than waiting).
        if outcome.status == TaskStatus::Pending
            && self.stopping.is_none()
            && self.ctx.money.reached()
        {
            self.budget_reached()?;
        }
        graph::finish(
            &self.ctx,
            &mut self.nodes,
            &mut self.ready,
            &mut self.totals,
            i,
            outcome,
        )?;
        if is_final {
            self.finished += 1;
            if self.finished.is_multiple_of(RETAINED_EVERY) {
                self.retained.push(Retained {
                    finished: self.finished,
                    outputs: self.ctx.outputs_held() as u32,
                });
            }
        }
        Ok(())
    }

    /// Acts on a command while tasks run or wait (None: the handle is gone).
    fn command(&mut self, cmd: Option<Control>) -> Result<(), EngineError> {
        let run_scope = Scope::default();
        let em = &self.ctx.emitter;
        match cmd {
            None => self.control_open = false,
            Some(Control::Pause) => {
                if !self.paused && self.stopping.is_none() {
                    self.paused = true;
                    em.emit(&run_scope, EngineEvent::RunPaused(Empty {}))?;
                    write_run_status(&self.ctx, RunStatus::Paused)?;
                }
            }
            Some(Control::Resume) => {
                if self.paused {
                    self.paused = false;
                    em.emit(&run_scope, EngineEvent::RunUnpaused(Empty {}))?;
                    write_run_status(&self.ctx, RunStatus::Running)?;
                }
            }
            Some(Control::Cancel(reason)) => {
                if self.stopping.is_none() {
                    let cancel = CancelRequested { reason };
                    em.emit(&run_scope, EngineEvent::CancelRequested(cancel))?;
                    self.stop(StopSignal::Cancel);
                }
            }
            Some(Control::Interrupt) => {
                if self.stopping.is_none() {
                    self.stop(StopSignal::Interrupt);
                }
            }
            Some(Control::Review(req)) => {
                let stopping = self.stopping.is_some();
                super::review::handle(
                    &self.ctx,
                    &mut self.nodes,
                    &mut self.ready,
                    &mut self.totals,
                    req,
                    false,
                    stopping,
                )?;
            }
            Some(Control::Retry(task)) => {
                if self.stopping.is_none() {
                    let before = self.ready.len();
                    super::reopen::retry(&self.ctx, &mut self.nodes, &mut self.ready, &task)?;
                    self.emit_ready(before)?;
                }
            }
        }
        Ok(())
    }

    /// Starts stopping the run: no more dispatching, and every worker is told.
    fn stop(&mut self, signal: StopSignal) {
        self.stopping = Some(signal);
        let _ = self.stop_tx.send(signal);
    }

    /// Ends the run: a cancel finishes every unfinished task `cancelled`; the outcome is
    /// reported (unless a held-open run already did) and the store flushed.
    fn end(mut self) -> Result<RunOutcome, EngineError> {
        if self.stopping == Some(StopSignal::Cancel) {
            let ctx = &self.ctx;
            for (i, node) in self.nodes.iter_mut().enumerate() {
                if !node.status.is_final() && node.status != TaskStatus::Cancelled {
                    node.status = TaskStatus::Cancelled;
                    write_task(ctx, i, node, None, None)?;
                    ctx.emitter.emit(
                        &task_scope(ctx, i),
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
        let mut status = final_status(&self.nodes, self.stopping);
        // Tasks left waiting by the spent budget (a worker's retry may be the one that met
        // it, with nothing left to dispatch).
        if status == RunStatus::Interrupted && self.stopping.is_none() && self.ctx.money.reached() {
            self.budget_reached()?;
            status = RunStatus::BudgetReached;
        }
        let ctx = &self.ctx;
        let (tasks, atoms) = if self.reported && self.stopping.is_none() {
            // Held open and already reported: the outcome stands.
            tally(&self.nodes)
        } else {
            report_end(ctx, &self.nodes, status, self.totals)?
        };
        ctx.emitter.writer().flush()?;
        Ok(RunOutcome {
            run_id: ctx.run_id.to_string(),
            status,
            tasks,
            atoms,
            grades: self.totals,
            retained: self.retained,
        })
    }
}
