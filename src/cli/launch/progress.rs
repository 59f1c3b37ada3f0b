//! The headless printer: progress lines on stderr while a run goes, a summary table at
//! the end. It folds the same committed events any other consumer sees.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use crate::base::protocol::GradeCounts;
use crate::model::event::{
    EngineEvent, Envelope, ReviewAccepted, RunStatus, TaskFinished, TaskStatus,
};

/// Per-agent token and invocation totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentTokens {
    /// Invocations.
    pub invocations: u64,
    /// Prompt tokens.
    pub prompt: u64,
    /// Output tokens.
    pub output: u64,
    /// Prompt tokens the provider reported (for invocations where it did).
    pub reported_prompt: u64,
    /// Output tokens the provider reported.
    pub reported_output: u64,
    /// Invocations with reported usage.
    pub reported: u64,
    /// What the calls cost.
    pub spend: crate::base::cost::Spend,
}

/// What the printer has folded so far.
#[derive(Debug, Default)]
pub struct Progress {
    /// Tasks in the run.
    pub total: usize,
    /// Final tasks by status.
    pub finished: BTreeMap<TaskStatus, u32>,
    /// Tokens per agent.
    pub agents: BTreeMap<String, AgentTokens>,
    /// Grades of accepted atoms.
    pub grades: GradeCounts,
    /// Atoms accepted.
    pub atoms: u32,
    /// Final status once the run ended.
    pub status: Option<RunStatus>,
    /// Events seen.
    pub events: u64,
    /// Retries seen.
    pub retries: u64,
    /// The latest error message per task (shown when the task ends failed).
    pub last_error: BTreeMap<String, String>,
    /// Tasks a resumed run had finished before this process took it up.
    pub done_before: u32,
    /// The money budget the run reached, and what it had spent then (US dollars).
    pub budget_reached: Option<(f64, f64)>,
    /// The provider profile the run started on.
    pub provider: String,
}

impl Progress {
    /// Folds one event; returns a progress line worth printing, if any.
    pub fn fold(&mut self, env: &Envelope) -> Option<String> {
        use EngineEvent as E;
        self.events += 1;
        let task = env.task_id.as_deref().unwrap_or("-");
        match &env.event {
            E::RunStarted(_)
            | E::CrashDetected(_)
            | E::LeaseTakenOver(_)
            | E::RunResumed(_)
            | E::RunPaused(_)
            | E::RunUnpaused(_)
            | E::CancelRequested(_)
            | E::BudgetReached(_)
            | E::RunFinished(_) => self.fold_run(env),
            E::InvocationStarted(_) | E::InvocationFinished(_) | E::InvocationLost(_) => {
                self.fold_invocation(env, task)
            }
            E::TaskFinished(f) => self.task_finished(task, f),
            E::ReviewAccepted(r) => self.review_accepted(task, r),
            E::RetryScheduled(r) => {
                self.retries += 1;
                Some(format!(
                    "{task}: {} — retry (attempt {}) in {} ms: {}",
                    r.error_code, r.next_attempt, r.delay_ms, r.adjustment
                ))
            }
            E::TaskBlocked(_)
            | E::ContextPlanned(_)
            | E::TaskReset(_)
            | E::ToolCalled(_)
            | E::SkillRefused(_)
            | E::ContextCompressed(_)
            | E::LoopFinished(_)
            | E::ReviewRejected(_)
            | E::ReferenceFailed(_) => task_line(task, &env.event),
            E::TaskReady(_)
            | E::Chunk(_)
            | E::AtomsGraded(_)
            | E::ToolAnswered(_)
            | E::SkillActivated(_) => None,
            e @ (E::DebateStarted(_)
            | E::DebateTurnStarted(_)
            | E::DebateReply(_)
            | E::DebateOutput(_)
            | E::PositionsCompared(_)
            | E::HostDecided(_)
            | E::DebateError(_)
            | E::DebateFinished(_)) => crate::features::debate::progress::line(e),
        }
    }

    /// Folds an event of the run as a whole (started, resumed, paused, ended, …).
    fn fold_run(&mut self, env: &Envelope) -> Option<String> {
        match &env.event {
            EngineEvent::RunStarted(r) => {
                self.total = r.tasks.len();
                self.provider = r.provider.clone();
                Some(format!(
                    "run {} started: plan {} ({} tasks) on {}",
                    env.run_id,
                    r.plan_id,
                    r.tasks.len(),
                    r.provider
                ))
            }
            EngineEvent::CrashDetected(c) => Some(format!(
                "crash detected: the run stopped after event {}; restarting {} in-flight task(s)",
                c.last_seq,
                c.interrupted_tasks.len()
            )),
            EngineEvent::LeaseTakenOver(l) => Some(format!(
                "taken over from pid {} on host {} ({}; last heartbeat at {})",
                l.previous_pid,
                l.previous_host,
                l.reason.replace('_', " "),
                chrono::DateTime::from_timestamp_millis(l.previous_heartbeat_ms)
                    .map(|t| t.to_rfc3339())
                    .unwrap_or_default()
            )),
            EngineEvent::RunResumed(r) => {
                self.total = (r.finished_tasks + r.remaining_tasks) as usize;
                // The count of finished tasks goes on from what the run had done.
                self.done_before = r.finished_tasks;
                Some(format!(
                    "resumed: {} task(s) already finished, {} to run",
                    r.finished_tasks, r.remaining_tasks
                ))
            }
            EngineEvent::RunPaused(_) => Some("paused".into()),
            EngineEvent::RunUnpaused(_) => Some("resumed dispatch".into()),
            EngineEvent::CancelRequested(c) => Some(format!("cancel requested: {}", c.reason)),
            EngineEvent::BudgetReached(b) => {
                self.budget_reached = Some((b.limit_usd, b.spent_usd));
                Some(format!(
                    "money budget of {} reached ({} spent): no new call starts; the calls in flight finish",
                    crate::base::cost::usd(b.limit_usd),
                    crate::base::cost::usd(b.spent_usd)
                ))
            }
            EngineEvent::RunFinished(f) => {
                self.status = Some(f.status);
                self.grades = f.grades;
                self.atoms = f.atoms;
                self.finished = f.tasks.clone();
                self.done_before = 0;
                None
            }
            _ => None,
        }
    }

    /// Folds the start, end or loss of a model call into its agent's totals.
    fn fold_invocation(&mut self, env: &Envelope, task: &str) -> Option<String> {
        let a = self
            .agents
            .entry(env.agent.as_deref().unwrap_or("?").to_string())
            .or_default();
        match &env.event {
            EngineEvent::InvocationStarted(s) => {
                a.invocations += 1;
                a.prompt += s.prompt_tokens;
                None
            }
            EngineEvent::InvocationFinished(f) => {
                a.output += f.output_tokens;
                a.spend.add(f.cost_usd);
                if let Some(u) = f.provider_usage {
                    a.reported += 1;
                    a.reported_prompt = a.reported_prompt.saturating_add(u.prompt_tokens);
                    a.reported_output = a.reported_output.saturating_add(u.completion_tokens);
                }
                match &f.error_message {
                    Some(m) => self.last_error.insert(task.to_string(), m.clone()),
                    None => self.last_error.remove(task),
                };
                None
            }
            EngineEvent::InvocationLost(l) => {
                a.output += l.output_tokens;
                a.spend.add(l.cost_usd);
                Some(format!(
                    "{task}: attempt {} ({}) lost in a crash, {} output token(s) had reached the log; the task runs again",
                    l.attempt,
                    env.invocation_id.as_deref().unwrap_or("?"),
                    l.output_tokens
                ))
            }
            _ => None,
        }
    }

    /// Counts a finished task; its line (none for a blocked task, which said so when
    /// it was blocked).
    fn task_finished(&mut self, task: &str, f: &TaskFinished) -> Option<String> {
        *self.finished.entry(f.status).or_insert(0) += 1;
        let done: u32 = self.done_before + self.finished.values().sum::<u32>();
        if f.status == TaskStatus::Blocked {
            return None;
        }
        // A task that failed before any call says why itself; otherwise its last
        // invocation's error does.
        let last = self.last_error.remove(task);
        let why = match (f.status.satisfies_dependents(), f.error_message.as_ref()) {
            (false, Some(m)) => format!(" — {}", crate::base::text::sanitize::sanitize(m)),
            (false, None) => last
                .map(|m| format!(" — {}", crate::base::text::sanitize::sanitize(&m)))
                .unwrap_or_default(),
            _ => String::new(),
        };
        Some(format!(
            "[{done:>width$}/{}] {task}: {} after {} attempt(s), {} atom(s){}{why}",
            self.total,
            f.status.as_str(),
            f.attempts,
            f.atoms,
            f.error_code.map(|c| format!(" [{c}]")).unwrap_or_default(),
            width = self.total.to_string().len()
        ))
    }

    /// Counts an accepted review's task under its new status; its line.
    fn review_accepted(&mut self, task: &str, r: &ReviewAccepted) -> Option<String> {
        // The task counted as failed until now.
        if let Some(n) = self.finished.get_mut(&TaskStatus::Failed) {
            *n = n.saturating_sub(1);
        }
        *self.finished.entry(r.status).or_insert(0) += 1;
        Some(format!(
            "{task}: review accepted by {} — now {}, {} atom(s) stored{}",
            crate::base::text::sanitize::sanitize(&r.reviewer),
            r.status.as_str(),
            r.atoms,
            r.note
                .as_deref()
                .map(|n| format!(": {}", crate::base::text::sanitize::sanitize(n)))
                .unwrap_or_default()
        ))
    }

    /// The end-of-run summary table.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let status = self.status.map(|s| s.as_str()).unwrap_or("unknown");
        s.push_str(&format!("\nrun {status}\n\ntasks by status\n"));
        for st in TaskStatus::ALL {
            if let Some(n) = self.finished.get(&st).filter(|n| **n > 0) {
                s.push_str(&format!("  {:<10} {n:>6}\n", st.as_str()));
            }
        }
        let g = &self.grades;
        s.push_str(&format!(
            "\natoms by grade ({} accepted)\n  A {:>6}\n  B {:>6}\n  C {:>6}\n  D {:>6}\n",
            self.atoms, g.a, g.b, g.c, g.d
        ));
        s.push('\n');
        s.push_str(&agent_table(
            "tokens per agent",
            self.agents
                .iter()
                .map(|(n, t)| (n, t.invocations, t.prompt, t.output, Some(t.spend))),
        ));
        let mut total = crate::base::cost::Spend::default();
        for t in self.agents.values() {
            total.merge(t.spend);
        }
        // A resumed run's summary counts this process's calls (as its tokens do); the
        // whole run's cost is in `plexus show`.
        let this = if self.done_before > 0 {
            " this session"
        } else {
            ""
        };
        s.push_str(&format!("\ncost{this} {}", total.label()));
        if total.unpriced > 0 {
            s.push_str(&format!(
                " ({} call(s) without a price: add the model to [prices] in the config)",
                total.unpriced
            ));
        }
        if let Some((limit, spent)) = self.budget_reached {
            s.push_str(&format!(
                "\nmoney budget of {} reached at {} spent: resume with a larger --max-cost",
                crate::base::cost::usd(limit),
                crate::base::cost::usd(spent)
            ));
        }
        s.push('\n');
        let called = self.agents.values().any(|t| t.invocations > 0);
        let served = !self.provider.is_empty() && self.provider != "simulated";
        if served && called && self.agents.values().all(|t| t.reported == 0) {
            s.push_str(
                "\ntokens: own count only (the server reported no usage; plexus counted them itself)\n",
            );
        }
        if self.agents.values().any(|t| t.reported > 0) {
            s.push('\n');
            s.push_str(&agent_table(
                "provider-reported",
                self.agents
                    .iter()
                    .filter(|(_, t)| t.reported > 0)
                    .map(|(n, t)| (n, t.reported, t.reported_prompt, t.reported_output, None)),
            ));
        }
        s
    }
}

/// Prints progress for batches of committed events until the channel closes.
pub async fn print_progress(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Vec<Arc<Envelope>>>,
) -> Progress {
    let mut p = Progress::default();
    let stderr = std::io::stderr();
    // A batch's lines go out in one write: the printer keeps up with the writer, so
    // committed batches never queue up in memory behind it.
    let mut text = String::new();
    while let Some(batch) = rx.recv().await {
        for env in batch {
            if let Some(line) = p.fold(&env) {
                text.push_str(&crate::base::out::clean(&line));
                text.push('\n');
            }
        }
        if !text.is_empty() {
            let _ = stderr.lock().write_all(text.as_bytes());
            text.clear();
        }
        // A burst's buffer is not kept for the rest of the run.
        text.shrink_to(64 * 1024);
    }
    p
}

/// A tokens-per-agent table of the summary: `title` heads the names, which are indented
/// under it; one row per `(agent, invocations, prompt, output, cost)`, with a cost
/// column when the rows have costs.
type AgentRow<'a> = (&'a String, u64, u64, u64, Option<crate::base::cost::Spend>);

fn agent_table<'a>(title: &str, rows: impl Iterator<Item = AgentRow<'a>>) -> String {
    use crate::base::table::{Col, TextTable};
    let rows: Vec<AgentRow<'a>> = rows.collect();
    let costs = rows.iter().any(|r| r.4.is_some());
    let mut cols = vec![
        Col::left("NAME").max(34),
        Col::right("invocations"),
        Col::right("prompt"),
        Col::right("output"),
    ];
    let mut head = vec![
        title.to_string(),
        "invocations".into(),
        "prompt".into(),
        "output".into(),
    ];
    if costs {
        cols.push(Col::right("cost"));
        head.push("cost".into());
    }
    let mut table = TextTable::new(&cols).without_header();
    table.row(head);
    for (name, n, p, o, cost) in rows {
        let mut row = vec![
            format!("  {name}"),
            n.to_string(),
            p.to_string(),
            o.to_string(),
        ];
        if costs {
            row.push(cost.map(|c| c.label()).unwrap_or_default());
        }
        table.row(row);
    }
    let mut text = table.render();
    text.push('\n');
    text
}

/// The progress line of an event that only says what happened to `task`.
fn task_line(task: &str, event: &EngineEvent) -> Option<String> {
    match event {
        EngineEvent::TaskBlocked(b) => Some(format!(
            "{task}: blocked ({}) — {}",
            b.error_code, b.message
        )),
        EngineEvent::ContextPlanned(c) => {
            let r = &c.report.resolution;
            (!r.actions.is_empty() || c.inputs.iter().any(|i| i.batched)).then(|| {
                format!(
                    "{task}: context {} → {} of {} tokens ({} action(s){})",
                    c.report.total_tokens,
                    r.final_tokens,
                    c.report.context_limit,
                    r.actions.len(),
                    if r.within_limit {
                        ""
                    } else {
                        "; still over the limit"
                    }
                )
            })
        }
        EngineEvent::TaskReset(r) => Some(format!("{task}: reset — {}", r.reason)),
        EngineEvent::ToolCalled(c) => Some(format!(
            "{task}: step {}: {}",
            c.step,
            crate::base::text::sanitize::sanitize(&c.tool)
        )),
        EngineEvent::SkillRefused(r) => Some(format!(
            "{task}: skill {} refused: {}",
            crate::base::text::sanitize::sanitize(&r.skill),
            crate::base::text::sanitize::sanitize(&r.reason)
        )),
        EngineEvent::ContextCompressed(c) => Some(format!(
            "{task}: context compressed from {} to {} tokens",
            c.before_tokens, c.after_tokens
        )),
        EngineEvent::LoopFinished(f) => Some(format!(
            "{task}: loop ended ({}) after {} steps and {} tool calls",
            f.stop, f.steps, f.tool_calls
        )),
        EngineEvent::ReviewRejected(r) => Some(format!(
            "{task}: review rejected by {}: {}",
            crate::base::text::sanitize::sanitize(&r.reviewer),
            crate::base::text::sanitize::sanitize(&r.reason)
        )),
        EngineEvent::ReferenceFailed(r) => Some(format!(
            "{task}: reference {} failed: {} {} (fallback {})",
            r.index,
            serde_json::to_value(r.failure.error_code)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            r.failure.error_message,
            r.failure.fallback_strategy
        )),
        _ => None,
    }
}
