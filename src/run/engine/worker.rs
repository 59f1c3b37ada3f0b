//! One task's life: build the request, invoke, judge the attempt, retry by seed 001
//! §8.2, store the outcome, and report it to the coordinator.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;

use super::attempt::{evaluate, next_retry, Adjust};
use super::attempt_end::{
    call_model, commit_end, final_outcome, finish_record, record_grades, record_stopped,
    schedule_retry, settle, Called, NextTry,
};
use super::attempt_request::{new_record, prepare, record_start, Prepared};
use super::emit::Scope;
use super::inputs::gather_inputs;
use super::outcome::{aggregate_batches, stopped, StopSignal, TaskOutcome};
use super::request::{invocation_id, threshold_for, ContextParts};
use super::run_ctx::RunCtx;
use crate::base::protocol::{GradeCounts, InvocationStatus};
use crate::model::event::{InvocationStarted, TaskStatus};

/// Runs one task to its end (or until stopped).
pub async fn run_task(
    ctx: Arc<RunCtx>,
    idx: usize,
    first_attempt: u32,
    mut stop: watch::Receiver<StopSignal>,
) -> TaskOutcome {
    let task = &ctx.plan.tasks[idx];
    // Lets the tests see what a bug in a worker does to a run (debug builds only).
    #[cfg(debug_assertions)]
    if std::env::var("PLEXUS_CRASH_TEST_TASK").as_deref() == Ok(task.task_id.as_str()) {
        panic!(
            "crash requested by PLEXUS_CRASH_TEST_TASK in task {}",
            task.task_id
        );
    }
    let agent = ctx.agent_arc(&task.agent);
    let task_arc: Arc<str> = Arc::from(task.task_id.as_str());
    let task_scope = Scope {
        task_id: Some(task_arc.clone()),
        invocation_id: None,
        agent: Some(agent.clone()),
    };
    let gathered = tokio::select! {
        g = gather_inputs(&ctx, idx, &task_scope) => g,
        s = stopped(&mut stop) => return TaskOutcome {
            status: s.task_status(),
            attempts: first_attempt,
            atoms: 0,
            error_code: None,
            output: None,
            grades: GradeCounts::default(),
            invocation_id: None,
            error_message: None,
        },
    };
    if let Some(why) = gathered.abort {
        tracing::warn!("task {} failed before any call: {why}", task.task_id);
        return TaskOutcome::failed_before_call(first_attempt, why);
    }
    let Some(batched) = gathered.batched else {
        return run_attempts(
            &ctx,
            idx,
            None,
            first_attempt,
            stop,
            gathered.parts,
            gathered.report,
        )
        .await;
    };
    // Seed 000 §6.2: one invocation (with its own retries) per batch, then aggregation.
    let mut outcomes: Vec<TaskOutcome> = Vec::new();
    let mut attempts = first_attempt;
    let n = batched.batches.len();
    for (k, payload) in batched.batches.into_iter().enumerate() {
        let mut parts = gathered.parts.clone();
        let mut p = payload;
        p["batch"] = json!({"index": k + 1, "of": n, "aggregation": batched.aggregation});
        parts.inputs.push(p);
        let o = run_attempts(
            &ctx,
            idx,
            Some(k as u32 + 1),
            attempts,
            stop.clone(),
            parts,
            gathered.report.clone(),
        )
        .await;
        attempts = o.attempts;
        let stop_now = matches!(o.status, TaskStatus::Pending | TaskStatus::Cancelled);
        outcomes.push(o);
        if stop_now {
            break;
        }
    }
    aggregate_batches(&ctx, idx, outcomes, &batched.aggregation)
}

/// Invocations of one task (or one batch of it, 1-based) until success or the retries
/// run out.
async fn run_attempts(
    ctx: &Arc<RunCtx>,
    idx: usize,
    batch: Option<u32>,
    first_attempt: u32,
    mut stop: watch::Receiver<StopSignal>,
    parts: ContextParts,
    context_report: Option<serde_json::Value>,
) -> TaskOutcome {
    let ctx = ctx.clone();
    let task = &ctx.plan.tasks[idx];
    let agent_def = &ctx.plan.agents[&*task.agent];
    let agent = ctx.agent_arc(&task.agent);
    let task_arc: Arc<str> = Arc::from(task.task_id.as_str());
    let mut adjust = Adjust::new(threshold_for(task));
    let mut retries: rustc_hash::FxHashMap<&'static str, u32> = Default::default();
    let owed =
        super::carry_over::retries(&ctx, idx, batch, first_attempt, &mut adjust, &mut retries);
    if let Some(ms) = owed {
        if let Some(s) = wait_owed(task, ms, &mut stop).await {
            return TaskOutcome {
                invocation_id: None,
                ..TaskOutcome::stopped(s, first_attempt, None, Arc::from(""))
            };
        }
    }
    // A call whose success the log holds is never made again: a resumed task (or batch)
    // that was killed after it ends with it.
    if let Some(done) = ctx.take_recorded_success(idx, batch) {
        return recorded_outcome(&ctx, first_attempt, done);
    }
    let mut attempt = first_attempt;
    let task_scope = Scope {
        task_id: Some(task_arc.clone()),
        invocation_id: None,
        agent: Some(agent.clone()),
    };
    let call = TaskCall {
        ctx: &ctx,
        task,
        agent_def,
        batch,
        parts: &parts,
        context_report: &context_report,
        task_scope: &task_scope,
    };
    loop {
        // No new call once the run's money budget is spent: the task waits for a resume.
        if ctx.money.reached() {
            return budget_spent(attempt);
        }
        attempt += 1;
        match one_attempt(&call, attempt, &mut adjust, &mut retries, &mut stop).await {
            Next::Retry => continue,
            Next::Done(outcome) => return outcome,
        }
    }
}

/// The tests' pause between a call's end and its task's end (`after-call:TASK`, debug
/// builds only; see [`crate::base::pause_point`]): the call's end is committed first.
async fn pause_after_call(ctx: &RunCtx, task: &str) {
    let point = format!("after-call:{task}");
    if crate::base::pause_point::wanted(&point) {
        let _ = ctx.emitter.writer().committed().await;
        crate::base::pause_point::announce(&point);
        std::future::pending::<()>().await;
    }
}

/// The outcome of a task (or batch) whose successful call a resume found recorded, its
/// atoms already stored with it.
fn recorded_outcome(
    ctx: &RunCtx,
    first_attempt: u32,
    done: super::run_spec::RecordedSuccess,
) -> TaskOutcome {
    if let Ok(mut k) = ctx.known_assets.write() {
        for a in &done.output.atoms {
            k.insert(&a.asset_id);
        }
    }
    TaskOutcome {
        status: TaskStatus::Success,
        attempts: first_attempt.max(done.attempt),
        atoms: done.output.atoms.len() as u32,
        error_code: None,
        output: Some(Arc::new(done.output)),
        grades: done.grades,
        invocation_id: Some(Arc::from(done.invocation_id.as_str())),
        error_message: None,
    }
}

/// Waits the `ms` a resumed task still owes to a retry; the signal when `stop` ends the
/// wait first.
async fn wait_owed(
    task: &crate::model::plan::Task,
    ms: u64,
    stop: &mut watch::Receiver<StopSignal>,
) -> Option<StopSignal> {
    tracing::info!(
        "task {}: waiting {ms} ms still owed to a retry",
        task.task_id
    );
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => None,
        s = stopped(stop) => Some(s),
    }
}

/// The outcome of a task stopped because the run's money budget is spent after
/// `attempts` calls: it waits for a resume, with no call of its own in flight.
fn budget_spent(attempts: u32) -> TaskOutcome {
    TaskOutcome {
        invocation_id: None,
        ..TaskOutcome::stopped(StopSignal::Interrupt, attempts, None, Arc::from(""))
    }
}

/// The id of the task's next call, from the run's numbering of its agent's calls.
async fn new_invocation_id(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
) -> Result<Arc<str>, String> {
    let short = &ctx.plan.agents[&*task.agent].short_name;
    match ctx.next_invocation_seq(short).await {
        Ok(seq) => Ok(Arc::from(
            invocation_id(chrono::Utc::now(), short, seq).as_str(),
        )),
        Err(e) => {
            tracing::error!("task {}: no invocation id: {e}", task.task_id);
            Err(e.to_string())
        }
    }
}

/// What a task needs to make its calls, the same for every attempt.
struct TaskCall<'a> {
    ctx: &'a Arc<RunCtx>,
    task: &'a crate::model::plan::Task,
    agent_def: &'a crate::base::agents::AgentDef,
    batch: Option<u32>,
    parts: &'a ContextParts,
    context_report: &'a Option<serde_json::Value>,
    task_scope: &'a Scope,
}

/// After one attempt: another one, or the task's outcome.
enum Next {
    Retry,
    Done(TaskOutcome),
}

/// Attempt `attempt` of a task: prepare and send its request, judge the answer, commit
/// its end, and say whether a retry follows (after its wait) or how the task ends.
async fn one_attempt(
    call: &TaskCall<'_>,
    attempt: u32,
    adjust: &mut Adjust,
    retries: &mut rustc_hash::FxHashMap<&'static str, u32>,
    stop: &mut watch::Receiver<StopSignal>,
) -> Next {
    let started = match start_attempt(call, attempt, adjust, stop).await {
        Ok(s) => s,
        Err(outcome) => return Next::Done(outcome),
    };
    let judged = match call_and_judge(call, attempt, adjust, stop, started).await {
        Ok(j) => j,
        Err(outcome) => return Next::Done(outcome),
    };
    end_attempt(call, attempt, adjust, retries, stop, judged).await
}

/// An attempt whose start is committed: what its call needs.
struct Started {
    inv_id: Arc<str>,
    scope: Scope,
    request: Arc<crate::base::protocol::AgentRequest>,
    prompt_tokens: u64,
    react: Option<crate::model::plan::react::ReactSetup>,
    toolbox: Option<Box<dyn super::react_loop::Toolbox>>,
    admission: crate::data::provider::Admission,
    record: crate::data::store::InvocationRecord,
}

/// Starts attempt `attempt`: its invocation id and request, the provider's admission,
/// the budget checked again, and its start committed to the log before its call; `Err`
/// is how the task ends instead.
async fn start_attempt(
    call: &TaskCall<'_>,
    attempt: u32,
    adjust: &Adjust,
    stop: &mut watch::Receiver<StopSignal>,
) -> Result<Started, TaskOutcome> {
    let TaskCall {
        ctx,
        task,
        parts,
        context_report,
        task_scope,
        ..
    } = *call;
    let inv_id = new_invocation_id(ctx, task)
        .await
        .map_err(|why| TaskOutcome::failed_before_call(attempt - 1, why))?;
    let scope = Scope {
        invocation_id: Some(inv_id.clone()),
        ..task_scope.clone()
    };
    let Prepared {
        request,
        request_json,
        prompt_hash,
        prompt_tokens,
        react,
        toolbox,
    } = match prepare(ctx, task, adjust, parts, context_report, &inv_id, attempt) {
        Ok(p) => p,
        Err(why) => {
            tracing::warn!("task {} failed before any call: {why}", task.task_id);
            return Err(TaskOutcome::failed_before_call(attempt - 1, why));
        }
    };
    // The provider's own limits (a slot, a rate token) are waited for before the
    // invocation starts: a queued call is not running, and its timeout has not begun.
    let admission = tokio::select! {
        a = ctx.provider.admit() => a,
        s = stopped(stop) => return Err(TaskOutcome::stopped(s, attempt - 1, None, inv_id)),
    };
    // The budget again, now that the call may start: a call that ended while this one
    // waited for its slot may have spent it.
    if ctx.money.reached() {
        return Err(budget_spent(attempt - 1));
    }
    let record = new_record(
        ctx,
        task,
        &inv_id,
        attempt,
        prompt_tokens,
        request_json,
        &prompt_hash,
    );
    let started = record_start(
        ctx,
        &scope,
        InvocationStarted {
            attempt,
            prompt_tokens,
            constraints: request.constraints,
            quality_threshold: adjust.threshold.as_str().to_string(),
        },
    )
    .await;
    if let Err(e) = started {
        return Err(TaskOutcome::not_recorded(attempt - 1, inv_id, &e));
    }
    Ok(Started {
        inv_id,
        scope,
        request,
        prompt_tokens,
        react,
        toolbox,
        admission,
        record,
    })
}

/// An attempt whose answer is judged: what its end needs.
struct Judged {
    inv_id: Arc<str>,
    scope: Scope,
    record: crate::data::store::InvocationRecord,
    trace: super::attempt_end::CallTrace,
    verdict: super::attempt::Verdict,
    provider_out: Option<crate::data::provider::ProviderOutput>,
    provider_error: Option<crate::data::provider::StoredProviderError>,
    output_tokens: u64,
}

/// Makes the started attempt's call (or loop), settles what it cost and judges its
/// answer; `Err` is the outcome of a call that was stopped.
async fn call_and_judge(
    call: &TaskCall<'_>,
    attempt: u32,
    adjust: &Adjust,
    stop: &mut watch::Receiver<StopSignal>,
    started: Started,
) -> Result<Judged, TaskOutcome> {
    let TaskCall {
        ctx,
        task,
        agent_def,
        parts,
        ..
    } = *call;
    let Started {
        inv_id,
        scope,
        request,
        prompt_tokens,
        react,
        toolbox,
        admission,
        mut record,
    } = started;
    let effective_timeout = request.constraints.timeout_seconds;
    let Called { result, trace } = call_model(
        ctx,
        &scope,
        agent_def,
        (&react, &toolbox),
        &request,
        attempt,
        stop,
        admission,
    )
    .await;
    let is_loop = react.is_some() && toolbox.is_some();
    // A loop's row counts every step it sent and every step's text, not its first
    // prompt and its final answer.
    let (prompt_tokens, output_tokens) = match trace.meter.tokens() {
        (sent, text) if is_loop && sent > 0 => (sent, text),
        _ => (prompt_tokens, ctx.config.tokens.count(&trace.text)),
    };
    record.execution_time_ms = trace.elapsed_ms;
    record.prompt_tokens = prompt_tokens;
    record.output_tokens = output_tokens;
    let counted = crate::base::cost::CallTokens {
        input: prompt_tokens,
        cached_input: 0,
        output: output_tokens,
    };
    let result = match result {
        Ok(r) => r,
        Err(signal) => {
            let cost = if is_loop {
                trace.meter.cost()
            } else {
                ctx.money.charge(None, counted)
            };
            return Err(record_stopped(
                ctx, &scope, record, &trace, cost, signal, attempt, inv_id,
            ));
        }
    };
    let (provider_out, provider_error) =
        settle(ctx, &mut record, &result, &trace, is_loop, counted);
    let verdict = evaluate(
        ctx,
        task,
        adjust.threshold,
        result,
        &trace.text,
        parts.existing_assets.as_deref().unwrap_or_default(),
        super::attempt::Took {
            elapsed_ms: trace.elapsed_ms,
            timeout_s: effective_timeout,
        },
    );
    Ok(Judged {
        inv_id,
        scope,
        record,
        trace,
        verdict,
        provider_out,
        provider_error,
        output_tokens,
    })
}

/// Ends a judged attempt: its grades logged, its end committed with the accepted atoms,
/// then the retry (after its wait) or the task's outcome.
async fn end_attempt(
    call: &TaskCall<'_>,
    attempt: u32,
    adjust: &mut Adjust,
    retries: &mut rustc_hash::FxHashMap<&'static str, u32>,
    stop: &mut watch::Receiver<StopSignal>,
    judged: Judged,
) -> Next {
    let TaskCall {
        ctx,
        task,
        agent_def,
        batch,
        task_scope,
        ..
    } = *call;
    let Judged {
        inv_id,
        scope,
        mut record,
        trace,
        verdict,
        provider_out,
        provider_error,
        output_tokens,
    } = judged;
    if let Err(e) = record_grades(ctx, &scope, &verdict, agent_def) {
        return Next::Done(TaskOutcome::not_recorded(attempt, inv_id, &e));
    }
    let (codes, atom_json) = finish_record(
        &mut record,
        &verdict,
        task,
        batch,
        &trace,
        (provider_out.as_ref(), provider_error.as_ref()),
    );
    let retry = retry_for(ctx, &verdict, retries, task, attempt);
    let task_status = TaskStatus::from_invocation(verdict.status);
    let usable = retry.is_none() && task_status.satisfies_dependents();
    let accepted = usable.then(|| verdict.atom_rows(task, agent_def, &inv_id, atom_json));
    let ended = commit_end(
        ctx,
        &scope,
        record,
        accepted,
        &verdict,
        &codes,
        &trace,
        output_tokens,
    );
    if let Err(e) = ended {
        return Next::Done(TaskOutcome::not_recorded(attempt, inv_id, &e));
    }
    if cfg!(debug_assertions) {
        pause_after_call(ctx, &task.task_id).await;
    }
    if verdict.status != InvocationStatus::Success {
        if let Some(retry) = retry {
            let next = NextTry {
                task,
                batch,
                attempt,
                inv_id: &inv_id,
                scope: task_scope,
            };
            if let Err(o) = schedule_retry(ctx, next, retry, &verdict, adjust, stop).await {
                return Next::Done(o);
            }
            return Next::Retry;
        }
    }
    Next::Done(final_outcome(
        ctx,
        task,
        verdict,
        usable,
        task_status,
        &codes,
        attempt,
        inv_id,
    ))
}

/// The retry an attempt's verdict earns (none for a success).
fn retry_for(
    ctx: &RunCtx,
    verdict: &super::attempt::Verdict,
    retries: &mut rustc_hash::FxHashMap<&'static str, u32>,
    task: &crate::model::plan::Task,
    attempt: u32,
) -> Option<(crate::base::protocol::ErrorCode, u64, String)> {
    if verdict.status == InvocationStatus::Success {
        return None;
    }
    next_retry(
        ctx,
        &verdict.errors,
        verdict.transient_after,
        retries,
        &task.task_id,
        attempt,
    )
}
