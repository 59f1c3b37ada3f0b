//! A call stopped before its end (a cancel, an interrupt, the run's spent money budget):
//! its row and its `invocation_finished`, committed together, with the text it had
//! streamed and why it stopped.

use serde_json::json;

use super::emit::Scope;
use super::run_ctx::RunCtx;
use crate::data::store::{InvocationRecord, WriteOp};
use crate::model::event::{EngineEvent, InvocationFinished};

/// Records the stopped call `record` (its time, tokens and cost filled in), which had
/// streamed `text` in `chunks` chunks and stopped for `why`; a loop's prompt tokens over
/// its steps are `loop_prompt`.
pub(super) fn record(
    ctx: &RunCtx,
    scope: &Scope,
    mut record: InvocationRecord,
    (text, chunks): (&str, u64),
    why: &str,
    loop_prompt: Option<u64>,
) {
    record.response_json = json!({"cancelled": true, "partial_text": text}).to_string();
    let finished = InvocationFinished {
        status: None,
        execution_time_ms: record.execution_time_ms,
        output_tokens: record.output_tokens,
        chunks,
        atoms: 0,
        avg_score: 0.0,
        grades: Default::default(),
        issues: 0,
        errors: vec![],
        error_message: Some(why.into()),
        provider_usage: None,
        cost_usd: record.cost_usd,
        loop_prompt_tokens: loop_prompt,
    };
    // The row and its event commit together.
    let ended = ctx
        .emitter
        .emit_with(scope, EngineEvent::InvocationFinished(finished), |env| {
            WriteOp::WithEvent(Box::new(WriteOp::Invocation(Box::new(record))), env)
        });
    if let Err(e) = ended {
        // The task stops anyway; a resume closes the call as lost.
        tracing::error!("cannot record a stopped call: {e}");
    }
}
