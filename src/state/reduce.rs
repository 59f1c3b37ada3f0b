//! The pure fold: `reduce(&mut RunState, &Envelope)`. Time comes from the envelope only.

use std::sync::Arc;

use super::{
    layers_of, status_slot, AgentView, AtomView, InvocationSummary, Note, OutputBuffer, RunState,
    TaskView, MAX_NOTES,
};
use crate::event::{EngineEvent, Envelope, RunStatus, TaskStatus};
use crate::protocol::ErrorCode;

use super::debate::DebateState;

/// The execution mode of a debate session's `run_started`.
pub const DEBATE_MODE: &str = "debate";

/// Folds one event into the state.
pub fn reduce(st: &mut RunState, env: &Envelope) {
    reduce_run(st, env);
    fold_debate(st, env);
}

/// A debate run's session: started by its `run_started`, folded by `DebateState::apply`.
fn fold_debate(st: &mut RunState, env: &Envelope) {
    if let EngineEvent::RunStarted(r) = &env.event {
        st.debate = r
            .execution_mode
            .eq_ignore_ascii_case(DEBATE_MODE)
            .then(|| Arc::new(DebateState::new()));
    }
    if let Some(d) = st.debate.as_mut() {
        Arc::make_mut(d).apply(env);
    }
}

fn reduce_run(st: &mut RunState, env: &Envelope) {
    st.events += 1;
    st.last_seq = env.seq;
    st.last_ts = st.last_ts.max(env.ts);
    if st.started_ts.is_none() {
        st.started_ts = Some(env.ts);
    }
    if st.run_id.is_empty() {
        st.run_id = env.run_id.to_string();
    }
    let task = env
        .task_id
        .as_deref()
        .and_then(|t| st.task_index.get(t).copied());
    st.clock.on_event(&env.event, env.ts);
    match &env.event {
        EngineEvent::RunStarted(r) => {
            if !st.tasks.is_empty() {
                // A second start (untrusted log): begin again rather than mix two runs.
                let (budget, events, seq, last_ts) =
                    (st.output_budget, st.events, st.last_seq, st.last_ts);
                *st = RunState::new();
                st.output_budget = budget;
                st.events = events;
                st.last_seq = seq;
                st.last_ts = last_ts;
                st.run_id = env.run_id.to_string();
                st.clock.start(env.ts);
            }
            st.plan_id = r.plan_id.clone();
            st.execution_mode = r.execution_mode.clone();
            st.provider = r.provider.clone();
            st.concurrency = r.concurrency;
            st.status = Some(RunStatus::Running);
            st.started_ts = Some(env.ts);
            for a in &r.agents {
                let i = agent_slot(st, &a.name);
                st.agents[i].max_input_tokens = a.max_input_tokens;
                st.agents[i].data_area_tokens = a.data_area_tokens;
            }
            start_tasks(st, r);
        }
        EngineEvent::CrashDetected(c) => {
            for id in &c.interrupted_tasks {
                if let Some(&i) = st.task_index.get(id.as_str()) {
                    set_status(st, i, TaskStatus::Pending);
                    marker(st, i, "── interrupted by a crash ──");
                }
            }
            for a in &mut st.agents {
                a.in_flight = 0;
            }
            note(
                st,
                env.ts,
                format!(
                    "crash detected after event {}; {} task(s) restarted",
                    c.last_seq,
                    c.interrupted_tasks.len()
                ),
            );
        }
        EngineEvent::LeaseTakenOver(l) => note(
            st,
            env.ts,
            format!(
                "run taken over from pid {} on host {} ({})",
                l.previous_pid,
                l.previous_host,
                l.reason.replace('_', " ")
            ),
        ),
        EngineEvent::RunResumed(r) => {
            st.status = Some(RunStatus::Running);
            st.finished_ts = None;
            st.cancelling = false;
            // Tasks that were running when the run stopped start again.
            for i in 0..st.tasks.len() {
                if matches!(st.tasks[i].status, TaskStatus::Running | TaskStatus::Ready) {
                    set_status(st, i, TaskStatus::Pending);
                }
            }
            for a in &mut st.agents {
                a.in_flight = 0;
            }
            note(
                st,
                env.ts,
                format!(
                    "resumed ({} before): {} finished, {} to run",
                    r.previous_status.as_str(),
                    r.finished_tasks,
                    r.remaining_tasks
                ),
            );
        }
        EngineEvent::RunPaused(_) => {
            st.status = Some(RunStatus::Paused);
            note(st, env.ts, "paused: no new tasks start".into());
        }
        EngineEvent::RunUnpaused(_) => {
            st.status = Some(RunStatus::Running);
            note(st, env.ts, "dispatch resumed".into());
        }
        EngineEvent::CancelRequested(c) => {
            st.cancelling = true;
            note(st, env.ts, format!("cancel requested: {}", c.reason));
        }
        EngineEvent::RunFinished(f) => {
            st.status = Some(f.status);
            st.finished_ts = Some(env.ts);
            st.cancelling = false;
            for a in &mut st.agents {
                a.in_flight = 0;
            }
            note(st, env.ts, format!("run {}", f.status.as_str()));
        }
        EngineEvent::TaskReady(_) => {
            if let Some(i) = task {
                set_status(st, i, TaskStatus::Ready);
            }
        }
        EngineEvent::TaskBlocked(b) => {
            if let Some(i) = task {
                Arc::make_mut(&mut st.tasks[i]).error = Some(b.error_code);
                Arc::make_mut(&mut st.tasks[i]).notes.push(format!(
                    "{}: blocked: {}",
                    b.error_code.as_str(),
                    b.message
                ));
                set_status(st, i, TaskStatus::Blocked);
            }
        }
        EngineEvent::TaskFinished(f) => {
            if let Some(i) = task {
                let t = Arc::make_mut(&mut st.tasks[i]);
                t.attempts = f.attempts;
                t.atoms = f.atoms;
                t.error = f.error_code;
                t.running_since = None;
                if let Some(m) = &f.error_message {
                    let code = f.error_code.map(|c| c.as_str()).unwrap_or("failed");
                    t.notes.push(format!("{code}: {m}"));
                }
                set_status(st, i, f.status);
                super::review::set_awaiting(
                    st,
                    i,
                    f.status == TaskStatus::Failed && f.error_code == Some(ErrorCode::E007),
                );
                if f.status.satisfies_dependents() || f.status.is_final() {
                    account_quality(st, i, f.status);
                }
                st.evict_queue.push_back(i);
                enforce_budget(st);
            }
        }
        EngineEvent::ContextPlanned(c) => {
            if let Some(i) = task {
                let agent = st.tasks[i].agent;
                st.agents[agent].trims += c.report.resolution.actions.len() as u32;
                st.agents[agent].batches += c.inputs.iter().filter(|x| x.batched).count() as u32;
                Arc::make_mut(&mut st.tasks[i]).context = Some(Arc::new(c.clone()));
            }
        }
        EngineEvent::TaskReset(r) => {
            if let Some(i) = task {
                let prev = st.tasks[i].status;
                if prev.satisfies_dependents() || prev.is_final() {
                    unaccount_quality(st, i, prev);
                }
                Arc::make_mut(&mut st.tasks[i]).error = None;
                Arc::make_mut(&mut st.tasks[i]).review = None;
                super::review::set_awaiting(st, i, false);
                // Its earlier text stays in the log; the new attempt streams afresh.
                Arc::make_mut(&mut st.tasks[i]).spilled = false;
                Arc::make_mut(&mut st.tasks[i]).notes.push(r.reason.clone());
                marker(st, i, &format!("── reset: {} ──", r.reason));
                set_status(st, i, TaskStatus::Pending);
            }
        }
        EngineEvent::InvocationStarted(s) => {
            if let Some(i) = task {
                let agent = st.tasks[i].agent;
                let t = Arc::make_mut(&mut st.tasks[i]);
                t.attempts = t.attempts.max(s.attempt);
                t.invocation = env.invocation_id.clone();
                if let Some(inv) = &env.invocation_id {
                    if t.invocations.last() != Some(inv) {
                        t.invocations.push(inv.clone());
                    }
                }
                t.running_since = Some(env.ts);
                t.last_output_ts = None;
                t.timeout_ms = (s.constraints.timeout_seconds.max(0.0) * 1000.0) as u64;
                t.prompt_tokens = s.prompt_tokens;
                t.max_tokens = s.constraints.max_tokens;
                let marker_text = format!(
                    "── attempt {} · {} · {} prompt tokens · threshold {} ──",
                    s.attempt,
                    env.invocation_id.as_deref().unwrap_or("?"),
                    s.prompt_tokens,
                    s.quality_threshold
                );
                marker(st, i, &marker_text);
                set_status(st, i, TaskStatus::Running);
                let a = &mut st.agents[agent];
                a.invocations += 1;
                a.in_flight += 1;
                a.last_prompt = s.prompt_tokens;
                a.peak_prompt = a.peak_prompt.max(s.prompt_tokens);
                a.tokens_in += s.prompt_tokens;
                a.max_tokens = s.constraints.max_tokens;
            }
        }
        EngineEvent::Chunk(c) => {
            if let Some(i) = task.filter(|&i| keeps_output(st, i)) {
                let t = Arc::make_mut(&mut st.tasks[i]);
                t.last_output_ts = Some(env.ts);
                let before = t.output.bytes();
                t.output.push(&c.text);
                let after = t.output.bytes();
                st.output_bytes = (st.output_bytes + after).saturating_sub(before);
                if st.output_bytes > st.output_budget {
                    enforce_budget(st);
                }
            }
        }
        EngineEvent::InvocationFinished(f) => {
            if let Some(i) = task {
                let agent = st.tasks[i].agent;
                let summary = InvocationSummary {
                    status: f.status,
                    execution_time_ms: f.execution_time_ms,
                    output_tokens: f.output_tokens,
                    atoms: f.atoms,
                    avg_score: f.avg_score,
                    grades: f.grades,
                    issues: f.issues,
                    errors: f.errors.clone(),
                    error_message: f.error_message.clone(),
                };
                let end = match (f.status, summary.errors.first()) {
                    (Some(s), None) => format!("── {} · {} ms ──", s.as_str(), f.execution_time_ms),
                    (Some(s), Some(e)) => format!(
                        "── {} · {} · {} ──",
                        s.as_str(),
                        e.as_str(),
                        f.error_message.as_deref().unwrap_or("")
                    ),
                    (None, _) => format!(
                        "── stopped: {} ──",
                        f.error_message.as_deref().unwrap_or("cancelled")
                    ),
                };
                marker(st, i, &end);
                Arc::make_mut(&mut st.tasks[i]).last = Some(summary);
                let a = &mut st.agents[agent];
                a.in_flight = a.in_flight.saturating_sub(1);
                a.last_output = f.output_tokens;
                a.peak_output = a.peak_output.max(f.output_tokens);
                a.tokens_out += f.output_tokens;
                if let Some(u) = f.provider_usage {
                    let ours_prompt = st.tasks[i].prompt_tokens;
                    let r = &mut st.agents[agent].reported;
                    r.calls += 1;
                    r.prompt = r.prompt.saturating_add(u.prompt_tokens);
                    r.output = r.output.saturating_add(u.completion_tokens);
                    r.counted_prompt = r.counted_prompt.saturating_add(ours_prompt);
                    r.counted_output = r.counted_output.saturating_add(f.output_tokens);
                }
            }
        }
        EngineEvent::InvocationLost(l) => {
            if let Some(i) = task {
                let agent = st.tasks[i].agent;
                marker(
                    st,
                    i,
                    &format!(
                        "── attempt {} lost in a crash · {} · {} output token(s) reached the log ──",
                        l.attempt,
                        env.invocation_id.as_deref().unwrap_or("?"),
                        l.output_tokens
                    ),
                );
                Arc::make_mut(&mut st.tasks[i]).last = Some(InvocationSummary {
                    status: None,
                    execution_time_ms: u64::try_from(l.last_ts.saturating_sub(l.started_ts))
                        .unwrap_or(0),
                    output_tokens: l.output_tokens,
                    atoms: 0,
                    avg_score: 0.0,
                    grades: Default::default(),
                    issues: 0,
                    errors: Vec::new(),
                    error_message: Some(l.reason.clone()),
                });
                let a = &mut st.agents[agent];
                a.last_output = l.output_tokens;
                a.peak_output = a.peak_output.max(l.output_tokens);
                a.tokens_out += l.output_tokens;
            }
        }
        EngineEvent::AtomsGraded(g) => {
            if let Some(i) = task {
                let agent = st.tasks[i].agent;
                for a in &g.atoms {
                    st.atoms.push(AtomView {
                        id: Arc::from(a.asset_id.as_str()),
                        atom_type: Arc::from(a.atom_type.as_str()),
                        task: i,
                        agent,
                        invocation: env.invocation_id.clone(),
                        grade: a.grade,
                        score: a.score,
                        confidence: a.confidence,
                        issues: a.issues,
                    });
                }
            }
        }
        EngineEvent::RetryScheduled(r) => {
            if let Some(i) = task {
                let t = Arc::make_mut(&mut st.tasks[i]);
                t.retries += 1;
                let text = format!(
                    "retry → attempt {} after {} ms ({}): {}",
                    r.next_attempt,
                    r.delay_ms,
                    r.error_code.as_str(),
                    r.adjustment
                );
                marker(st, i, &format!("↻ {text}"));
                Arc::make_mut(&mut st.tasks[i]).notes.push(text);
            }
        }
        EngineEvent::ReviewAccepted(r) => {
            if let Some(i) = task {
                super::review::accepted(st, i, env, r);
            }
        }
        e @ (EngineEvent::ToolCalled(_)
        | EngineEvent::ToolAnswered(_)
        | EngineEvent::SkillActivated(_)
        | EngineEvent::SkillRefused(_)
        | EngineEvent::ContextCompressed(_)
        | EngineEvent::LoopFinished(_)) => {
            if let Some(i) = task {
                super::loop_steps::fold(st, i, e);
            }
        }
        EngineEvent::ReviewRejected(r) => {
            if let Some(i) = task {
                super::review::rejected(st, i, env, r);
            }
        }
        // A debate session is folded by `state::debate` (below); its run has no plan
        // tasks.
        EngineEvent::DebateStarted(_)
        | EngineEvent::DebateTurnStarted(_)
        | EngineEvent::DebateReply(_)
        | EngineEvent::DebateOutput(_)
        | EngineEvent::PositionsCompared(_)
        | EngineEvent::HostDecided(_)
        | EngineEvent::DebateError(_)
        | EngineEvent::DebateFinished(_) => {}
        EngineEvent::ReferenceFailed(r) => {
            if let Some(i) = task {
                let text = format!(
                    "reference #{} failed: {} {}",
                    r.index,
                    r.failure.error_code.as_str(),
                    r.failure.error_message
                );
                marker(st, i, &format!("⚠ {text}"));
                Arc::make_mut(&mut st.tasks[i]).notes.push(text);
            }
        }
    }
}

fn keeps_output(st: &RunState, i: usize) -> bool {
    st.output_only.is_none_or(|only| only == i)
}

/// Puts a marker line (attempt start, outcome, retry…) into a task's output.
pub(super) fn marker(st: &mut RunState, i: usize, text: &str) {
    if !keeps_output(st, i) {
        return;
    }
    let t = Arc::make_mut(&mut st.tasks[i]);
    let before = t.output.bytes();
    t.output.push_line(text);
    st.output_bytes = (st.output_bytes + t.output.bytes()).saturating_sub(before);
}

fn start_tasks(st: &mut RunState, r: &crate::event::RunStarted) {
    st.tasks.clear();
    st.status_counts = [0; 9];
    st.output_bytes = 0;
    st.evict_queue.clear();
    st.task_index = Arc::new(
        r.tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (Arc::from(t.task_id.as_str()), i))
            .collect(),
    );
    let deps: Vec<Vec<usize>> = r
        .tasks
        .iter()
        .map(|t| {
            t.depends_on
                .iter()
                .filter_map(|d| st.task_index.get(d.as_str()).copied())
                .collect()
        })
        .collect();
    let (layers, layer_of) = layers_of(&deps);
    for (i, t) in r.tasks.iter().enumerate() {
        let agent = agent_slot(st, &t.agent);
        st.tasks.push(Arc::new(TaskView {
            id: Arc::from(t.task_id.as_str()),
            agent,
            deps: deps[i].clone(),
            dependents: Vec::new(),
            layer: layer_of[i],
            status: TaskStatus::Pending,
            attempts: 0,
            atoms: 0,
            error: None,
            invocation: None,
            invocations: Vec::new(),
            running_since: None,
            last_output_ts: None,
            timeout_ms: 0,
            prompt_tokens: 0,
            max_tokens: 0,
            last: None,
            context: None,
            retries: 0,
            notes: Vec::new(),
            output: OutputBuffer::new(),
            spilled: false,
            review: None,
            awaiting_review: false,
        }));
    }
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            Arc::make_mut(&mut st.tasks[d]).dependents.push(i);
        }
    }
    st.status_counts[status_slot(TaskStatus::Pending)] = st.tasks.len() as u32;
    st.layers = Arc::new(layers);
}

fn agent_slot(st: &mut RunState, name: &str) -> usize {
    if let Some(&i) = st.agent_index.get(name) {
        return i;
    }
    let name: Arc<str> = Arc::from(name);
    st.agents.push(AgentView {
        name: name.clone(),
        ..Default::default()
    });
    st.agent_index.insert(name, st.agents.len() - 1);
    st.agents.len() - 1
}

pub(super) fn set_status(st: &mut RunState, i: usize, s: TaskStatus) {
    let old = st.tasks[i].status;
    if old == s {
        return;
    }
    let slot = &mut st.status_counts[status_slot(old)];
    *slot = slot.saturating_sub(1);
    st.status_counts[status_slot(s)] += 1;
    Arc::make_mut(&mut st.tasks[i]).status = s;
    if matches!(s, TaskStatus::Failed | TaskStatus::Timeout) {
        st.last_failure = Some(i);
    }
}

/// Adds a finished task's final invocation to its agent's and the run's quality.
pub(super) fn account_quality(st: &mut RunState, i: usize, status: TaskStatus) {
    let Some(last) = st.tasks[i].last.as_ref() else {
        return;
    };
    let agent = st.tasks[i].agent;
    let issues = last.issues;
    let (grades, score) = if status.satisfies_dependents() {
        (last.grades, last.avg_score * last.atoms as f64)
    } else {
        (Default::default(), 0.0)
    };
    for q in [&mut st.agents[agent].quality, &mut st.quality] {
        q.grades.merge(&grades);
        q.score_sum += score;
        q.issues += issues;
    }
}

/// Takes back what `account_quality` added when a finished task is reset.
pub(super) fn unaccount_quality(st: &mut RunState, i: usize, status: TaskStatus) {
    let Some(last) = st.tasks[i].last.as_ref() else {
        return;
    };
    let agent = st.tasks[i].agent;
    let issues = last.issues;
    for q in [&mut st.agents[agent].quality, &mut st.quality] {
        if status.satisfies_dependents() {
            q.grades.a = q.grades.a.saturating_sub(last.grades.a);
            q.grades.b = q.grades.b.saturating_sub(last.grades.b);
            q.grades.c = q.grades.c.saturating_sub(last.grades.c);
            q.grades.d = q.grades.d.saturating_sub(last.grades.d);
            q.score_sum -= last.avg_score * last.atoms as f64;
        }
        q.issues = q.issues.saturating_sub(issues);
    }
}

fn note(st: &mut RunState, ts: i64, text: String) {
    if st.notes.len() >= MAX_NOTES {
        st.notes.pop_front();
    }
    st.notes.push_back(Note { ts, text });
}

/// Brings the streamed text held back within budget: first finished tasks' text goes,
/// oldest finished first (it stays in the log and is loaded back when looked at); if
/// that is not enough, the largest buffers drop their oldest half.
fn enforce_budget(st: &mut RunState) {
    while st.output_bytes > st.output_budget {
        let Some(i) = st.evict_queue.pop_front() else {
            break;
        };
        let Some(t) = st.tasks.get(i) else {
            continue;
        };
        if !(t.status.is_final() || t.status == TaskStatus::Cancelled) || t.output.is_empty() {
            continue;
        }
        let t = Arc::make_mut(&mut st.tasks[i]);
        let before = t.output.bytes();
        t.output.evict();
        // Added before taken: a clamp at zero would leave the total off.
        st.output_bytes = (st.output_bytes + t.output.bytes()).saturating_sub(before);
        t.spilled = true;
    }
    while st.output_bytes > st.output_budget {
        let Some((i, _)) = st
            .tasks
            .iter()
            .enumerate()
            .max_by_key(|(_, t)| t.output.bytes())
        else {
            return;
        };
        let t = Arc::make_mut(&mut st.tasks[i]);
        let before = t.output.bytes();
        t.output.drop_oldest_half();
        let after = t.output.bytes();
        if after >= before {
            return;
        }
        st.output_bytes = st.output_bytes.saturating_sub(before - after);
    }
}
