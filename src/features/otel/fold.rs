//! One event into the span model: which span it opens, ends, or adds an event or
//! attributes to. Every event kind has its arm (no wildcard), so a new kind must decide
//! here what it means for a trace.

use opentelemetry_proto::tonic::trace::v1::Span;

use super::build::SpanBuilder;
use super::fold_parts::on_call;
use super::notes::{self, Note};
use crate::model::event::{Chunk, EngineEvent, Envelope, InvocationFinished};

/// Folds `env` into `sb`; spans it ends go to `out`.
pub(super) fn fold(sb: &mut SpanBuilder, env: &Envelope, out: &mut Vec<Span>) {
    use super::fold_parts as parts;
    match &env.event {
        EngineEvent::RunStarted(r) => parts::run_started(sb, env, r, out),
        EngineEvent::CrashDetected(c) => note(sb, env, notes::crash_detected(c), out),
        EngineEvent::LeaseTakenOver(l) => note(sb, env, notes::lease_taken_over(l), out),
        EngineEvent::RunResumed(r) => note(sb, env, notes::run_resumed(r), out),
        EngineEvent::RunPaused(_) => note(sb, env, ("plexus.paused", Vec::new()), out),
        EngineEvent::RunUnpaused(_) => note(sb, env, ("plexus.unpaused", Vec::new()), out),
        EngineEvent::CancelRequested(c) => note(sb, env, notes::cancel_requested(c), out),
        EngineEvent::BudgetReached(b) => note(sb, env, notes::budget_reached(b), out),
        EngineEvent::RunFinished(r) => parts::run_finished(sb, env, r, out),
        EngineEvent::TaskReady(_) => task_ready(sb, env, out),
        EngineEvent::TaskBlocked(bl) => parts::task_blocked(sb, env, bl, out),
        EngineEvent::TaskFinished(tf) => parts::task_finished(sb, env, tf, out),
        EngineEvent::TaskReset(r) => parts::task_reset(sb, env, r, out),
        EngineEvent::InvocationStarted(st) => parts::invocation_started(sb, env, st, out),
        EngineEvent::Chunk(ch) => chunk(sb, env, ch),
        EngineEvent::InvocationFinished(fin) => invocation_finished(sb, env, fin, out),
        EngineEvent::InvocationLost(l) => parts::invocation_lost(sb, env, l, out),
        EngineEvent::AtomsGraded(g) => parts::atoms_graded(sb, env, g, out),
        EngineEvent::RetryScheduled(r) => parts::retry_scheduled(sb, env, r, out),
        EngineEvent::ReferenceFailed(r) => note(sb, env, notes::reference_failed(r), out),
        EngineEvent::ContextPlanned(c) => parts::context_planned(sb, env, c, out),
        EngineEvent::ReviewAccepted(r) => note(sb, env, notes::review_accepted(r), out),
        EngineEvent::ReviewRejected(r) => note(sb, env, notes::review_rejected(r), out),
        EngineEvent::ToolCalled(t) => super::tools::called(sb, env, t, out),
        EngineEvent::ToolAnswered(t) => super::tools::answered(sb, env, t, out),
        EngineEvent::SkillActivated(sk) => call_note(sb, env, notes::skill_activated(sk), out),
        EngineEvent::SkillRefused(sk) => call_note(sb, env, notes::skill_refused(sk), out),
        EngineEvent::ContextCompressed(c) => call_note(sb, env, notes::context_compressed(c), out),
        EngineEvent::LoopFinished(l) => call_note(sb, env, notes::loop_finished(l), out),
        EngineEvent::DebateStarted(d) => note(sb, env, notes::debate_started(d), out),
        EngineEvent::DebateTurnStarted(t) => super::debate::turn_started(sb, env, t, out),
        EngineEvent::DebateReply(r) => super::debate::reply(sb, env, r, out),
        EngineEvent::DebateOutput(o) => super::debate::output(sb, env, o, out),
        EngineEvent::PositionsCompared(p) => super::debate::compared(sb, env, p, out),
        EngineEvent::HostDecided(h) => super::debate::host(sb, env, h, out),
        EngineEvent::DebateError(e) => note(sb, env, notes::debate_error(e), out),
        EngineEvent::DebateFinished(d) => super::debate::finished(sb, env, d, out),
    }
}

/// Notes `note` on the span `env` belongs to (its call, task or the run).
fn note(sb: &mut SpanBuilder, env: &Envelope, (name, attrs): Note, out: &mut Vec<Span>) {
    sb.note(env, name, attrs, out);
}

/// Notes `note` on the span of `env`'s call.
fn call_note(sb: &mut SpanBuilder, env: &Envelope, (name, attrs): Note, out: &mut Vec<Span>) {
    on_call(sb, env, name, attrs, out);
}

/// A task is ready: its span opens.
fn task_ready(sb: &mut SpanBuilder, env: &Envelope, out: &mut Vec<Span>) {
    if let Some(t) = &env.task_id {
        sb.task_span(t, env.agent.as_ref(), env.ts, out);
    }
}

/// A chunk of a call's answer: kept on its chat span when content is recorded.
fn chunk(sb: &mut SpanBuilder, env: &Envelope, ch: &Chunk) {
    let content = sb.content();
    if let Some(c) = env.invocation_id.as_ref().and_then(|i| sb.chats.get_mut(i)) {
        if content {
            c.output.push_str(&ch.text);
        }
    }
}

/// A call finished: its chat span (opened now if it never was) ends.
fn invocation_finished(
    sb: &mut SpanBuilder,
    env: &Envelope,
    fin: &InvocationFinished,
    out: &mut Vec<Span>,
) {
    let Some(inv) = &env.invocation_id else {
        return;
    };
    if !sb.chats.contains_key(inv) {
        sb.open_chat(env, inv, out);
    }
    if let Some(mut c) = sb.chats.remove(inv) {
        super::chat::finished(sb, &mut c, inv, fin);
        sb.end_chat(c, env.ts, None, out);
    }
}

impl SpanBuilder {
    /// Folds one event; spans it ends go to `out`.
    pub fn feed(&mut self, env: &Envelope, out: &mut Vec<Span>) {
        self.last_ts = self.last_ts.max(env.ts);
        fold(self, env, out);
    }
}
