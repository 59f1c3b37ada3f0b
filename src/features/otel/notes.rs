//! The events the span fold records as a span event (a note on the run, a task or a
//! call): for each kind, the span event's name and its attributes, so the fold stays a
//! line a kind.

use opentelemetry_proto::tonic::common::v1::KeyValue;

use super::attrs::{f, i, list, s};
use crate::model::event::{
    BudgetReached, CancelRequested, ContextCompressed, CrashDetected, DebateErrorLogged,
    DebateStarted, LeaseTakenOver, LoopFinished, ReferenceFailed, ReviewAccepted, ReviewRejected,
    RunResumed, SkillActivated, SkillRefused,
};

/// A span event's name and attributes.
pub(super) type Note = (&'static str, Vec<KeyValue>);

/// `plexus.crash_detected`: the last event written and the tasks it interrupted.
pub(super) fn crash_detected(c: &CrashDetected) -> Note {
    (
        "plexus.crash_detected",
        vec![
            i("plexus.last_seq", c.last_seq),
            list("plexus.interrupted_tasks", c.interrupted_tasks.clone()),
        ],
    )
}

/// `plexus.lease_taken_over`: whose lease, and why.
pub(super) fn lease_taken_over(l: &LeaseTakenOver) -> Note {
    (
        "plexus.lease_taken_over",
        vec![
            i("plexus.previous_pid", l.previous_pid),
            s("plexus.reason", l.reason.clone()),
        ],
    )
}

/// `plexus.run_resumed`: how the run had ended, and its tasks done and left.
pub(super) fn run_resumed(r: &RunResumed) -> Note {
    (
        "plexus.run_resumed",
        vec![
            s("plexus.previous_status", r.previous_status.as_str()),
            i("plexus.finished_tasks", r.finished_tasks),
            i("plexus.remaining_tasks", r.remaining_tasks),
        ],
    )
}

/// `plexus.cancel_requested`: why.
pub(super) fn cancel_requested(c: &CancelRequested) -> Note {
    (
        "plexus.cancel_requested",
        vec![s("plexus.reason", c.reason.clone())],
    )
}

/// `plexus.budget_reached`: the limit and what was spent.
pub(super) fn budget_reached(b: &BudgetReached) -> Note {
    (
        "plexus.budget_reached",
        vec![
            f("plexus.budget.limit_usd", b.limit_usd),
            f("plexus.cost.usd", b.spent_usd),
        ],
    )
}

/// `plexus.reference_failed`: which reference.
pub(super) fn reference_failed(r: &ReferenceFailed) -> Note {
    (
        "plexus.reference_failed",
        vec![i("plexus.reference.index", r.index)],
    )
}

/// `plexus.review`, accepted: by whom, the task's status and its atoms.
pub(super) fn review_accepted(r: &ReviewAccepted) -> Note {
    (
        "plexus.review",
        vec![
            s("plexus.review.decision", "accepted"),
            s("plexus.review.reviewer", r.reviewer.clone()),
            s("plexus.task.status", r.status.as_str()),
            i("plexus.atoms", r.atoms),
        ],
    )
}

/// `plexus.review`, rejected: by whom.
pub(super) fn review_rejected(r: &ReviewRejected) -> Note {
    (
        "plexus.review",
        vec![
            s("plexus.review.decision", "rejected"),
            s("plexus.review.reviewer", r.reviewer.clone()),
        ],
    )
}

/// `plexus.skill_activated`: the skill and its tokens.
pub(super) fn skill_activated(sk: &SkillActivated) -> Note {
    (
        "plexus.skill_activated",
        vec![
            s("plexus.skill", sk.skill.clone()),
            i("plexus.tokens", sk.tokens),
        ],
    )
}

/// `plexus.skill_refused`: the skill and why.
pub(super) fn skill_refused(sk: &SkillRefused) -> Note {
    (
        "plexus.skill_refused",
        vec![
            s("plexus.skill", sk.skill.clone()),
            s("plexus.reason", sk.reason.clone()),
        ],
    )
}

/// `plexus.context_compressed`: tokens before and after, rounds summarised and kept.
pub(super) fn context_compressed(c: &ContextCompressed) -> Note {
    (
        "plexus.context_compressed",
        vec![
            i("plexus.before_tokens", c.before_tokens),
            i("plexus.after_tokens", c.after_tokens),
            i("plexus.rounds_summarised", c.rounds_summarised),
            i("plexus.rounds_kept", c.rounds_kept),
        ],
    )
}

/// `plexus.loop_finished`: why the loop stopped, and what it did.
pub(super) fn loop_finished(l: &LoopFinished) -> Note {
    (
        "plexus.loop_finished",
        vec![
            s("plexus.loop.stop", l.stop.clone()),
            i("plexus.loop.steps", l.steps),
            i("plexus.loop.tool_calls", l.tool_calls),
            i("plexus.loop.compressions", l.compressions),
            i("plexus.loop.total_tokens", l.total_tokens),
        ],
    )
}

/// `plexus.debate_started`: the embedder and the most rounds.
pub(super) fn debate_started(d: &DebateStarted) -> Note {
    (
        "plexus.debate_started",
        vec![
            s("plexus.debate.embedder", d.embedder.clone()),
            i("plexus.debate.max_rounds", d.spec.max_rounds),
        ],
    )
}

/// `plexus.debate_error`: the round and the message.
pub(super) fn debate_error(e: &DebateErrorLogged) -> Note {
    (
        "plexus.debate_error",
        vec![
            i("plexus.round", e.round),
            s("plexus.message", e.message.clone()),
        ],
    )
}
