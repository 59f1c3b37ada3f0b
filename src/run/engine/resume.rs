//! Reopening a resumed run: the facts that open it again (a lease taken over, a crash
//! detected, `run_resumed`), the tasks' state as the run left it, the tasks a review
//! freed meanwhile, and the finished tasks applied to their dependents.

use std::sync::Arc;

use serde_json::json;

use super::emit::Scope;
use super::graph::{block, fallback_allows, resumed, Node};
use super::run_ctx::{write_run_status, RunCtx};
use super::run_spec::ResumeState;
use super::EngineError;
use crate::data::store::{InvocationRecord, WriteOp};
use crate::model::event::{CrashDetected, EngineEvent, InvocationLost, RunStatus};

/// Reopens the run `r` describes on the fresh graph `nodes`; `index` maps task ids to
/// plan indexes.
pub(super) fn restore(
    ctx: &RunCtx,
    nodes: &mut [Node],
    r: &ResumeState,
) -> Result<(), EngineError> {
    let run_scope = Scope::default();
    if let Some(t) = &r.taken_over {
        ctx.emitter
            .emit(&run_scope, EngineEvent::LeaseTakenOver(t.clone()))?;
    }
    if r.previous_status == Some(RunStatus::Running) || r.previous_status == Some(RunStatus::Paused)
    {
        ctx.emitter.emit(
            &run_scope,
            EngineEvent::CrashDetected(CrashDetected {
                last_seq: r.last_event.0,
                last_ts: r.last_event.1,
                interrupted_tasks: r.interrupted.clone(),
            }),
        )?;
    }
    for call in &r.lost {
        close_lost_call(ctx, call)?;
    }
    for (tid, (status, attempts, atoms)) in &r.finished {
        if let Some(i) = ctx.plan.task_index(tid) {
            nodes[i].status = *status;
            nodes[i].attempts = *attempts;
            nodes[i].atoms = *atoms;
            nodes[i].awaiting_review = *status == crate::model::event::TaskStatus::Failed
                && r.awaiting_review.contains(tid);
        }
    }
    for (tid, a) in &r.attempts {
        if let Some(i) = ctx.plan.task_index(tid) {
            nodes[i].attempts = *a;
        }
    }
    ctx.emitter.emit(
        &run_scope,
        resumed(nodes, r.previous_status.unwrap_or(RunStatus::Interrupted)),
    )?;
    write_run_status(ctx, RunStatus::Running)?;
    for i in r.unblocked.iter().filter_map(|t| ctx.plan.task_index(t)) {
        super::reopen::reset_task(ctx, nodes, i, "unblocked: a review upstream was accepted")?;
    }
    reapply_finished(ctx, nodes)
}

/// Closes a call that was in flight when its process died: an `invocation_lost` event
/// and its invocation row (status `lost`, with the tokens the log knows and the text that
/// reached it), so it is counted and shown like any ended call.
fn close_lost_call(ctx: &RunCtx, call: &crate::data::store::OpenCall) -> Result<(), EngineError> {
    let task = ctx
        .plan
        .task_index(&call.task_id)
        .map(|i| &ctx.plan.tasks[i]);
    let agent: Arc<str> = match (task, &call.agent) {
        (Some(t), _) => ctx.agent_arc(&t.agent),
        (None, Some(a)) => Arc::from(a.as_str()),
        (None, None) => Arc::from("?"),
    };
    let output_tokens = ctx.config.tokens.count(&call.text);
    let elapsed_ms = u64::try_from(call.last_ts.saturating_sub(call.started_ts)).unwrap_or(0);
    let reason = format!(
        "lost in a crash: the process running this call stopped before it ended; {} output token(s) reached the log",
        output_tokens
    );
    let invocation: Arc<str> = Arc::from(call.invocation_id.as_str());
    let scope = Scope {
        task_id: Some(Arc::from(call.task_id.as_str())),
        invocation_id: Some(invocation.clone()),
        agent: Some(agent.clone()),
    };
    // Billed as far as the log knows: its prompt and the text that reached the log.
    let cost_usd = ctx.money.charge(
        None,
        crate::base::cost::CallTokens {
            input: call.prompt_tokens,
            cached_input: 0,
            output: output_tokens,
        },
    );
    let lost = EngineEvent::InvocationLost(InvocationLost {
        attempt: call.attempt,
        prompt_tokens: call.prompt_tokens,
        output_tokens,
        chunks: call.chunks,
        started_ts: call.started_ts,
        last_ts: call.last_ts,
        reason: reason.clone(),
        cost_usd,
    });
    let agent_name: String = task.map_or_else(|| agent.to_string(), |t| t.agent.to_string());
    let (prompt_hash, _) = ctx.system_prompt_info(&agent_name);
    let started_at = crate::base::clock::rfc3339(
        chrono::DateTime::from_timestamp_millis(call.started_ts).unwrap_or_default(),
    );
    let record = InvocationRecord {
        invocation_id: invocation.clone(),
        run_id: ctx.run_id.clone(),
        task_id: Arc::from(call.task_id.as_str()),
        agent,
        attempt: call.attempt,
        started_at,
        prompt_tokens: call.prompt_tokens,
        request_json: json!({
            "invocation_id": &*invocation,
            "task_id": call.task_id,
            "lost_in_crash": true,
            "note": "the request of a call is stored when the call ends; this one was in flight when its process stopped",
        })
        .to_string(),
        system_prompt: (prompt_hash, ctx.system_prompt_arc(&agent_name)),
        status: "lost",
        execution_time_ms: elapsed_ms,
        output_tokens,
        error_codes: String::new(),
        response_json: json!({
            "invocation_id": &*invocation,
            "status": "lost",
            "errors": [{"message": reason}],
            "partial_text": call.text,
        })
        .to_string(),
        provider_usage: None,
        cost_usd,
    };
    // The row and its event commit together: a crash now leaves both or neither.
    ctx.emitter.emit_with(&scope, lost, |env| {
        WriteOp::WithEvent(Box::new(WriteOp::Invocation(Box::new(record))), env)
    })?;
    Ok(())
}

/// On resume: applies the tasks that had already finished to their dependents, in
/// dependency order — counting them as done, or blocking the dependents.
fn reapply_finished(ctx: &RunCtx, nodes: &mut [Node]) -> Result<(), EngineError> {
    let order: Vec<usize> = ctx.plan.layers().into_iter().flatten().collect();
    for &i in &order {
        let st = nodes[i].status;
        if st.is_final() {
            let deps = nodes[i].downstream();
            for d in deps {
                if nodes[d].status.is_final() {
                    continue;
                }
                if st.satisfies_dependents() || fallback_allows(&ctx.plan, d) {
                    nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
                } else {
                    block(ctx, nodes, d, i, None)?;
                }
            }
        }
    }
    Ok(())
}
