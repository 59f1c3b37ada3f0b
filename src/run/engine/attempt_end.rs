//! One attempt's call and its end: the call (or tool-using loop) itself, what it cost,
//! the row and response as stored, the grades, the end committed with the accepted
//! atoms, and then the retry or the task's outcome.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::attempt::Adjust;
use super::emit::Scope;
use super::outcome::{stopped, StopSignal, TaskOutcome};
use super::react_loop::{run_loop, RecordedStep};
use super::response_json::{AtomJson, AtomsView, OutputView, ResponseView};
use super::run_ctx::RunCtx;
use super::sink::StreamSink;
use crate::base::protocol::{AgentRequest, ErrorCode, GradeCounts, ResponseOutput};
use crate::data::store::{InvocationRecord, WriteOp};
use crate::model::event::{
    AtomsGraded, EngineEvent, InvocationFinished, RetryScheduled, TaskStatus,
};

/// What one call (or one tool-using loop) gave: its result or the signal that stopped
/// it, the text it streamed and how, its time, and a loop's steps and cost.
pub(super) struct Called {
    pub(super) result: Result<super::attempt::CallResult, StopSignal>,
    pub(super) trace: CallTrace,
}

/// How a call went, beside its result.
pub(super) struct CallTrace {
    pub(super) text: String,
    pub(super) chunks: u64,
    pub(super) elapsed_ms: u64,
    pub(super) loop_steps: Option<Vec<RecordedStep>>,
    pub(super) loop_usage: Option<crate::data::provider::Usage>,
    pub(super) budget_stop: bool,
    pub(super) meter: super::react_loop::LoopMeter,
}

/// Makes the attempt's call — the tool-using loop when the task has one, else one
/// call — within the request's timeout, until it ends or `stop` says so; the
/// provider's slot (`admission`) is given back as soon as it ends.
#[allow(clippy::too_many_arguments)]
pub(super) async fn call_model(
    ctx: &RunCtx,
    scope: &Scope,
    agent_def: &crate::base::agents::AgentDef,
    (react, toolbox): (
        &Option<crate::model::plan::react::ReactSetup>,
        &Option<Box<dyn super::react_loop::Toolbox>>,
    ),
    request: &Arc<AgentRequest>,
    attempt: u32,
    stop: &mut watch::Receiver<StopSignal>,
    admission: crate::data::provider::Admission,
) -> Called {
    let constraints = request.constraints;
    let effective_timeout = constraints.timeout_seconds;
    let started = Instant::now();
    let mut sink = StreamSink::new(ctx, scope);
    let mut loop_steps: Option<Vec<RecordedStep>> = None;
    // A tool-using loop charges each step as it ends; `meter` keeps what they cost.
    let meter = super::react_loop::LoopMeter::default();
    let mut loop_usage: Option<crate::data::provider::Usage> = None;
    let mut budget_stop = false;
    let timeout = crate::base::ranges::duration_from_secs(effective_timeout.max(0.001));
    let result = match (react, toolbox) {
        // A tool-using task: the loop, each step within the task's timeout.
        (Some(setup), Some(toolbox)) => {
            let run = run_loop(
                ctx,
                scope,
                setup,
                toolbox.as_ref(),
                request,
                agent_def.max_input_tokens,
                attempt,
                &mut sink,
                timeout,
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
                s = stopped(stop) => Err(s),
            }
        }
        _ => {
            let limits = crate::data::provider::call::Limits::for_call(
                ctx.provider.as_ref(),
                timeout,
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
                s = stopped(stop) => Err(s),
            }
        }
    };
    drop(admission);
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let (text, chunks) = sink.finish();
    Called {
        result,
        trace: CallTrace {
            text,
            chunks,
            elapsed_ms,
            loop_steps,
            loop_usage,
            budget_stop,
            meter,
        },
    }
}

/// Records a call stopped halfway — billed `cost`, for what it had streamed (a loop,
/// for the steps that ended) — and ends the attempt with the signal that stopped it.
#[allow(clippy::too_many_arguments)]
pub(super) fn record_stopped(
    ctx: &RunCtx,
    scope: &Scope,
    mut record: InvocationRecord,
    trace: &CallTrace,
    cost: Option<f64>,
    signal: StopSignal,
    attempt: u32,
    inv_id: Arc<str>,
) -> TaskOutcome {
    record.cost_usd = cost;
    let why = if signal == StopSignal::Cancel {
        "cancelled"
    } else if trace.budget_stop {
        "stopped: the run's money budget was reached"
    } else {
        "interrupted"
    };
    let loop_prompt = (trace.meter.tokens().0 > 0).then_some(record.prompt_tokens);
    super::stopped_call::record(
        ctx,
        scope,
        record,
        (&trace.text, trace.chunks),
        why,
        loop_prompt,
    );
    TaskOutcome::stopped(signal, attempt, None, inv_id)
}

/// What the call cost, by the provider's usage when it reported any (else by plexus's
/// own count, `counted`), written into its row; and the provider's answer and error
/// as the response stores them.
pub(super) fn settle(
    ctx: &RunCtx,
    record: &mut InvocationRecord,
    result: &super::attempt::CallResult,
    trace: &CallTrace,
    is_loop: bool,
    counted: crate::base::cost::CallTokens,
) -> (
    Option<crate::data::provider::ProviderOutput>,
    Option<crate::data::provider::StoredProviderError>,
) {
    let provider_out = match &result {
        Ok(Ok(out)) if !ctx.provider.is_simulated() => Some(out.clone()),
        _ => None,
    };
    record.provider_usage = provider_out
        .as_ref()
        .and_then(|o| o.usage)
        .or(trace.loop_usage.filter(|_| !ctx.provider.is_simulated()));
    record.cost_usd = if is_loop {
        trace.meter.cost()
    } else {
        let answered = matches!(result, Ok(Ok(_))) || trace.chunks > 0;
        ctx.money
            .charge_call(record.provider_usage, counted, answered)
    };
    let provider_error = match &result {
        Ok(Err(e)) => Some(crate::data::provider::StoredProviderError::from(e)),
        _ => None,
    };
    (provider_out, provider_error)
}

/// Fills the call's row with its outcome: status, error codes and the response as
/// stored. Returns the codes and the atoms' JSON (stored with a final answer).
pub(super) fn finish_record(
    record: &mut InvocationRecord,
    verdict: &super::attempt::Verdict,
    task: &crate::model::plan::Task,
    batch: Option<u32>,
    trace: &CallTrace,
    (provider_out, provider_error): (
        Option<&crate::data::provider::ProviderOutput>,
        Option<&crate::data::provider::StoredProviderError>,
    ),
) -> (Vec<ErrorCode>, Vec<AtomJson>) {
    let codes: Vec<ErrorCode> = verdict.errors.iter().map(|e| e.error_code).collect();
    let atom_json = AtomJson::all(&verdict.atoms);
    let response = ResponseView {
        invocation_id: &record.invocation_id,
        status: verdict.status,
        agent: &task.agent,
        task_id: &task.task_id,
        execution_time_ms: trace.elapsed_ms,
        output: OutputView {
            atoms: AtomsView(&verdict.atoms, &atom_json),
            summary: &verdict.summary,
            text: plain_answer(task, &verdict.atoms),
        },
        quality_check: &verdict.quality_check,
        errors: &verdict.errors,
        provider: provider_out,
        provider_error,
        raw_text: (verdict.atoms.is_empty() && !trace.text.is_empty())
            .then_some(trace.text.as_str()),
        batch,
        react_steps: trace.loop_steps.as_deref(),
    };
    record.status = verdict.status.as_str();
    record.error_codes = codes
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(",");
    record.response_json = serde_json::to_string(&response).unwrap_or_default();
    (codes, atom_json)
}

/// The plain answer of a task whose output is text: its one atom's text.
pub(super) fn plain_answer<'a>(
    task: &crate::model::plan::Task,
    atoms: &'a [crate::base::protocol::Atom],
) -> Option<&'a str> {
    task.options()
        .text_output
        .then(|| atoms.first()?.content.get("text")?.as_str())
        .flatten()
}

/// Logs the grades of the answer's atoms, when it has any.
pub(super) fn record_grades(
    ctx: &RunCtx,
    scope: &Scope,
    verdict: &super::attempt::Verdict,
    agent_def: &crate::base::agents::AgentDef,
) -> Result<(), crate::data::store::StoreError> {
    if verdict.verdicts.is_empty() {
        return Ok(());
    }
    ctx.emitter.emit(
        scope,
        EngineEvent::AtomsGraded(AtomsGraded {
            atoms: verdict.atom_grades(agent_def),
        }),
    )
}

/// Commits the end of a call: its row, the atoms a final answer is accepted with
/// (`accepted`) and the `invocation_finished` event, together — a recorded success is
/// whole, and a resume takes it as it is instead of asking the model again (see
/// `recorded_success`).
#[allow(clippy::too_many_arguments)]
pub(super) fn commit_end(
    ctx: &RunCtx,
    scope: &Scope,
    record: InvocationRecord,
    accepted: Option<Vec<crate::data::store::AtomRow>>,
    verdict: &super::attempt::Verdict,
    codes: &[ErrorCode],
    trace: &CallTrace,
    output_tokens: u64,
) -> Result<(), crate::data::store::StoreError> {
    let (provider_usage, cost_usd) = (record.provider_usage, record.cost_usd);
    let loop_prompt_tokens = (trace.meter.tokens().0 > 0).then_some(record.prompt_tokens);
    let mut rows = vec![WriteOp::Invocation(Box::new(record))];
    if let Some(atoms) = accepted {
        rows.push(WriteOp::Atoms {
            run_id: ctx.run_id.clone(),
            atoms,
        });
    }
    ctx.emitter
        .emit_with(
            scope,
            EngineEvent::InvocationFinished(InvocationFinished {
                status: Some(verdict.status),
                execution_time_ms: trace.elapsed_ms,
                output_tokens,
                chunks: trace.chunks,
                atoms: verdict.quality_check.atoms_generated,
                avg_score: verdict.quality_check.avg_quality_score,
                grades: verdict.quality_check.grades,
                issues: verdict.quality_check.issues.len() as u32,
                errors: codes.to_vec(),
                error_message: verdict.errors.first().map(|e| e.message.clone()),
                provider_usage,
                cost_usd,
                loop_prompt_tokens,
            }),
            |env| WriteOp::WithEvent(Box::new(WriteOp::Many(rows)), env),
        )
        .map(|_| ())
}

/// Where a retry comes from: the task (or batch), the attempt that failed and its call.
pub(super) struct NextTry<'a> {
    pub(super) task: &'a crate::model::plan::Task,
    pub(super) batch: Option<u32>,
    pub(super) attempt: u32,
    pub(super) inv_id: &'a Arc<str>,
    pub(super) scope: &'a Scope,
}

/// Schedules the next attempt after a failed one: the adjustments for its error, the
/// `retry_scheduled` event, and the wait (shown on the status line) unless `stop` ends
/// it first. `Err` is the outcome to end with instead.
pub(super) async fn schedule_retry(
    ctx: &RunCtx,
    next: NextTry<'_>,
    (code, delay, note): (ErrorCode, u64, String),
    verdict: &super::attempt::Verdict,
    adjust: &mut Adjust,
    stop: &mut watch::Receiver<StopSignal>,
) -> Result<(), TaskOutcome> {
    let NextTry {
        task,
        batch,
        attempt,
        inv_id,
        scope,
    } = next;
    let inv_id = inv_id.clone();
    adjust.for_retry(ctx, code, &verdict.errors, verdict.provider_fault);
    let scheduled = ctx.emitter.emit(
        scope,
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
        return Err(TaskOutcome::not_recorded(attempt, inv_id, &e));
    }
    if delay > 0 {
        let _waiting = crate::data::provider::meter::CallMeter::global().wait(
            format!("{} ({})", task.task_id, task.agent),
            Duration::from_millis(delay),
        );
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
            s = stopped(stop) => return Err(TaskOutcome::stopped(s, attempt, Some(code), inv_id)),
        }
    }
    Ok(())
}

/// The task's (or batch's) outcome after its last call: the answer passed on when it is
/// usable (its atoms known to the run from now on), nothing else.
#[allow(clippy::too_many_arguments)]
pub(super) fn final_outcome(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
    verdict: super::attempt::Verdict,
    usable: bool,
    task_status: TaskStatus,
    codes: &[ErrorCode],
    attempt: u32,
    inv_id: Arc<str>,
) -> TaskOutcome {
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
    TaskOutcome {
        status: task_status,
        attempts: attempt,
        atoms,
        error_code: codes.first().copied(),
        output,
        grades,
        invocation_id: Some(inv_id),
        error_message: None,
    }
}
