//! What every fold of the run shares: a task's status and quality kept counted, marker
//! lines in its output, run notes, and the output budget.

use std::sync::Arc;

use super::view::{status_slot, Note, RunState, MAX_NOTES};
use crate::model::event::TaskStatus;

pub(super) fn keeps_output(st: &RunState, i: usize) -> bool {
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

pub(super) fn note(st: &mut RunState, ts: i64, text: String) {
    if st.notes.len() >= MAX_NOTES {
        st.notes.pop_front();
    }
    st.notes.push_back(Note { ts, text });
}

/// Brings the streamed text held back within budget: first finished tasks' text goes,
/// oldest finished first (it stays in the log and is loaded back when looked at); if
/// that is not enough, the largest buffers drop their oldest half.
pub(super) fn enforce_budget(st: &mut RunState) {
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
