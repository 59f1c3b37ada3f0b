//! The arms of the span fold that take more than a line: runs, tasks and calls opening
//! and ending their spans.

use std::sync::Arc;

use opentelemetry_proto::tonic::trace::v1::Span;

use super::attrs::{self, b, f, i, s};
use super::build::{provider_and_model, SpanBuilder};
use super::chat::grades;
use crate::base::protocol::GradeCounts;
use crate::model::event::{
    AtomsGraded, ContextPlanned, Envelope, InvocationLost, InvocationStarted, RetryScheduled,
    RunFinished, RunStarted, RunStatus, TaskBlocked, TaskFinished, TaskReset, TaskStatus,
};

/// A run starts: the root span, with the run's settings.
pub(super) fn run_started(
    sb: &mut SpanBuilder,
    env: &Envelope,
    r: &RunStarted,
    out: &mut Vec<Span>,
) {
    let ts = env.ts;
    sb.plan_id = r.plan_id.clone();
    (sb.provider, sb.model) = provider_and_model(&r.provider);
    sb.open_root(ts, out);
    if let Some(root) = sb.root.as_mut() {
        for a in [
            s("plexus.execution_mode", r.execution_mode.clone()),
            s("gen_ai.provider.name", sb.provider.clone()),
            s("gen_ai.request.model", sb.model.clone()),
            i("plexus.seed", r.seed),
            i("plexus.concurrency", r.concurrency),
            i("plexus.tasks", r.tasks.len()),
        ] {
            attrs::set(root, a);
        }
    }
}

/// A run ends: every open span closed, the root ended with the run's outcome.
pub(super) fn run_finished(
    sb: &mut SpanBuilder,
    env: &Envelope,
    r: &RunFinished,
    out: &mut Vec<Span>,
) {
    let ts = env.ts;
    sb.close_all(ts, "the run ended before this ended", out);
    sb.root_id(ts, out);
    if let Some(mut root) = sb.root.take() {
        attrs::set(&mut root, s("plexus.run.status", r.status.as_str()));
        attrs::set(&mut root, i("plexus.atoms", r.atoms));
        grades(&mut root, &r.grades);
        root.status = match r.status {
            RunStatus::Succeeded | RunStatus::Partial => attrs::ok(),
            other => attrs::error(format!("the run ended {}", other.label())),
        };
        root.end_time_unix_nano = attrs::nanos(ts);
        out.push(root);
    }
}

/// A task is blocked: its span says by what.
pub(super) fn task_blocked(
    sb: &mut SpanBuilder,
    env: &Envelope,
    bl: &TaskBlocked,
    out: &mut Vec<Span>,
) {
    let ts = env.ts;
    if let Some(t) = &env.task_id {
        let span = sb.task_span(t, env.agent.as_ref(), ts, out);
        attrs::set(span, s("plexus.blocked_by", bl.upstream.clone()));
        attrs::event(
            span,
            "plexus.blocked",
            ts,
            vec![s("plexus.message", bl.message.clone())],
        );
    }
}

/// A task ends: its span ended with the task's outcome.
pub(super) fn task_finished(
    sb: &mut SpanBuilder,
    env: &Envelope,
    tf: &TaskFinished,
    out: &mut Vec<Span>,
) {
    let ts = env.ts;
    if let Some(t) = &env.task_id {
        sb.task_span(t, env.agent.as_ref(), ts, out);
        if let Some(mut span) = sb.end_task(t, ts, out) {
            attrs::set(&mut span, s("plexus.task.status", tf.status.as_str()));
            attrs::set(&mut span, i("plexus.attempts", tf.attempts));
            attrs::set(&mut span, i("plexus.atoms", tf.atoms));
            if let Some(code) = tf.error_code {
                attrs::set(&mut span, s("error.type", code.as_str()));
            }
            span.status = task_status(tf.status, tf.error_message.as_deref());
            out.push(span);
        }
    }
}

/// A task is reset: its open span ended as such.
pub(super) fn task_reset(sb: &mut SpanBuilder, env: &Envelope, r: &TaskReset, out: &mut Vec<Span>) {
    let ts = env.ts;
    if let Some(t) = &env.task_id {
        if let Some(mut span) = sb.end_task(t, ts, out) {
            span.status = attrs::error("reset before its end");
            out.push(span);
        }
    }
    sb.note(
        env,
        "plexus.task_reset",
        vec![s("plexus.reason", r.reason.clone())],
        out,
    );
}

/// A call starts: its chat span, with what it asks for.
pub(super) fn invocation_started(
    sb: &mut SpanBuilder,
    env: &Envelope,
    st: &InvocationStarted,
    out: &mut Vec<Span>,
) {
    if let Some(inv) = &env.invocation_id {
        sb.open_chat(env, inv, out);
        if let Some(c) = sb.chats.get_mut(inv) {
            c.input_tokens = st.prompt_tokens;
            for a in [
                i("plexus.attempt", st.attempt),
                i("gen_ai.request.max_tokens", st.constraints.max_tokens),
                f("gen_ai.request.temperature", st.constraints.temperature),
                s("plexus.quality_threshold", st.quality_threshold.clone()),
            ] {
                attrs::set(&mut c.span, a);
            }
        }
    }
}

/// A call a crash left open: its span ended as lost.
pub(super) fn invocation_lost(
    sb: &mut SpanBuilder,
    env: &Envelope,
    l: &InvocationLost,
    out: &mut Vec<Span>,
) {
    let ts = env.ts;
    if let Some(inv) = &env.invocation_id {
        if let Some(mut c) = sb.chats.remove(inv) {
            attrs::set(
                &mut c.span,
                i("gen_ai.usage.output_tokens", l.output_tokens),
            );
            if let Some(usd) = l.cost_usd {
                attrs::set(&mut c.span, f("plexus.cost.usd", usd));
            }
            attrs::event(
                &mut c.span,
                "plexus.lost",
                ts,
                vec![s("plexus.reason", l.reason.clone())],
            );
            sb.end_chat(c, l.last_ts.max(0), Some("lost"), out);
        }
    }
}

/// An answer's atoms graded: an event on the call's span.
pub(super) fn atoms_graded(
    sb: &mut SpanBuilder,
    env: &Envelope,
    g: &AtomsGraded,
    out: &mut Vec<Span>,
) {
    let mut counts = GradeCounts::default();
    for a in &g.atoms {
        counts.add(a.grade);
    }
    let attributes = vec![
        i("plexus.atoms", g.atoms.len()),
        i("plexus.grade.A", counts.a),
        i("plexus.grade.B", counts.b),
        i("plexus.grade.C", counts.c),
        i("plexus.grade.D", counts.d),
    ];
    on_call(sb, env, "plexus.atoms_graded", attributes, out);
}

/// A retry scheduled: an event on the task's span.
pub(super) fn retry_scheduled(
    sb: &mut SpanBuilder,
    env: &Envelope,
    r: &RetryScheduled,
    out: &mut Vec<Span>,
) {
    let mut attributes = vec![
        i("plexus.next_attempt", r.next_attempt),
        s("error.type", r.error_code.as_str()),
        i("plexus.delay_ms", r.delay_ms),
        s("plexus.adjustment", r.adjustment.clone()),
        b("plexus.transient", r.is_transient()),
    ];
    if let Some(batch) = r.batch {
        attributes.push(i("plexus.batch", batch));
    }
    sb.note(env, "plexus.retry_scheduled", attributes, out);
}

/// A span event on the envelope's model call, else on its task or the run.
pub(super) fn on_call(
    sb: &mut SpanBuilder,
    env: &Envelope,
    name: &str,
    attributes: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>,
    out: &mut Vec<Span>,
) {
    let inv: Option<&Arc<str>> = env.invocation_id.as_ref();
    match inv.and_then(|i| sb.chats.get_mut(i)) {
        Some(c) => attrs::event(&mut c.span, name, env.ts, attributes),
        None => sb.note(env, name, attributes, out),
    }
}

/// A task's span status from its final status.
pub(super) fn task_status(
    st: TaskStatus,
    message: Option<&str>,
) -> Option<opentelemetry_proto::tonic::trace::v1::Status> {
    match st {
        TaskStatus::Success | TaskStatus::Partial => attrs::ok(),
        TaskStatus::Pending | TaskStatus::Ready | TaskStatus::Running => None,
        other => attrs::error(
            message
                .map(str::to_string)
                .unwrap_or_else(|| format!("the task ended {}", other.as_str())),
        ),
    }
}

/// A task's context planned: an event with its figures on the task's span.
pub(super) fn context_planned(
    sb: &mut SpanBuilder,
    env: &Envelope,
    c: &ContextPlanned,
    out: &mut Vec<Span>,
) {
    let r = &c.report;
    let attributes = vec![
        i("plexus.context.inputs", c.inputs.len()),
        i("plexus.context.total_tokens", r.total_tokens),
        i("plexus.context.limit", r.context_limit),
        i("plexus.context.overflow", r.overflow),
        s("plexus.context.strategy", r.resolution.strategy.clone()),
        i("plexus.context.trim_actions", r.resolution.actions.len()),
        i("plexus.context.final_tokens", r.resolution.final_tokens),
    ];
    sb.note(env, "plexus.context_planned", attributes, out);
}
