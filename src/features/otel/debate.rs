//! A debate session's events in the span model: each turn an `invoke_agent` span with
//! its model calls under it; positions compared, host decisions and the session's end as
//! span events and attributes of the run's span.

use opentelemetry_proto::tonic::trace::v1::Span;

use super::attrs::{self, f, i, list, s};
use super::build::SpanBuilder;
use crate::model::event::debate::TurnOutcome;
use crate::model::event::{
    DebateFinished, DebateOutput, DebateReply, DebateTurnStarted, Envelope, HostDecided,
    PositionsCompared,
};

/// A turn's model call starts.
pub(super) fn turn_started(
    sb: &mut SpanBuilder,
    env: &Envelope,
    t: &DebateTurnStarted,
    out: &mut Vec<Span>,
) {
    let Some(inv) = &env.invocation_id else {
        return;
    };
    sb.open_chat(env, inv, out);
    if let Some(task) = &env.task_id {
        let span = sb.task_span(task, env.agent.as_ref(), env.ts, out);
        attrs::set(span, i("plexus.round", t.round));
        attrs::set(span, s("plexus.debate.role", t.agent.as_str()));
    }
    if let Some(c) = sb.chats.get_mut(inv) {
        attrs::set(&mut c.span, i("plexus.attempt", t.attempt));
        attrs::set(&mut c.span, i("plexus.round", t.round));
        if t.closing {
            attrs::set(&mut c.span, attrs::b("plexus.closing", true));
        }
    }
}

/// A turn's model call answered (or failed).
pub(super) fn reply(sb: &mut SpanBuilder, env: &Envelope, r: &DebateReply, out: &mut Vec<Span>) {
    let Some(inv) = &env.invocation_id else {
        return;
    };
    if !sb.chats.contains_key(inv) {
        sb.open_chat(env, inv, out);
    }
    let content = sb.content();
    let Some(mut c) = sb.chats.remove(inv) else {
        return;
    };
    let span = &mut c.span;
    attrs::set(span, i("gen_ai.usage.output_tokens", r.output_tokens));
    attrs::set(span, i("plexus.duration_ms", r.duration_ms));
    let failure = match (&r.provider_error, r.timed_out) {
        (_, true) => Some((
            "timeout".to_string(),
            "the call ran out of time".to_string(),
        )),
        (Some(e), false) => Some((e.kind.clone(), e.message.clone())),
        (None, false) => None,
    };
    let reason = match &failure {
        Some((kind, _)) if kind == "timeout" => "timeout",
        Some(_) => "error",
        None => "stop",
    };
    attrs::set(
        span,
        list("gen_ai.response.finish_reasons", [reason.to_string()]),
    );
    span.status = match failure {
        Some((kind, message)) => {
            attrs::set(span, s("error.type", kind));
            attrs::error(message)
        }
        None if !r.problems.is_empty() => {
            attrs::set(span, s("error.type", "invalid_output"));
            attrs::error(format!("{} problem(s) in the output", r.problems.len()))
        }
        None => attrs::ok(),
    };
    if !r.problems.is_empty() {
        attrs::set(span, i("plexus.problems", r.problems.len()));
    }
    if content {
        super::chat::put_answer(span, &r.text, reason);
    }
    sb.end_chat(c, env.ts, None, out);
}

/// A turn ended: its task span ends with the outcome.
pub(super) fn output(sb: &mut SpanBuilder, env: &Envelope, o: &DebateOutput, out: &mut Vec<Span>) {
    let Some(task) = &env.task_id else {
        return;
    };
    sb.task_span(task, env.agent.as_ref(), env.ts, out);
    if let Some(mut span) = sb.end_task(task, env.ts, out) {
        let outcome = match o.outcome {
            TurnOutcome::Valid => "valid",
            TurnOutcome::Invalid => "invalid",
            TurnOutcome::TimedOut => "timed_out",
            TurnOutcome::Failed => "failed",
            TurnOutcome::Cancelled => "cancelled",
        };
        attrs::set(&mut span, s("plexus.debate.outcome", outcome));
        attrs::set(&mut span, s("plexus.task.status", o.outcome.task_status()));
        attrs::set(&mut span, i("plexus.attempts", o.attempts));
        attrs::set(&mut span, attrs::b("plexus.reused", o.reused));
        attrs::set(&mut span, i("plexus.round", o.round));
        span.status = match o.outcome {
            TurnOutcome::Valid => attrs::ok(),
            _ => {
                attrs::set(&mut span, s("error.type", outcome));
                attrs::error(format!("the turn ended {outcome}"))
            }
        };
        out.push(span);
    }
}

/// A round's positions compared: an event on the run's span.
pub(super) fn compared(
    sb: &mut SpanBuilder,
    env: &Envelope,
    p: &PositionsCompared,
    out: &mut Vec<Span>,
) {
    let attributes = vec![
        i("plexus.round", p.round),
        f("plexus.mean_similarity", p.mean_similarity),
        f(
            "plexus.most_different_similarity",
            p.most_different_similarity,
        ),
        s("plexus.method", p.method.clone()),
    ];
    let env = Envelope {
        task_id: None,
        ..env.clone()
    };
    sb.note(&env, "plexus.positions_compared", attributes, out);
}

/// The host decided: an event on the run's span with the action it took.
pub(super) fn host(sb: &mut SpanBuilder, env: &Envelope, h: &HostDecided, out: &mut Vec<Span>) {
    let action = h
        .directive
        .get("action")
        .and_then(|a| a.as_str())
        .unwrap_or("decided")
        .to_string();
    let env = Envelope {
        task_id: None,
        ..env.clone()
    };
    sb.note(
        &env,
        "plexus.host_decided",
        vec![i("plexus.round", h.round), s("plexus.host.action", action)],
        out,
    );
}

/// The session ended: its outcome on the run's span.
pub(super) fn finished(
    sb: &mut SpanBuilder,
    env: &Envelope,
    d: &DebateFinished,
    out: &mut Vec<Span>,
) {
    sb.root_id(env.ts, out);
    if let Some(root) = sb.root.as_mut() {
        attrs::set(root, s("plexus.debate.status", d.status.as_str()));
        attrs::set(root, i("plexus.debate.rounds", d.rounds));
        if let Some(last) = d.consensus_trend.last() {
            attrs::set(root, f("plexus.debate.consensus", *last));
        }
        attrs::event(
            root,
            "plexus.debate_finished",
            env.ts,
            vec![s("plexus.reason", d.reason.clone())],
        );
    }
}
