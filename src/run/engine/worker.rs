//! One task's life: build the request, invoke, judge the attempt, retry by seed 001
//! §8.2, store the outcome, and report it to the coordinator.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;

use super::attempt::{evaluate, next_retry, Adjust};
use super::budget::over_input_limit;
use super::emit::Scope;
use super::inputs::gather_inputs;
use super::outcome::{aggregate_batches, stopped, StopSignal, TaskOutcome};
use super::react_loop::{run_loop, RecordedStep};
use super::request::{
    constraints_for, invocation_id, render_user_prompt, threshold_for, user_prompt_for,
    ContextParts, StoredRequest,
};
use super::response_json::{AtomJson, AtomsView, OutputView, ResponseView};
use super::run_ctx::RunCtx;
use super::sink::StreamSink;
use crate::base::protocol::{
    AgentRequest, ErrorCode, GradeCounts, InvocationStatus, ResponseOutput,
};
use crate::data::store::{InvocationRecord, WriteOp};
use crate::model::event::{
    AtomsGraded, EngineEvent, InvocationFinished, InvocationStarted, RetryScheduled, TaskStatus,
};

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
#[allow(clippy::too_many_arguments)]
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
        tracing::info!(
            "task {}: waiting {ms} ms still owed to a retry",
            task.task_id
        );
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
            s = stopped(&mut stop) => return TaskOutcome {
                invocation_id: None,
                ..TaskOutcome::stopped(s, first_attempt, None, Arc::from(""))
            },
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
    let (prompt_hash, system_tokens) = ctx.system_prompt_info(&task.agent);
    loop {
        // No new call once the run's money budget is spent: the task waits for a resume.
        if ctx.money.reached() {
            return TaskOutcome {
                invocation_id: None,
                ..TaskOutcome::stopped(StopSignal::Interrupt, attempt, None, Arc::from(""))
            };
        }
        attempt += 1;
        let seq = match ctx.next_invocation_seq(&agent_def.short_name).await {
            Ok(n) => n,
            Err(e) => {
                tracing::error!("task {}: no invocation id: {e}", task.task_id);
                return TaskOutcome::failed_before_call(attempt - 1, e.to_string());
            }
        };
        let inv_id: Arc<str> =
            Arc::from(invocation_id(chrono::Utc::now(), &agent_def.short_name, seq).as_str());
        let scope = Scope {
            task_id: Some(task_arc.clone()),
            invocation_id: Some(inv_id.clone()),
            agent: Some(agent.clone()),
        };
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
            (base_timeout * adjust.timeout_factor * ctx.config.timeout_scale * 1000.0).round()
                / 1000.0;
        constraints.max_tokens =
            (constraints.max_tokens as f64 * adjust.max_tokens_factor).round() as u32;
        constraints.temperature = (((constraints.temperature + adjust.temperature_delta)
            .max(ctx.config.min_temperature))
            * 100.0)
            .round()
            / 100.0;
        let user_prompt = user_prompt_for(
            task,
            agent_def,
            adjust.threshold,
            adjust.feedback.as_deref(),
            parts.clone(),
        );
        // Rendered once: counted here, stored as it is (no second parse to validate it).
        let raw_user = render_user_prompt(&user_prompt);
        let user_text = raw_user.as_deref().map(|r| r.get()).unwrap_or_default();
        // A tool-using task's prompt carries its tool schemas too.
        let react = ctx.plan.react_for(task);
        let toolbox = react
            .as_ref()
            .map(|setup| super::toolbox::for_task(&ctx, task, setup, attempt));
        let tools_tokens = toolbox.as_ref().map_or(0, |t| {
            ctx.config
                .tokens
                .count(&serde_json::to_string(&t.definitions()).unwrap_or_default())
        });
        let prompt_tokens = system_tokens + ctx.config.tokens.count(user_text) + tools_tokens;
        if let Some(why) =
            over_input_limit(task, agent_def, prompt_tokens, system_tokens, tools_tokens)
        {
            tracing::warn!("task {} failed before any call: {why}", task.task_id);
            return TaskOutcome::failed_before_call(attempt - 1, why);
        }
        let request = Arc::new(AgentRequest {
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
            response_schema: answer_schema(&ctx, task, agent_def, &parts),
        });
        let request_json = match &raw_user {
            Some(raw) => serde_json::to_string(&StoredRequest::new(&request, &prompt_hash, raw))
                .unwrap_or_default(),
            None => String::new(),
        };
        // The provider's own limits (a slot, a rate token) are waited for before the
        // invocation starts: a queued call is not running, and its timeout has not begun.
        let admission = tokio::select! {
            a = ctx.provider.admit() => a,
            s = stopped(&mut stop) => return TaskOutcome::stopped(s, attempt - 1, None, inv_id),
        };
        // The budget again, now that the call may start: a call that ended while this one
        // waited for its slot may have spent it.
        if ctx.money.reached() {
            return TaskOutcome {
                invocation_id: None,
                ..TaskOutcome::stopped(StopSignal::Interrupt, attempt - 1, None, inv_id)
            };
        }
        let mut record = InvocationRecord {
            invocation_id: inv_id.clone(),
            run_id: ctx.run_id.clone(),
            task_id: task_arc.clone(),
            agent: agent.clone(),
            attempt,
            started_at: crate::base::clock::now_rfc3339(),
            prompt_tokens,
            request_json,
            system_prompt: (prompt_hash.clone(), ctx.system_prompt_arc(&task.agent)),
            status: "cancelled",
            execution_time_ms: 0,
            output_tokens: 0,
            error_codes: String::new(),
            response_json: String::new(),
            provider_usage: None,
            cost_usd: None,
        };
        // No call starts unless its start is in the log: a paid one only once its start
        // is committed (the simulated model costs nothing and waits for nothing).
        let started = ctx.emitter.emit(
            &scope,
            EngineEvent::InvocationStarted(InvocationStarted {
                attempt,
                prompt_tokens,
                constraints,
                quality_threshold: adjust.threshold.as_str().to_string(),
            }),
        );
        let started = match started {
            Ok(()) if !ctx.provider.is_simulated() => ctx.emitter.writer().committed().await,
            other => other,
        };
        if let Err(e) = started {
            return TaskOutcome::not_recorded(attempt - 1, inv_id, &e);
        }
        let effective_timeout = constraints.timeout_seconds;
        let started = Instant::now();
        let mut sink = StreamSink::new(&ctx, &scope);
        let mut loop_steps: Option<Vec<RecordedStep>> = None;
        // A tool-using loop charges each step as it ends; `meter` keeps what they cost.
        let meter = crate::run::engine::react_loop::LoopMeter::default();
        let mut loop_usage: Option<crate::data::provider::Usage> = None;
        let mut budget_stop = false;
        let is_loop = react.is_some() && toolbox.is_some();
        let result = match (&react, &toolbox) {
            // A tool-using task: the loop, each step within the task's timeout.
            (Some(setup), Some(toolbox)) => {
                let run = run_loop(
                    &ctx,
                    &scope,
                    setup,
                    toolbox.as_ref(),
                    &request,
                    agent_def.max_input_tokens,
                    attempt,
                    &mut sink,
                    crate::base::ranges::duration_from_secs(effective_timeout.max(0.001)),
                    &meter,
                );
                tokio::select! {
                    r = run => {
                        loop_steps = Some(r.steps);
                        loop_usage = r.usage;
                        if r.budget_stopped {
                            budget_stop = true;
                            Err(StopSignal::Interrupt)
                        } else {
                            Ok(r.result)
                        }
                    }
                    s = stopped(&mut stop) => Err(s),
                }
            }
            _ => {
                let limits = crate::data::provider::call::Limits::for_call(
                    ctx.provider.as_ref(),
                    crate::base::ranges::duration_from_secs(effective_timeout.max(0.001)),
                    constraints.max_tokens,
                );
                let call = crate::data::provider::call::attempt(
                    ctx.provider.as_ref(),
                    request.clone(),
                    attempt,
                    &mut sink,
                    &limits,
                );
                tokio::select! {
                    r = call => Ok(r),
                    s = stopped(&mut stop) => Err(s),
                }
            }
        };
        drop(admission);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let (text, chunks) = sink.finish();
        let output_tokens = ctx.config.tokens.count(&text);
        record.execution_time_ms = elapsed_ms;
        record.output_tokens = output_tokens;
        let counted = crate::base::cost::CallTokens {
            input: prompt_tokens,
            cached_input: 0,
            output: output_tokens,
        };
        let result = match result {
            Ok(r) => r,
            Err(signal) => {
                // A call stopped halfway is billed for what it had streamed (a loop, for
                // the steps that ended).
                record.cost_usd = if is_loop {
                    meter.cost()
                } else {
                    ctx.money.charge(None, counted)
                };
                let why = if signal == StopSignal::Cancel {
                    "cancelled"
                } else if budget_stop {
                    "stopped: the run's money budget was reached"
                } else {
                    "interrupted"
                };
                super::stopped_call::record(&ctx, &scope, record, &text, chunks, why);
                return TaskOutcome::stopped(signal, attempt, None, inv_id);
            }
        };
        let provider_out = match &result {
            Ok(Ok(out)) if !ctx.provider.is_simulated() => Some(out.clone()),
            _ => None,
        };
        record.provider_usage = provider_out
            .as_ref()
            .and_then(|o| o.usage)
            .or(loop_usage.filter(|_| !ctx.provider.is_simulated()));
        record.cost_usd = if is_loop {
            meter.cost()
        } else {
            let answered = matches!(result, Ok(Ok(_))) || chunks > 0;
            ctx.money
                .charge_call(record.provider_usage, counted, answered)
        };
        let provider_error = match &result {
            Ok(Err(e)) => Some(crate::data::provider::StoredProviderError::from(e)),
            _ => None,
        };
        let verdict = evaluate(
            &ctx,
            task,
            adjust.threshold,
            result,
            &text,
            parts.existing_assets.as_deref().unwrap_or_default(),
            super::attempt::Took {
                elapsed_ms,
                timeout_s: effective_timeout,
            },
        );
        if !verdict.verdicts.is_empty() {
            let graded = ctx.emitter.emit(
                &scope,
                EngineEvent::AtomsGraded(AtomsGraded {
                    atoms: verdict.atom_grades(agent_def),
                }),
            );
            if let Err(e) = graded {
                return TaskOutcome::not_recorded(attempt, inv_id, &e);
            }
        }
        let codes: Vec<ErrorCode> = verdict.errors.iter().map(|e| e.error_code).collect();
        let atom_json = AtomJson::all(&verdict.atoms);
        let response = ResponseView {
            invocation_id: &inv_id,
            status: verdict.status,
            agent: &task.agent,
            task_id: &task.task_id,
            execution_time_ms: elapsed_ms,
            output: OutputView {
                atoms: AtomsView(&verdict.atoms, &atom_json),
                summary: &verdict.summary,
                text: plain_answer(task, &verdict.atoms),
            },
            quality_check: &verdict.quality_check,
            errors: &verdict.errors,
            provider: provider_out.as_ref(),
            provider_error: provider_error.as_ref(),
            raw_text: (verdict.atoms.is_empty() && !text.is_empty()).then_some(text.as_str()),
            batch,
            react_steps: loop_steps.as_deref(),
        };
        record.status = verdict.status.as_str();
        record.error_codes = codes
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(",");
        record.response_json = serde_json::to_string(&response).unwrap_or_default();
        let record_usage = record.provider_usage;
        let record_cost = record.cost_usd;
        let retry = if verdict.status == InvocationStatus::Success {
            None
        } else {
            next_retry(
                &ctx,
                &verdict.errors,
                verdict.transient_after,
                &mut retries,
                &task.task_id,
                attempt,
            )
        };
        // The call's row, the atoms a final answer is accepted with and the event that
        // ends the call commit together: a recorded success is whole, and a resume takes
        // it as it is instead of asking the model again (see `recorded_success`).
        let task_status = TaskStatus::from_invocation(verdict.status);
        let usable = retry.is_none() && task_status.satisfies_dependents();
        let mut rows = vec![WriteOp::Invocation(Box::new(record))];
        if usable {
            rows.push(WriteOp::Atoms {
                run_id: ctx.run_id.clone(),
                atoms: verdict.atom_rows(task, agent_def, &inv_id, atom_json),
            });
        }
        let ended = ctx.emitter.emit_with(
            &scope,
            EngineEvent::InvocationFinished(InvocationFinished {
                status: Some(verdict.status),
                execution_time_ms: elapsed_ms,
                output_tokens,
                chunks,
                atoms: verdict.quality_check.atoms_generated,
                avg_score: verdict.quality_check.avg_quality_score,
                grades: verdict.quality_check.grades,
                issues: verdict.quality_check.issues.len() as u32,
                errors: codes.clone(),
                error_message: verdict.errors.first().map(|e| e.message.clone()),
                provider_usage: record_usage,
                cost_usd: record_cost,
            }),
            |env| WriteOp::WithEvent(Box::new(WriteOp::Many(rows)), env),
        );
        if let Err(e) = ended {
            return TaskOutcome::not_recorded(attempt, inv_id, &e);
        }
        if cfg!(debug_assertions) {
            pause_after_call(&ctx, &task.task_id).await;
        }
        if verdict.status != InvocationStatus::Success {
            if let Some((code, delay, note)) = retry {
                adjust.for_retry(&ctx, code, &verdict.errors, verdict.provider_fault);
                let scheduled = ctx.emitter.emit(
                    &task_scope,
                    EngineEvent::RetryScheduled(RetryScheduled {
                        next_attempt: attempt + 1,
                        error_code: code,
                        delay_ms: delay,
                        adjustment: note,
                        transient: verdict.transient_after.is_some(),
                        feedback: adjust.feedback.clone(),
                        batch,
                    }),
                );
                if let Err(e) = scheduled {
                    return TaskOutcome::not_recorded(attempt, inv_id, &e);
                }
                if delay > 0 {
                    let _waiting = crate::data::provider::meter::CallMeter::global().wait(
                        format!("{} ({})", task.task_id, task.agent),
                        Duration::from_millis(delay),
                    );
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                        s = stopped(&mut stop) => return TaskOutcome::stopped(s, attempt, Some(code), inv_id),
                    }
                }
                continue;
            }
        }
        // Final.
        let mut grades = GradeCounts::default();
        let atoms = if usable {
            verdict.atoms.len() as u32
        } else {
            0
        };
        let output = if usable {
            for v in &verdict.verdicts {
                grades.add(v.grade);
            }
            if let Ok(mut k) = ctx.known_assets.write() {
                for a in &verdict.atoms {
                    k.insert(&a.asset_id);
                }
            }
            let extra = plain_answer(task, &verdict.atoms)
                .map(|t| {
                    [("text".to_string(), serde_json::Value::from(t))]
                        .into_iter()
                        .collect()
                })
                .unwrap_or_default();
            Some(Arc::new(ResponseOutput {
                atoms: verdict.atoms,
                summary: verdict.summary,
                extra,
            }))
        } else {
            None
        };
        return TaskOutcome {
            status: task_status,
            attempts: attempt,
            atoms,
            error_code: codes.first().copied(),
            output,
            grades,
            invocation_id: Some(inv_id),
            error_message: None,
        };
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

/// The JSON Schema the server is asked to hold the task's answer to: none on the
/// simulated provider (it writes the protocol's shape by itself) and for a task whose
/// answer is plain text.
fn answer_schema(
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

/// The plain answer of a task whose output is text: its one atom's text.
fn plain_answer<'a>(
    task: &crate::model::plan::Task,
    atoms: &'a [crate::base::protocol::Atom],
) -> Option<&'a str> {
    task.options()
        .text_output
        .then(|| atoms.first()?.content.get("text")?.as_str())
        .flatten()
}
