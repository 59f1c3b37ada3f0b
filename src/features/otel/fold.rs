//! One event into the span model: which span it opens, ends, or adds an event or
//! attributes to. Every event kind has its arm (no wildcard), so a new kind must decide
//! here what it means for a trace.

use opentelemetry_proto::tonic::trace::v1::Span;

use super::attrs::{f, i, list, s};
use super::build::SpanBuilder;
use super::fold_parts::on_call;
use crate::model::event::{EngineEvent, Envelope};

/// Folds `env` into `sb`; spans it ends go to `out`.
pub(super) fn fold(sb: &mut SpanBuilder, env: &Envelope, out: &mut Vec<Span>) {
    let ts = env.ts;
    match &env.event {
        EngineEvent::RunStarted(r) => super::fold_parts::run_started(sb, env, r, out),
        EngineEvent::CrashDetected(c) => sb.note(
            env,
            "plexus.crash_detected",
            vec![
                i("plexus.last_seq", c.last_seq),
                list("plexus.interrupted_tasks", c.interrupted_tasks.clone()),
            ],
            out,
        ),
        EngineEvent::LeaseTakenOver(l) => sb.note(
            env,
            "plexus.lease_taken_over",
            vec![
                i("plexus.previous_pid", l.previous_pid),
                s("plexus.reason", l.reason.clone()),
            ],
            out,
        ),
        EngineEvent::RunResumed(r) => sb.note(
            env,
            "plexus.run_resumed",
            vec![
                s("plexus.previous_status", r.previous_status.as_str()),
                i("plexus.finished_tasks", r.finished_tasks),
                i("plexus.remaining_tasks", r.remaining_tasks),
            ],
            out,
        ),
        EngineEvent::RunPaused(_) => sb.note(env, "plexus.paused", Vec::new(), out),
        EngineEvent::RunUnpaused(_) => sb.note(env, "plexus.unpaused", Vec::new(), out),
        EngineEvent::CancelRequested(c) => sb.note(
            env,
            "plexus.cancel_requested",
            vec![s("plexus.reason", c.reason.clone())],
            out,
        ),
        EngineEvent::BudgetReached(b) => sb.note(
            env,
            "plexus.budget_reached",
            vec![
                f("plexus.budget.limit_usd", b.limit_usd),
                f("plexus.cost.usd", b.spent_usd),
            ],
            out,
        ),
        EngineEvent::RunFinished(r) => super::fold_parts::run_finished(sb, env, r, out),
        EngineEvent::TaskReady(_) => {
            if let Some(t) = &env.task_id {
                sb.task_span(t, env.agent.as_ref(), ts, out);
            }
        }
        EngineEvent::TaskBlocked(bl) => super::fold_parts::task_blocked(sb, env, bl, out),
        EngineEvent::TaskFinished(tf) => super::fold_parts::task_finished(sb, env, tf, out),
        EngineEvent::TaskReset(r) => super::fold_parts::task_reset(sb, env, r, out),
        EngineEvent::InvocationStarted(st) => {
            super::fold_parts::invocation_started(sb, env, st, out)
        }
        EngineEvent::Chunk(ch) => {
            let content = sb.content();
            if let Some(c) = env.invocation_id.as_ref().and_then(|i| sb.chats.get_mut(i)) {
                if content {
                    c.output.push_str(&ch.text);
                }
            }
        }
        EngineEvent::InvocationFinished(fin) => {
            if let Some(inv) = &env.invocation_id {
                if !sb.chats.contains_key(inv) {
                    sb.open_chat(env, inv, out);
                }
                if let Some(mut c) = sb.chats.remove(inv) {
                    super::chat::finished(sb, &mut c, inv, fin);
                    sb.end_chat(c, ts, None, out);
                }
            }
        }
        EngineEvent::InvocationLost(l) => super::fold_parts::invocation_lost(sb, env, l, out),
        EngineEvent::AtomsGraded(g) => super::fold_parts::atoms_graded(sb, env, g, out),
        EngineEvent::RetryScheduled(r) => super::fold_parts::retry_scheduled(sb, env, r, out),
        EngineEvent::ReferenceFailed(r) => sb.note(
            env,
            "plexus.reference_failed",
            vec![i("plexus.reference.index", r.index)],
            out,
        ),
        EngineEvent::ContextPlanned(c) => super::fold_parts::context_planned(sb, env, c, out),
        EngineEvent::ReviewAccepted(r) => sb.note(
            env,
            "plexus.review",
            vec![
                s("plexus.review.decision", "accepted"),
                s("plexus.review.reviewer", r.reviewer.clone()),
                s("plexus.task.status", r.status.as_str()),
                i("plexus.atoms", r.atoms),
            ],
            out,
        ),
        EngineEvent::ReviewRejected(r) => sb.note(
            env,
            "plexus.review",
            vec![
                s("plexus.review.decision", "rejected"),
                s("plexus.review.reviewer", r.reviewer.clone()),
            ],
            out,
        ),
        EngineEvent::ToolCalled(t) => super::tools::called(sb, env, t, out),
        EngineEvent::ToolAnswered(t) => super::tools::answered(sb, env, t, out),
        EngineEvent::SkillActivated(sk) => on_call(
            sb,
            env,
            "plexus.skill_activated",
            vec![
                s("plexus.skill", sk.skill.clone()),
                i("plexus.tokens", sk.tokens),
            ],
            out,
        ),
        EngineEvent::SkillRefused(sk) => on_call(
            sb,
            env,
            "plexus.skill_refused",
            vec![
                s("plexus.skill", sk.skill.clone()),
                s("plexus.reason", sk.reason.clone()),
            ],
            out,
        ),
        EngineEvent::ContextCompressed(c) => on_call(
            sb,
            env,
            "plexus.context_compressed",
            vec![
                i("plexus.before_tokens", c.before_tokens),
                i("plexus.after_tokens", c.after_tokens),
                i("plexus.rounds_summarised", c.rounds_summarised),
                i("plexus.rounds_kept", c.rounds_kept),
            ],
            out,
        ),
        EngineEvent::LoopFinished(l) => on_call(
            sb,
            env,
            "plexus.loop_finished",
            vec![
                s("plexus.loop.stop", l.stop.clone()),
                i("plexus.loop.steps", l.steps),
                i("plexus.loop.tool_calls", l.tool_calls),
                i("plexus.loop.compressions", l.compressions),
                i("plexus.loop.total_tokens", l.total_tokens),
            ],
            out,
        ),
        EngineEvent::DebateStarted(d) => sb.note(
            env,
            "plexus.debate_started",
            vec![
                s("plexus.debate.embedder", d.embedder.clone()),
                i("plexus.debate.max_rounds", d.spec.max_rounds),
            ],
            out,
        ),
        EngineEvent::DebateTurnStarted(t) => super::debate::turn_started(sb, env, t, out),
        EngineEvent::DebateReply(r) => super::debate::reply(sb, env, r, out),
        EngineEvent::DebateOutput(o) => super::debate::output(sb, env, o, out),
        EngineEvent::PositionsCompared(p) => super::debate::compared(sb, env, p, out),
        EngineEvent::HostDecided(h) => super::debate::host(sb, env, h, out),
        EngineEvent::DebateError(e) => sb.note(
            env,
            "plexus.debate_error",
            vec![
                i("plexus.round", e.round),
                s("plexus.message", e.message.clone()),
            ],
            out,
        ),
        EngineEvent::DebateFinished(d) => super::debate::finished(sb, env, d, out),
    }
}

impl SpanBuilder {
    /// Folds one event; spans it ends go to `out`.
    pub fn feed(&mut self, env: &Envelope, out: &mut Vec<Span>) {
        self.last_ts = self.last_ts.max(env.ts);
        fold(self, env, out);
    }
}
