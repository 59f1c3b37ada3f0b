//! One attempt's request, before its call: the constraints with the retries'
//! adjustments, the prompt and its tools, the schema the answer is held to, the row
//! the call is stored in, and its start in the log.

use std::sync::Arc;

use super::attempt::Adjust;
use super::budget::over_input_limit;
use super::emit::Scope;
use super::request::{
    constraints_for, render_user_prompt, user_prompt_for, ContextParts, StoredRequest,
};
use super::run_ctx::RunCtx;
use crate::base::protocol::AgentRequest;
use crate::data::store::InvocationRecord;
use crate::model::event::{EngineEvent, InvocationStarted};
use crate::model::plan::react::ReactSetup;

/// One attempt's request, ready to send.
pub(super) struct Prepared {
    pub(super) request: Arc<AgentRequest>,
    /// The request as stored (empty when the prompt could not be rendered).
    pub(super) request_json: String,
    /// The hash of the agent's system prompt, stored with the call.
    pub(super) prompt_hash: String,
    pub(super) prompt_tokens: u64,
    pub(super) react: Option<ReactSetup>,
    pub(super) toolbox: Option<Box<dyn super::react_loop::Toolbox>>,
}

/// Builds attempt `attempt`'s request (its prompt with the retries' feedback, its tools
/// when it has a loop); `Err` says why it cannot be sent (over the agent's input limit).
pub(super) fn prepare(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
    adjust: &Adjust,
    parts: &ContextParts,
    context_report: &Option<serde_json::Value>,
    inv_id: &str,
    attempt: u32,
) -> Result<Prepared, String> {
    let agent_def = &ctx.plan.agents[&*task.agent];
    let (prompt_hash, system_tokens) = ctx.system_prompt_info(&task.agent);
    let constraints = attempt_constraints(ctx, agent_def, task, adjust);
    let format = ctx.answer_formats.of(task, agent_def);
    let user_prompt = user_prompt_for(
        task,
        agent_def,
        adjust.threshold,
        adjust.feedback.as_deref(),
        parts.clone(),
        format.json(),
    );
    // Rendered once: counted here, stored as it is (no second parse to validate it).
    let raw_user = render_user_prompt(&user_prompt);
    let user_text = raw_user.as_deref().map(|r| r.get()).unwrap_or_default();
    // A tool-using task's prompt carries its tool schemas too.
    let react = super::toolbox::with_fetch(
        ctx.plan.react_for(task),
        !parts.fetchable.is_empty(),
        agent_def,
    );
    let toolbox = react
        .as_ref()
        .map(|setup| super::toolbox::for_task(ctx, task, setup, attempt, &parts.fetchable));
    let tools_tokens = toolbox.as_ref().map_or(0, |t| {
        ctx.config
            .tokens
            .count(&serde_json::to_string(&t.definitions()).unwrap_or_default())
    });
    let prompt_tokens = system_tokens + format.prompt_tokens(user_text) + tools_tokens;
    if let Some(why) = over_input_limit(task, agent_def, prompt_tokens, system_tokens, tools_tokens)
    {
        return Err(why);
    }
    let request = build_request(
        ctx,
        task,
        agent_def,
        inv_id,
        user_prompt,
        constraints,
        context_report,
        parts,
    );
    let request_json = match &raw_user {
        Some(raw) => serde_json::to_string(&StoredRequest::new(&request, &prompt_hash, raw))
            .unwrap_or_default(),
        None => String::new(),
    };
    Ok(Prepared {
        request,
        request_json,
        prompt_hash,
        prompt_tokens,
        react,
        toolbox,
    })
}

/// The constraints of the next attempt: the agent's and the plan's, the profile's own
/// timeout in place of the plan's (a local model needs minutes), and what the retries so
/// far changed (a longer timeout, more tokens, a cooler temperature).
pub(super) fn attempt_constraints(
    ctx: &RunCtx,
    agent_def: &crate::base::agents::AgentDef,
    task: &crate::model::plan::Task,
    adjust: &Adjust,
) -> crate::base::protocol::Constraints {
    let mut constraints = constraints_for(
        agent_def,
        ctx.plan.execution_mode,
        &task.options().constraints,
        ctx.config.min_temperature,
    );
    // The request records the timeout that is enforced (the scale is 1 except on
    // the simulated demo's fast clock), to the millisecond so it reads back exactly.
    // A profile's own `timeout_s` replaces the plan's (a local model needs minutes).
    let base_timeout = match ctx.provider.call_times().timeout {
        Some(t) => t.as_secs_f64(),
        None => constraints.timeout_seconds,
    };
    constraints.timeout_seconds =
        (base_timeout * adjust.timeout_factor * ctx.config.timeout_scale * 1000.0).round() / 1000.0;
    constraints.max_tokens =
        (constraints.max_tokens as f64 * adjust.max_tokens_factor).round() as u32;
    constraints.temperature = (((constraints.temperature + adjust.temperature_delta)
        .max(ctx.config.min_temperature))
        * 100.0)
        .round()
        / 100.0;
    constraints
}

/// The request of one attempt.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_request(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
    agent_def: &crate::base::agents::AgentDef,
    inv_id: &str,
    user_prompt: crate::base::protocol::UserPrompt,
    constraints: crate::base::protocol::Constraints,
    context_report: &Option<serde_json::Value>,
    parts: &ContextParts,
) -> Arc<AgentRequest> {
    Arc::new(AgentRequest {
        invocation_id: inv_id.to_string(),
        agent: task.agent.to_string(),
        task_id: task.task_id.clone(),
        plan_id: ctx.plan.plan_id.clone(),
        system_prompt: agent_def.system_prompt.clone(),
        user_prompt,
        constraints,
        extra: match &context_report {
            Some(r) => [("context_management".to_string(), r.clone())]
                .into_iter()
                .collect(),
            None => Default::default(),
        },
        response_schema: answer_schema(ctx, task, agent_def, parts),
    })
}

/// The JSON Schema the server is asked to hold the task's answer to: none on the
/// simulated provider (it writes the protocol's shape by itself) and for a task whose
/// answer is plain text.
pub(super) fn answer_schema(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
    agent: &crate::base::agents::AgentDef,
    parts: &ContextParts,
) -> Option<Arc<serde_json::Value>> {
    if ctx.provider.is_simulated() || task.options().text_output {
        return None;
    }
    let known = parts.existing_assets.as_deref().unwrap_or_default();
    Some(Arc::new(super::answer_shape::schema(task, agent, known)))
}

/// The row of a call about to start: what it is sent, nothing of its end yet
/// (`cancelled` until it ends otherwise).
pub(super) fn new_record(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
    inv_id: &Arc<str>,
    attempt: u32,
    prompt_tokens: u64,
    request_json: String,
    prompt_hash: &str,
) -> InvocationRecord {
    InvocationRecord {
        invocation_id: inv_id.clone(),
        run_id: ctx.run_id.clone(),
        task_id: Arc::from(task.task_id.as_str()),
        agent: ctx.agent_arc(&task.agent),
        attempt,
        started_at: crate::base::clock::now_rfc3339(),
        prompt_tokens,
        request_json,
        system_prompt: (prompt_hash.to_string(), ctx.system_prompt_arc(&task.agent)),
        status: "cancelled",
        execution_time_ms: 0,
        output_tokens: 0,
        error_codes: String::new(),
        response_json: String::new(),
        provider_usage: None,
        cost_usd: None,
    }
}

/// Logs a call's start: for a paid call, committed before it is made (no call starts
/// unless its start is in the log; the simulated model costs nothing and waits for
/// nothing).
pub(super) async fn record_start(
    ctx: &RunCtx,
    scope: &Scope,
    started: InvocationStarted,
) -> Result<(), crate::data::store::StoreError> {
    ctx.emitter
        .emit(scope, EngineEvent::InvocationStarted(started))?;
    if ctx.provider.is_simulated() {
        Ok(())
    } else {
        ctx.emitter.writer().committed().await
    }
}
