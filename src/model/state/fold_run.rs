//! The run's own events: its start (the plan's tasks and agents), a crash found, a
//! resume.

use std::sync::Arc;

use super::dag::layers_of;
use super::ops::{marker, note, set_status};
use super::output::OutputBuffer;
use super::view::{status_slot, AgentView, RunState, TaskView};
use crate::model::event::{CrashDetected, Envelope, RunResumed, RunStarted, RunStatus, TaskStatus};

/// `run_started`: the plan's tasks and agents (a second start begins again).
pub(super) fn started(st: &mut RunState, env: &Envelope, r: &RunStarted) {
    if !st.tasks.is_empty() {
        // A second start (untrusted log): begin again rather than mix two runs.
        let (budget, events, seq, last_ts) = (st.output_budget, st.events, st.last_seq, st.last_ts);
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

/// `crash_detected`: the interrupted tasks go back to pending.
pub(super) fn crash_detected(st: &mut RunState, env: &Envelope, c: &CrashDetected) {
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

/// `run_resumed`: tasks that were running start again.
pub(super) fn resumed(st: &mut RunState, env: &Envelope, r: &RunResumed) {
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

fn start_tasks(st: &mut RunState, r: &RunStarted) {
    st.tasks.clear();
    st.status_counts = [0; 9];
    st.output_bytes = 0;
    st.evict_queue.clear();
    // One string per id, shared by the task's view and the index.
    let ids: Vec<Arc<str>> = r
        .tasks
        .iter()
        .map(|t| Arc::from(t.task_id.as_str()))
        .collect();
    st.task_index = Arc::new(ids.iter().cloned().zip(0..).collect());
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
    // Task indices fit in 32 bits: a plan of four billion tasks is never folded.
    let mut dependents: Vec<Vec<u32>> = vec![Vec::new(); deps.len()];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i as u32);
        }
    }
    for (i, t) in r.tasks.iter().enumerate() {
        let agent = agent_slot(st, &t.agent);
        st.tasks.push(Arc::new(TaskView {
            id: ids[i].clone(),
            agent,
            deps: deps[i].iter().map(|&d| d as u32).collect(),
            dependents: std::mem::take(&mut dependents[i]).into_boxed_slice(),
            layer: layer_of[i] as u32,
            status: TaskStatus::Pending,
            attempts: 0,
            atoms: 0,
            error: None,
            invocation: None,
            invocations: Box::default(),
            running_since: None,
            last_output_ts: None,
            timeout_ms: 0,
            prompt_tokens: 0,
            max_tokens: 0,
            last: None,
            context: None,
            retries: 0,
            notes: Box::default(),
            output: OutputBuffer::new(),
            loops: Box::default(),
            spilled: false,
            review: None,
            awaiting_review: false,
            span: (0, 0),
        }));
    }
    st.status_counts[status_slot(TaskStatus::Pending)] = st.tasks.len() as u32;
    st.layers = Arc::new(layers);
}

pub(super) fn agent_slot(st: &mut RunState, name: &str) -> usize {
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
