//! Executing one tool call: checks, time limits, retries, the output level, storing large
//! results, the cache, and one observation whatever happens.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use futures_util::FutureExt;

use serde_json::Value;

use super::cache::ToolCache;
use super::context::{CancelFlag, ToolContext};
use super::error::{ToolError, ToolErrorCode};
use super::level::{effective_level, level_name, take_level_arg};
use super::registry::ToolRegistry;
use super::retry::Sleeper;
use super::spill::{
    should_spill, stored_observation, unstored_observation, write_data_file, SPILL_THRESHOLD_BYTES,
};
use super::tool::{json_size, Tool, ToolData};
use super::validate::{validate_args, validate_input_size, MAX_INPUT_MB};
use crate::base::protocol::messages::{
    ContentBlock, ContentBlockType, OutputLevel, ToolCallMessage, ToolMetrics, ToolResultMessage,
    ToolRetryPolicy,
};
use crate::base::protocol::Extra;

/// Longest error message kept in an observation, in characters.
const MAX_ERROR_MESSAGE_CHARS: usize = 2_000;

/// Arguments larger than this (bytes) have their tokens estimated (bytes / 4), not
/// counted, for the metrics.
const MAX_COUNTED_INPUT: u64 = 1 << 20;

/// The outcome of one call: the observation message, the metrics, and whether it came
/// from the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    /// What the model sees.
    pub result: ToolResultMessage,
    /// Metrics of the call (a cache hit records 0 retries).
    pub metrics: ToolMetrics,
    /// Whether the result came from the cache.
    pub cached: bool,
}

/// Executes `call` without a cache; see [`execute_cached`].
pub async fn execute(
    call: &ToolCallMessage,
    ctx: &ToolContext,
    registry: &ToolRegistry,
    policy: &ToolRetryPolicy,
    sleeper: &dyn Sleeper,
) -> (ToolResultMessage, ToolMetrics) {
    let run = execute_cached(call, ctx, registry, policy, sleeper, None).await;
    (run.result, run.metrics)
}

/// Executes `call`: finds the tool (an unknown name is an error observation), checks the
/// arguments' size (≤ 10 MB) and shape (the tool's schema), decides the output level
/// ([`effective_level`]), answers from `cache` when the tool is idempotent for these
/// arguments, else runs the tool under its time limit, retrying timeouts and resource
/// errors as `policy` says (waiting through `sleeper`, each retry with a longer limit),
/// and renders the data at the level, storing it in the run's data folder when it is
/// ≥ 1 MB or the level is full. Every failure is one observation in the unified error
/// format, `success == false`. Never panics, whatever the model wrote.
pub async fn execute_cached(
    call: &ToolCallMessage,
    ctx: &ToolContext,
    registry: &ToolRegistry,
    policy: &ToolRetryPolicy,
    sleeper: &dyn Sleeper,
    cache: Option<&ToolCache>,
) -> ToolRun {
    let started = Instant::now();
    let mut params = call.parameters.clone();
    let asked = take_level_arg(&mut params, call.output_level);
    let args = Value::Object(params);
    let input_size = json_size(&args);
    let input_tokens = if input_size > MAX_COUNTED_INPUT {
        input_size / 4
    } else {
        ctx.token_counter.count(&args.to_string())
    };
    let tool = registry.get(&call.tool_name);
    let tool_default = tool.as_ref().ok().and_then(|t| t.default_output_level());
    let level = effective_level(
        asked.clone().ok().flatten(),
        tool_default,
        ctx.global_default_level,
        ctx.context_usage,
    );
    let finish = |result: ToolResultMessage, retry_count: u32, cached: bool| {
        let metrics = ToolMetrics {
            tool_name: call.tool_name.clone(),
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            input_tokens,
            output_tokens: ctx.token_counter.count(&result.observation),
            success: result.success,
            retry_count,
            output_level: level_name(level).to_string(),
        };
        ToolRun {
            result,
            metrics,
            cached,
        }
    };
    let checked = asked.and(tool).and_then(|t| {
        validate_input_size(&args, MAX_INPUT_MB)?;
        validate_args(&t.input_schema(), &args)?;
        Ok(t)
    });
    let tool = match checked {
        Ok(t) => t,
        Err(e) => return finish(error_result(&call.tool_call_id, level, &e), 0, false),
    };
    let key = match cache {
        Some(c) if tool.is_idempotent(&args) => {
            Some((c, ToolCache::key(tool.name(), &args, level)))
        }
        _ => None,
    };
    if let Some((c, k)) = &key {
        if let Some(mut hit) = c.get(k) {
            hit.tool_call_id = call.tool_call_id.clone();
            return finish(hit, 0, true);
        }
    }
    let (outcome, retries) = run_with_retries(tool.as_ref(), ctx, &args, policy, sleeper).await;
    let result = outcome
        .and_then(|data| observe(&call.tool_call_id, ctx, level, &data))
        .unwrap_or_else(|e| error_result(&call.tool_call_id, level, &e));
    if let Some((c, k)) = key {
        c.put(k, &result);
    }
    finish(result, retries, false)
}

/// Runs `tool` until it succeeds, fails for good or runs out of retries; returns the
/// outcome and the number of retries made.
async fn run_with_retries(
    tool: &dyn Tool,
    ctx: &ToolContext,
    args: &Value,
    policy: &ToolRetryPolicy,
    sleeper: &dyn Sleeper,
) -> (Result<ToolData, ToolError>, u32) {
    let mut retries = 0u32;
    loop {
        let limit = policy.get_retry_timeout(tool.timeout(), retries);
        let mut attempt = ctx.clone();
        attempt.cancel = CancelFlag::default();
        // A tool that panics (building its future or running it) fails this call only.
        let started = catch_unwind(AssertUnwindSafe(|| tool.run(&attempt, args)));
        let outcome = match started {
            Ok(fut) => tokio::time::timeout(limit, AssertUnwindSafe(fut).catch_unwind()).await,
            Err(_) => Ok(Err(Box::new(()) as Box<dyn std::any::Any + Send>)),
        };
        let err = match outcome {
            Ok(Ok(Ok(data))) => return (Ok(data), retries),
            Ok(Ok(Err(e))) => e,
            Ok(Err(_)) => ToolError::failed(
                ToolErrorCode::ToolFailed,
                format!("`{}` stopped unexpectedly (it panicked)", tool.name()),
            ),
            Err(_) => {
                attempt.cancel.cancel();
                ToolError::timeout(format!(
                    "`{}` did not finish within {} ms",
                    tool.name(),
                    limit.as_millis()
                ))
            }
        };
        if !policy.should_retry(&err.error_type, retries) {
            return (Err(err), retries);
        }
        retries += 1;
        sleeper
            .sleep(Duration::from_millis(policy.delay_ms(retries)))
            .await;
    }
}

/// The success observation of `data` at `level`: stored in a file when it is ≥ 1 MB or
/// the level is full. Without a data folder, full data under 1 MB is shown whole and
/// larger data is summarised.
pub fn observe(
    tool_call_id: &str,
    ctx: &ToolContext,
    level: OutputLevel,
    data: &ToolData,
) -> Result<ToolResultMessage, ToolError> {
    let size = data.size_bytes();
    let brief = data.render(OutputLevel::Brief);
    let mut result = ToolResultMessage {
        tool_call_id: tool_call_id.to_string(),
        observation: String::new(),
        output_level: level,
        data_file: None,
        data_size_bytes: size,
        data_summary: None,
        success: true,
        error_type: None,
        error_code: None,
        error_message: None,
    };
    if !should_spill(size, level) {
        result.observation = data.render(level);
        return Ok(result);
    }
    match &ctx.data_dir {
        Some(dir) => {
            let path = write_data_file(dir, tool_call_id, data)?;
            result.observation = stored_observation(&path, size, &brief);
            result.data_file = Some(path.to_string_lossy().into_owned());
            result.data_summary = Some(brief);
        }
        None if size < SPILL_THRESHOLD_BYTES => result.observation = data.render(level),
        None => {
            result.observation = unstored_observation(size, &brief);
            result.data_summary = Some(brief);
        }
    }
    Ok(result)
}

/// The failure message of `e`: the unified error observation of seed 003.
pub fn error_result(tool_call_id: &str, level: OutputLevel, e: &ToolError) -> ToolResultMessage {
    let message =
        crate::base::text::cut::cut_chars(&e.message, MAX_ERROR_MESSAGE_CHARS).into_owned();
    let mut result = ToolResultMessage {
        tool_call_id: tool_call_id.to_string(),
        observation: String::new(),
        output_level: level,
        data_file: None,
        data_size_bytes: 0,
        data_summary: None,
        success: false,
        error_type: Some(e.error_type.as_str().to_string()),
        error_code: Some(e.code.as_str().to_string()),
        error_message: Some(message),
    };
    result.observation = result.format_error_observation();
    result
}

/// The `tool_result` content block answering a call: the observation as its `content`,
/// `is_error` when the call failed.
pub fn tool_result_block(result: &ToolResultMessage) -> ContentBlock {
    let mut extra = Extra::new();
    extra.insert("content".into(), Value::String(result.observation.clone()));
    ContentBlock {
        block_type: ContentBlockType::ToolResult,
        text: None,
        thinking: None,
        id: None,
        name: None,
        input: None,
        tool_use_id: Some(result.tool_call_id.clone()),
        is_error: !result.success,
        extra,
    }
}
