//! Tool calls of a tool-using loop as `execute_tool` spans under their model call.

use std::sync::Arc;

use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, Span};

use super::attrs::{self, b, f, i, s};
use super::build::SpanBuilder;
use crate::model::event::{Envelope, ToolAnswered, ToolCalled};

/// A tool was asked for: its span opens under the model call (else the task).
pub(super) fn called(sb: &mut SpanBuilder, env: &Envelope, t: &ToolCalled, out: &mut Vec<Span>) {
    let inv: Arc<str> = env.invocation_id.clone().unwrap_or_else(|| Arc::from(""));
    let parent = match sb.chats.get(&inv) {
        Some(c) => c.span.span_id.clone(),
        None => match &env.task_id {
            Some(task) => sb
                .task_span(task, env.agent.as_ref(), env.ts, out)
                .span_id
                .clone(),
            None => sb.root_id(env.ts, out),
        },
    };
    let key = (inv.clone(), t.tool_call_id.clone());
    if let Some(mut old) = sb.tools.remove(&key) {
        old.status = attrs::error("asked again before it answered");
        out.push(old);
    }
    let id = attrs::span_id(
        &sb.run,
        &["tool", &inv, &t.tool_call_id, &t.step.to_string()],
    );
    let mut attributes = vec![
        s("gen_ai.operation.name", "execute_tool"),
        s("gen_ai.tool.name", t.tool.clone()),
        s("gen_ai.tool.call.id", t.tool_call_id.clone()),
        s("gen_ai.tool.type", "function"),
        s("openinference.span.kind", "TOOL"),
        i("plexus.step", t.step),
    ];
    if sb.content() {
        attributes.push(s("gen_ai.tool.call.arguments", t.input.to_string()));
    }
    let span = sb.span(
        id,
        parent,
        format!("execute_tool {}", t.tool),
        SpanKind::Internal,
        env.ts,
        attributes,
    );
    sb.tools.insert(key, span);
}

/// A tool answered: its span ends.
pub(super) fn answered(
    sb: &mut SpanBuilder,
    env: &Envelope,
    t: &ToolAnswered,
    out: &mut Vec<Span>,
) {
    let inv: Arc<str> = env.invocation_id.clone().unwrap_or_else(|| Arc::from(""));
    let key = (inv, t.tool_call_id.clone());
    let Some(mut span) = sb.tools.remove(&key) else {
        return;
    };
    for a in [
        f("plexus.tool.duration_ms", t.duration_ms),
        i("plexus.tool.input_tokens", t.input_tokens),
        i("plexus.tool.output_tokens", t.output_tokens),
        i("plexus.tool.retries", t.retries),
        b("plexus.tool.cached", t.cached),
        i("plexus.tool.data_size_bytes", t.data_size_bytes),
    ] {
        attrs::set(&mut span, a);
    }
    if sb.content() {
        attrs::set(
            &mut span,
            s("gen_ai.tool.call.result", t.observation.clone()),
        );
    }
    span.status = if t.is_error {
        attrs::set(&mut span, s("error.type", "tool_error"));
        attrs::error("the tool answered with an error")
    } else {
        attrs::ok()
    };
    span.end_time_unix_nano = attrs::nanos(env.ts);
    out.push(span);
}
