//! A task's own events: blocked, finished, reset, its context planned, a retry
//! scheduled, a reference that failed.

use std::sync::Arc;

use super::ops::{account_quality, enforce_budget, marker, set_status, unaccount_quality};
use super::slim;
use super::view::RunState;
use crate::base::protocol::ErrorCode;
use crate::model::event::{
    ContextPlanned, ReferenceFailed, RetryScheduled, TaskBlocked, TaskFinished, TaskReset,
    TaskStatus,
};

/// `task_blocked`.
pub(super) fn blocked(st: &mut RunState, i: usize, b: &TaskBlocked) {
    Arc::make_mut(&mut st.tasks[i]).error = Some(b.error_code);
    let text = format!("{}: blocked: {}", b.error_code.as_str(), b.message);
    slim::push(&mut Arc::make_mut(&mut st.tasks[i]).notes, text);
    set_status(st, i, TaskStatus::Blocked);
}

/// `task_finished`: the outcome, review state, quality and output budget.
pub(super) fn finished(st: &mut RunState, i: usize, f: &TaskFinished) {
    let t = Arc::make_mut(&mut st.tasks[i]);
    t.attempts = f.attempts;
    t.atoms = f.atoms;
    t.error = f.error_code;
    t.running_since = None;
    match (&f.error_message, f.error_code) {
        (Some(m), code) => {
            let code = code.map(|c| c.as_str()).unwrap_or("failed");
            slim::push(&mut t.notes, format!("{code}: {m}"));
        }
        // A code without a message (a hallucination, E007, logs none) is noted by its
        // type, so it stays readable after a retry replaces the task's state.
        (None, Some(code)) if matches!(f.status, TaskStatus::Failed | TaskStatus::Timeout) => {
            let text = format!(
                "attempt {} ended {} · {code}: {}",
                f.attempts,
                f.status.as_str(),
                code.error_type().replace('_', " ")
            );
            slim::push(&mut t.notes, text)
        }
        (None, _) => {}
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

/// `context_planned`: the agent's trims and batches, the task's context report.
pub(super) fn context_planned(st: &mut RunState, i: usize, c: &ContextPlanned) {
    let agent = st.tasks[i].agent;
    st.agents[agent].trims += c.report.resolution.actions.len() as u32;
    st.agents[agent].batches += c.inputs.iter().filter(|x| x.batched).count() as u32;
    Arc::make_mut(&mut st.tasks[i]).context = Some(Arc::new(c.clone()));
}

/// `task_reset`: the task's quality taken back, pending again.
pub(super) fn reset(st: &mut RunState, i: usize, r: &TaskReset) {
    let prev = st.tasks[i].status;
    if prev.satisfies_dependents() || prev.is_final() {
        unaccount_quality(st, i, prev);
    }
    Arc::make_mut(&mut st.tasks[i]).error = None;
    Arc::make_mut(&mut st.tasks[i]).review = None;
    super::review::set_awaiting(st, i, false);
    // Its earlier text stays in the log; the new attempt streams afresh.
    Arc::make_mut(&mut st.tasks[i]).spilled = false;
    slim::push(&mut Arc::make_mut(&mut st.tasks[i]).notes, r.reason.clone());
    marker(st, i, &format!("── reset: {} ──", r.reason));
    set_status(st, i, TaskStatus::Pending);
}

/// `retry_scheduled`.
pub(super) fn retry_scheduled(st: &mut RunState, i: usize, r: &RetryScheduled) {
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
    slim::push(&mut Arc::make_mut(&mut st.tasks[i]).notes, text);
}

/// `reference_failed`.
pub(super) fn reference_failed(st: &mut RunState, i: usize, r: &ReferenceFailed) {
    let text = format!(
        "reference #{} failed: {} {}",
        r.index,
        r.failure.error_code.as_str(),
        r.failure.error_message
    );
    marker(st, i, &format!("⚠ {text}"));
    slim::push(&mut Arc::make_mut(&mut st.tasks[i]).notes, text);
}
