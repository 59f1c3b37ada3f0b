//! The pure fold: `reduce(&mut RunState, &Envelope)`. Time comes from the envelope only.
//! Each event goes to the fold of its family (run, task, invocation, loop, review,
//! debate); the match names every event, so a new one must be handled here.

use std::sync::Arc;

use super::debate::DebateState;
use super::ops::{keeps_output, note, set_status};
use super::view::RunState;
use super::{fold_invocation, fold_run, fold_task};
use crate::model::event::{
    BudgetReached, EngineEvent, Envelope, LeaseTakenOver, RunFinished, RunStatus, TaskStatus,
};

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

/// Folds one event into the run's state: what every event counts, then its family's fold.
fn reduce_run(st: &mut RunState, env: &Envelope) {
    let task = count_event(st, env);
    match (&env.event, task) {
        (EngineEvent::RunStarted(r), _) => fold_run::started(st, env, r),
        (EngineEvent::CrashDetected(c), _) => fold_run::crash_detected(st, env, c),
        (EngineEvent::LeaseTakenOver(l), _) => lease_taken_over(st, env, l),
        (EngineEvent::RunResumed(r), _) => fold_run::resumed(st, env, r),
        (EngineEvent::RunPaused(_), _) => {
            st.status = Some(RunStatus::Paused);
            note(st, env.ts, "paused: no new tasks start".into());
        }
        (EngineEvent::RunUnpaused(_), _) => {
            st.status = Some(RunStatus::Running);
            note(st, env.ts, "dispatch resumed".into());
        }
        (EngineEvent::CancelRequested(c), _) => {
            st.cancelling = true;
            note(st, env.ts, format!("cancel requested: {}", c.reason));
        }
        (EngineEvent::BudgetReached(b), _) => budget_reached(st, env, b),
        (EngineEvent::RunFinished(f), _) => run_finished(st, env, f),
        (EngineEvent::TaskReady(_), Some(i)) => set_status(st, i, TaskStatus::Ready),
        (EngineEvent::TaskBlocked(b), Some(i)) => fold_task::blocked(st, i, b),
        (EngineEvent::TaskFinished(f), Some(i)) => fold_task::finished(st, i, f),
        (EngineEvent::ContextPlanned(c), Some(i)) => fold_task::context_planned(st, i, c),
        (EngineEvent::TaskReset(r), Some(i)) => fold_task::reset(st, i, r),
        (EngineEvent::InvocationStarted(s), Some(i)) => fold_invocation::started(st, env, i, s),
        (EngineEvent::Chunk(c), Some(i)) if keeps_output(st, i) => {
            fold_invocation::chunk(st, env, i, c)
        }
        // Its text is not kept here, but when it last streamed is.
        (EngineEvent::Chunk(_), Some(i)) => {
            Arc::make_mut(&mut st.tasks[i]).last_output_ts = Some(env.ts)
        }
        (EngineEvent::InvocationFinished(f), Some(i)) => fold_invocation::finished(st, i, f),
        (EngineEvent::InvocationLost(l), Some(i)) => fold_invocation::lost(st, env, i, l),
        (EngineEvent::AtomsGraded(g), Some(i)) => fold_invocation::atoms_graded(st, env, i, g),
        (EngineEvent::RetryScheduled(r), Some(i)) => fold_task::retry_scheduled(st, i, r),
        (EngineEvent::ReviewAccepted(r), Some(i)) => super::review::accepted(st, i, env, r),
        (
            e @ (EngineEvent::ToolCalled(_)
            | EngineEvent::ToolAnswered(_)
            | EngineEvent::SkillActivated(_)
            | EngineEvent::SkillRefused(_)
            | EngineEvent::ContextCompressed(_)
            | EngineEvent::LoopFinished(_)),
            Some(i),
        ) => {
            super::loop_steps::fold(st, i, env.invocation_id.as_ref(), e);
        }
        (EngineEvent::ReviewRejected(r), Some(i)) => super::review::rejected(st, i, env, r),
        // A debate session is folded by `state::debate` (below); its run has no plan
        // tasks.
        (
            EngineEvent::DebateStarted(_)
            | EngineEvent::DebateTurnStarted(_)
            | EngineEvent::DebateReply(_)
            | EngineEvent::DebateOutput(_)
            | EngineEvent::PositionsCompared(_)
            | EngineEvent::HostDecided(_)
            | EngineEvent::DebateError(_)
            | EngineEvent::DebateFinished(_),
            _,
        ) => {}
        (EngineEvent::ReferenceFailed(r), Some(i)) => fold_task::reference_failed(st, i, r),
        // An event of a task the run does not know: only counted.
        (_, None) => {}
    }
}

/// What every event counts (events by kind, the last sequence number and time, the
/// clock, its task's span of events); returns the index of its task, when known.
fn count_event(st: &mut RunState, env: &Envelope) -> Option<usize> {
    st.events += 1;
    let kind = env.event.kind();
    match st.kinds.get_mut(kind) {
        Some(n) => *n += 1,
        None => {
            st.kinds.insert(kind.to_string(), 1);
        }
    }
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
    if let Some(i) = task {
        let t = Arc::make_mut(&mut st.tasks[i]);
        if t.span.0 == 0 {
            t.span.0 = env.seq;
        }
        t.span.1 = env.seq;
    }
    task
}

/// Another process took the run over: noted.
fn lease_taken_over(st: &mut RunState, env: &Envelope, l: &LeaseTakenOver) {
    note(
        st,
        env.ts,
        format!(
            "run taken over from pid {} on host {} ({})",
            l.previous_pid,
            l.previous_host,
            l.reason.replace('_', " ")
        ),
    )
}

/// The money budget was reached: noted.
fn budget_reached(st: &mut RunState, env: &Envelope, b: &BudgetReached) {
    note(
        st,
        env.ts,
        format!(
            "money budget of {} reached ({} spent): no new call starts",
            crate::base::cost::usd(b.limit_usd),
            crate::base::cost::usd(b.spent_usd)
        ),
    )
}

/// The run ended: its status, its end time, no call in flight any more.
fn run_finished(st: &mut RunState, env: &Envelope, f: &RunFinished) {
    st.status = Some(f.status);
    st.finished_ts = Some(env.ts);
    st.cancelling = false;
    for a in &mut st.agents {
        a.in_flight = 0;
    }
    note(st, env.ts, format!("run {}", f.status.as_str()));
}
