//! The end of a model call's span: usage, outcome, grades, its cost when a price is
//! known, and (with `--otlp-content`) its prompt and answer as the GenAI conventions
//! record them.

use serde_json::json;

use super::attrs::{self, f, i, list, s};
use super::build::{Chat, ChatUsage, SpanBuilder};
use crate::base::protocol::{GradeCounts, InvocationStatus};
use crate::model::event::InvocationFinished;

/// Fills the span of call `inv` from its `invocation_finished`.
pub(super) fn finished(sb: &mut SpanBuilder, c: &mut Chat, inv: &str, fin: &InvocationFinished) {
    let (input, output) = match &fin.provider_usage {
        Some(u) => (u.prompt_tokens, u.completion_tokens),
        None => (
            fin.loop_prompt_tokens.unwrap_or(c.input_tokens),
            fin.output_tokens,
        ),
    };
    let span = &mut c.span;
    let outcome = fin.status.map_or("cancelled", InvocationStatus::as_str);
    for a in [
        i("gen_ai.usage.input_tokens", input),
        i("gen_ai.usage.output_tokens", output),
        list(
            "gen_ai.response.finish_reasons",
            [finish_reason(fin.status).to_string()],
        ),
        s("plexus.invocation.status", outcome),
        i("plexus.atoms", fin.atoms),
        f("plexus.avg_score", fin.avg_score),
        i("plexus.issues", fin.issues),
        i("plexus.duration_ms", fin.execution_time_ms),
    ] {
        attrs::set(span, a);
    }
    grades(span, &fin.grades);
    if !fin.errors.is_empty() {
        attrs::set(
            span,
            list(
                "plexus.errors",
                fin.errors.iter().map(|e| e.as_str().to_string()),
            ),
        );
    }
    let failed = matches!(
        fin.status,
        None | Some(InvocationStatus::Failed | InvocationStatus::Timeout)
    );
    match fin.errors.first() {
        Some(code) if failed => {
            attrs::set(span, s("error.type", code.as_str()));
            span.status = attrs::error(
                fin.error_message
                    .clone()
                    .unwrap_or_else(|| code.to_string()),
            );
        }
        _ if failed => {
            attrs::set(span, s("error.type", outcome));
            span.status = attrs::error(format!("the call ended {outcome}"));
        }
        _ => span.status = attrs::ok(),
    }
    // The cost recorded when the call ended (so a stored run exports what its live run
    // sent); else the builder's price lookup, when its caller gives one (plexus's own
    // live and stored exports give none: a call without a recorded cost has no price).
    let usd = fin.cost_usd.or_else(|| {
        sb.opts.cost.as_ref().and_then(|cost| {
            cost(&ChatUsage {
                provider: sb.provider.clone(),
                model: sb.model.clone(),
                input_tokens: input,
                output_tokens: output,
            })
        })
    });
    if let Some(usd) = usd {
        attrs::set(span, f("plexus.cost.usd", usd));
    }
    if let Some(source) = sb.opts.content.as_mut() {
        if let Some(p) = source.prompt(inv) {
            put_prompt(span, &p.system, &p.user);
        }
        put_answer(
            span,
            &std::mem::take(&mut c.output),
            finish_reason(fin.status),
        );
    }
}

/// What `gen_ai.response.finish_reasons` says: plexus keeps the call's outcome, not the
/// provider's own stop reason, so a call that answered says `stop`.
pub(super) fn finish_reason(st: Option<InvocationStatus>) -> &'static str {
    match st {
        Some(InvocationStatus::Success | InvocationStatus::Partial) => "stop",
        Some(InvocationStatus::Failed) => "error",
        Some(InvocationStatus::Timeout) => "timeout",
        None => "cancelled",
    }
}

/// `gen_ai.system_instructions` and `gen_ai.input.messages`.
pub(super) fn put_prompt(
    span: &mut opentelemetry_proto::tonic::trace::v1::Span,
    system: &str,
    user: &str,
) {
    let sys = json!([{ "type": "text", "content": system }]);
    let input = json!([{ "role": "user", "parts": [{ "type": "text", "content": user }] }]);
    attrs::set(span, s("gen_ai.system_instructions", sys.to_string()));
    attrs::set(span, s("gen_ai.input.messages", input.to_string()));
}

/// `gen_ai.output.messages`.
pub(super) fn put_answer(
    span: &mut opentelemetry_proto::tonic::trace::v1::Span,
    text: &str,
    reason: &str,
) {
    let output = json!([{
        "role": "assistant",
        "parts": [{ "type": "text", "content": text }],
        "finish_reason": reason
    }]);
    attrs::set(span, s("gen_ai.output.messages", output.to_string()));
}

/// `plexus.grades.A` … `plexus.grades.D` on `span`.
pub(super) fn grades(span: &mut opentelemetry_proto::tonic::trace::v1::Span, g: &GradeCounts) {
    for (k, v) in [("A", g.a), ("B", g.b), ("C", g.c), ("D", g.d)] {
        attrs::set(span, i(&format!("plexus.grades.{k}"), v));
    }
}
