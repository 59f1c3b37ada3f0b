//! One task's life: build the request, invoke, parse, grade, decide status, retry by
//! seed 001 §8.2, and report the outcome to the coordinator.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::watch;

use super::emit::Scope;
use super::parse::parse_response;
use super::quality::run_gate;
use super::refs::resolve_task_output;
use super::request::{invocation_id, render_user_prompt, user_prompt_for, StoredRequest};
use super::run::RunCtx;
use super::status::decide_status;
use crate::event::{
    AtomGrade, AtomsGraded, Chunk, EngineEvent, InvocationFinished, InvocationStarted,
    ReferenceFailed, RetryScheduled, TaskStatus,
};
use crate::protocol::refs::{RefErrorCode, ResolutionFailure};
use crate::protocol::{
    AgentRequest, AgentResponse, DataReference, ErrorCode, ErrorInfo, FallbackStrategy, Grade,
    InvocationStatus, ResponseOutput,
};
use crate::provider::{ChunkSink, ProviderError};
use crate::store::{AtomRow, WriteOp};

/// Why a worker stops before its task finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// Keep going.
    None,
    /// Cancel: the task ends `cancelled`.
    Cancel,
    /// Interrupt: the task goes back to pending, to run again on resume.
    Interrupt,
}

/// What a worker reports back.
#[derive(Debug, Clone)]
pub struct TaskOutcome {
    /// Final status (`Cancelled` for cancel, `Pending` for interrupt).
    pub status: TaskStatus,
    /// Invocations made.
    pub attempts: u32,
    /// Atoms accepted.
    pub atoms: u32,
    /// Deciding error.
    pub error_code: Option<ErrorCode>,
    /// `{atoms, summary}` when the task produced usable output.
    pub output: Option<Arc<Value>>,
    /// Grades of accepted atoms.
    pub grades: crate::protocol::GradeCounts,
    /// The task's last invocation.
    pub invocation_id: Option<Arc<str>>,
}

struct StreamSink<'a> {
    ctx: &'a RunCtx,
    scope: &'a Scope,
    text: String,
}

impl ChunkSink for StreamSink<'_> {
    fn chunk(&mut self, text: &str) {
        self.text.push_str(text);
        if let Err(e) = self.ctx.emitter.emit(
            self.scope,
            EngineEvent::Chunk(Chunk {
                text: text.to_string(),
            }),
        ) {
            tracing::error!("cannot log a chunk: {e}");
        }
    }
}

async fn stopped(rx: &mut watch::Receiver<StopSignal>) -> StopSignal {
    loop {
        let v = *rx.borrow_and_update();
        if v != StopSignal::None {
            return v;
        }
        if rx.changed().await.is_err() {
            // the coordinator is gone: never resolve
            std::future::pending::<()>().await;
        }
    }
}

/// Per-attempt changes made by retries.
struct Adjust {
    threshold: Grade,
    timeout_factor: f64,
    max_tokens_factor: f64,
    temperature_delta: f64,
    feedback: Option<String>,
}

/// Resolves the task's references and the upstream asset ids.
fn gather_inputs(ctx: &RunCtx, idx: usize, scope: &Scope) -> (Vec<String>, Vec<Value>) {
    let task = &ctx.plan.tasks[idx];
    let mut assets: Vec<String> = task.context.existing_assets.clone().unwrap_or_default();
    let needed: Vec<usize> = task
        .depends_on
        .iter()
        .chain(task.data_references.iter().filter_map(|r| match r {
            DataReference::TaskOutput(t) => Some(&t.task_id),
            _ => None,
        }))
        .filter_map(|d| ctx.plan.task_index(d))
        .collect();
    let outputs: HashMap<usize, Arc<Value>> = match ctx.outputs.read() {
        Ok(o) => needed
            .iter()
            .filter_map(|j| o.get(j).map(|v| (*j, v.clone())))
            .collect(),
        Err(_) => HashMap::new(),
    };
    for d in &task.depends_on {
        if let Some(out) = ctx.plan.task_index(d).and_then(|j| outputs.get(&j)) {
            for a in out
                .get("atoms")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(id) = a.get("asset_id").and_then(Value::as_str) {
                    if !assets.iter().any(|x| x == id) {
                        assets.push(id.to_string());
                    }
                }
            }
        }
    }
    let mut inputs = Vec::new();
    for (i, r) in task.data_references.iter().enumerate() {
        match r {
            DataReference::TaskOutput(t) => {
                let out = ctx.plan.task_index(&t.task_id).and_then(|j| outputs.get(&j).cloned());
                let res = match out {
                    Some(o) => resolve_task_output(&o, t),
                    None => Err(super::refs::RefFailure {
                        code: RefErrorCode::RefNotFound,
                        message: format!("task `{}` produced no output", t.task_id),
                    }),
                };
                match res {
                    Ok(data) => inputs.push(json!({
                        "source": format!("task_output:{}{}", t.task_id, t.path.as_deref().map(|p| format!(" {p}")).unwrap_or_default()),
                        "transfer_mode": "full",
                        "data": data
                    })),
                    Err(f) => {
                        let (strategy, value) = match &task.fallback_config {
                            Some(fc) if fc.strategy == FallbackStrategy::UseDefault => ("use_default", fc.default_value.clone()),
                            _ => match f.code {
                                RefErrorCode::RefPathInvalid => ("return_full", Value::Null),
                                RefErrorCode::RefFilterError => ("ignore_filter", Value::Null),
                                _ => ("skip", Value::Null),
                            },
                        };
                        let failure = ResolutionFailure {
                            ref_type: "task_output".into(),
                            task_id: Some(t.task_id.clone()),
                            error_code: f.code,
                            error_message: f.message,
                            fallback_strategy: strategy.into(),
                            fallback_value: value.clone(),
                            timestamp: crate::store::writer::now_rfc3339(),
                            extra: Default::default(),
                        };
                        let _ = ctx.emitter.emit(scope, EngineEvent::ReferenceFailed(ReferenceFailed { index: i, failure }));
                        if !value.is_null() {
                            inputs.push(json!({"source": format!("task_output:{}", t.task_id), "transfer_mode": "full", "data": value}));
                        }
                    }
                }
            }
            other => inputs.push(json!({"source": other.ref_type(), "transfer_mode": "reference", "reference": other})),
        }
    }
    (assets, inputs)
}

/// Runs one task to its end (or until stopped).
pub async fn run_task(
    ctx: Arc<RunCtx>,
    idx: usize,
    first_attempt: u32,
    mut stop: watch::Receiver<StopSignal>,
) -> TaskOutcome {
    let task = &ctx.plan.tasks[idx];
    let agent_def = &ctx.plan.agents[&task.agent];
    let agent = ctx.agent_arc(&task.agent);
    let task_arc: Arc<str> = Arc::from(task.task_id.as_str());
    let base_threshold = task
        .output_requirements
        .quality_threshold
        .as_deref()
        .and_then(Grade::parse)
        .unwrap_or(Grade::B);
    let mut adjust = Adjust {
        threshold: base_threshold,
        timeout_factor: 1.0,
        max_tokens_factor: 1.0,
        temperature_delta: 0.0,
        feedback: None,
    };
    let mut retries: HashMap<&'static str, u32> = HashMap::new();
    let mut attempt = first_attempt;
    let task_scope = Scope {
        task_id: Some(task_arc.clone()),
        invocation_id: None,
        agent: Some(agent.clone()),
    };
    let (assets, inputs) = gather_inputs(&ctx, idx, &task_scope);
    let (prompt_hash, system_tokens) = ctx.system_prompt_info(&task.agent);
    loop {
        attempt += 1;
        let seq = ctx.next_invocation_seq(&task.agent);
        let inv_id: Arc<str> =
            Arc::from(invocation_id(chrono::Utc::now(), &agent_def.short_name, seq).as_str());
        let scope = Scope {
            task_id: Some(task_arc.clone()),
            invocation_id: Some(inv_id.clone()),
            agent: Some(agent.clone()),
        };
        let mut constraints = ctx.base_constraints[idx];
        constraints.timeout_seconds *= adjust.timeout_factor;
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
            assets.clone(),
            inputs.clone(),
        );
        let user_text = render_user_prompt(&user_prompt);
        let prompt_tokens = system_tokens + ctx.config.tokens.count(&user_text);
        let request = Arc::new(AgentRequest {
            invocation_id: inv_id.to_string(),
            agent: task.agent.clone(),
            task_id: task.task_id.clone(),
            plan_id: ctx.plan.plan_id.clone(),
            system_prompt: agent_def.system_prompt.clone(),
            user_prompt,
            constraints,
            extra: Default::default(),
        });
        let request_json =
            serde_json::to_string(&StoredRequest::new(&request, &prompt_hash)).unwrap_or_default();
        let _ = ctx.emitter.write(WriteOp::InvocationStart {
            invocation_id: inv_id.clone(),
            run_id: ctx.run_id.clone(),
            task_id: task_arc.clone(),
            agent: agent.clone(),
            attempt,
            started_at: crate::store::writer::now_rfc3339(),
            prompt_tokens,
            request_json,
            system_prompt: (prompt_hash.clone(), ctx.system_prompt_arc(&task.agent)),
        });
        let _ = ctx.emitter.write(WriteOp::TaskState {
            run_id: ctx.run_id.clone(),
            task_id: task_arc.clone(),
            status: TaskStatus::Running.as_str(),
            attempts: attempt,
            atoms: 0,
            error_code: None,
            final_invocation_id: None,
            output_json: None,
        });
        let _ = ctx.emitter.emit(
            &scope,
            EngineEvent::InvocationStarted(InvocationStarted {
                attempt,
                prompt_tokens,
                constraints,
                quality_threshold: adjust.threshold.as_str().to_string(),
            }),
        );
        let effective_timeout = constraints.timeout_seconds * ctx.config.timeout_scale;
        let started = Instant::now();
        let mut sink = StreamSink {
            ctx: &ctx,
            scope: &scope,
            text: String::new(),
        };
        let result = {
            let call = ctx.provider.invoke(request.clone(), attempt, &mut sink);
            let timed =
                tokio::time::timeout(Duration::from_secs_f64(effective_timeout.max(0.001)), call);
            tokio::select! {
                r = timed => Ok(r),
                s = stopped(&mut stop) => Err(s),
            }
        };
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let text = std::mem::take(&mut sink.text);
        let output_tokens = ctx.config.tokens.count(&text);
        let provider_result = match result {
            Err(signal) => {
                let _ = ctx.emitter.emit(
                    &scope,
                    EngineEvent::InvocationFinished(InvocationFinished {
                        status: None,
                        execution_time_ms: elapsed_ms,
                        output_tokens,
                        atoms: 0,
                        avg_score: 0.0,
                        grades: Default::default(),
                        issues: 0,
                        errors: vec![],
                        error_message: Some(if signal == StopSignal::Cancel {
                            "cancelled".into()
                        } else {
                            "interrupted".into()
                        }),
                    }),
                );
                let _ = ctx.emitter.write(WriteOp::InvocationEnd {
                    run_id: ctx.run_id.clone(),
                    invocation_id: inv_id.clone(),
                    status: "cancelled",
                    execution_time_ms: elapsed_ms,
                    output_tokens,
                    error_codes: String::new(),
                    response_json: json!({"cancelled": true, "partial_text": text}).to_string(),
                });
                let status = if signal == StopSignal::Cancel {
                    TaskStatus::Cancelled
                } else {
                    TaskStatus::Pending
                };
                return TaskOutcome {
                    status,
                    attempts: attempt,
                    atoms: 0,
                    error_code: None,
                    output: None,
                    grades: Default::default(),
                    invocation_id: Some(inv_id.clone()),
                };
            }
            Ok(r) => r,
        };
        // Errors, atoms and grades of this attempt.
        let mut errors: Vec<ErrorInfo> = Vec::new();
        let mut transient_after: Option<Option<u64>> = None;
        let mut atoms = Vec::new();
        let mut summary = String::new();
        let mut gate = None;
        match provider_result {
            Err(_elapsed) => errors.push(ErrorInfo::new(
                ErrorCode::E004,
                format!(
                    "no complete answer within {:.1}s; {} bytes had streamed",
                    effective_timeout,
                    text.len()
                ),
            )),
            Ok(Err(ProviderError::Transient {
                message,
                retry_after_ms,
            })) => {
                transient_after = Some(retry_after_ms);
                errors.push(ErrorInfo::new(ErrorCode::E001, message));
            }
            Ok(Err(ProviderError::SourceNotFound(m))) => {
                errors.push(ErrorInfo::new(ErrorCode::E001, m))
            }
            Ok(Err(ProviderError::Permanent(m))) => errors.push(ErrorInfo::new(ErrorCode::E008, m)),
            Ok(Ok(_out)) => match parse_response(&text, task.output_requirements.max_atoms) {
                Err(e) => errors.push(e),
                Ok(parsed) => {
                    let known = ctx
                        .known_assets
                        .read()
                        .map(|k| k.clone())
                        .unwrap_or_default();
                    let g = run_gate(
                        &parsed.atoms,
                        &task.output_requirements.required_fields,
                        &known,
                        &ctx.config.quality,
                    );
                    if g.fabricated_refs >= ctx.config.quality.hallucination_refs
                        && g.fabricated_refs > 0
                    {
                        errors.push(ErrorInfo::new(
                            ErrorCode::E007,
                            format!("{} reference(s) to assets that do not exist; flagged for human review", g.fabricated_refs),
                        ));
                    }
                    if !parsed.atoms.is_empty() {
                        let avg_grade = ctx.config.quality.grade(g.quality_check.avg_quality_score);
                        if !avg_grade.meets(adjust.threshold) {
                            errors.push(ErrorInfo::new(
                                ErrorCode::E005,
                                format!(
                                    "average score {:.2} is grade {avg_grade}, below the threshold {}",
                                    g.quality_check.avg_quality_score, adjust.threshold
                                ),
                            ));
                        }
                    }
                    atoms = parsed.atoms;
                    summary = parsed.summary;
                    gate = Some(g);
                }
            },
        }
        let (quality_check, verdicts) = match gate {
            Some(g) => (g.quality_check, g.verdicts),
            None => (Default::default(), Vec::new()),
        };
        let status = decide_status(
            quality_check.atoms_generated,
            quality_check.avg_quality_score,
            &errors,
            elapsed_ms,
            effective_timeout,
        );
        let status = if errors.iter().any(|e| e.error_code == ErrorCode::E004) {
            InvocationStatus::Timeout
        } else {
            status
        };
        if !verdicts.is_empty() {
            let graded = atoms
                .iter()
                .zip(&verdicts)
                .map(|(a, v)| AtomGrade {
                    asset_id: a.asset_id.clone(),
                    atom_type: a
                        .atom_type()
                        .map(str::to_string)
                        .unwrap_or_else(|| agent_def.atom_type.clone()),
                    grade: v.grade,
                    score: v.score,
                    confidence: a.confidence(),
                    issues: v.issues.len() as u32,
                })
                .collect();
            let _ = ctx.emitter.emit(
                &scope,
                EngineEvent::AtomsGraded(AtomsGraded { atoms: graded }),
            );
        }
        let response = AgentResponse {
            invocation_id: inv_id.to_string(),
            status,
            agent: task.agent.clone(),
            task_id: task.task_id.clone(),
            execution_time_ms: elapsed_ms,
            output: ResponseOutput {
                atoms: atoms.clone(),
                summary: summary.clone(),
                extra: Default::default(),
            },
            quality_check: quality_check.clone(),
            errors: errors.clone(),
            extra: Default::default(),
        };
        let codes: Vec<ErrorCode> = errors.iter().map(|e| e.error_code).collect();
        let _ = ctx.emitter.write(WriteOp::InvocationEnd {
            run_id: ctx.run_id.clone(),
            invocation_id: inv_id.clone(),
            status: status.as_str(),
            execution_time_ms: elapsed_ms,
            output_tokens,
            error_codes: codes
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(","),
            response_json: serde_json::to_string(&response).unwrap_or_default(),
        });
        let _ = ctx.emitter.emit(
            &scope,
            EngineEvent::InvocationFinished(InvocationFinished {
                status: Some(status),
                execution_time_ms: elapsed_ms,
                output_tokens,
                atoms: quality_check.atoms_generated,
                avg_score: quality_check.avg_quality_score,
                grades: quality_check.grades,
                issues: quality_check.issues.len() as u32,
                errors: codes.clone(),
                error_message: errors.first().map(|e| e.message.clone()),
            }),
        );
        // Retry?
        if status != InvocationStatus::Success {
            if let Some((code, delay, note)) = next_retry(
                &ctx,
                &errors,
                transient_after,
                &mut retries,
                &task.task_id,
                attempt,
            ) {
                let _ = ctx.emitter.emit(
                    &task_scope,
                    EngineEvent::RetryScheduled(RetryScheduled {
                        next_attempt: attempt + 1,
                        error_code: code,
                        delay_ms: delay,
                        adjustment: note.clone(),
                    }),
                );
                match code {
                    ErrorCode::E002 => adjust.feedback = errors.first().map(|e| e.message.clone()),
                    ErrorCode::E003 => {
                        adjust.threshold = adjust.threshold.lower();
                        adjust.feedback = errors.first().map(|e| e.message.clone());
                    }
                    ErrorCode::E004 => adjust.timeout_factor *= ctx.config.retry.timeout_growth,
                    ErrorCode::E005 => {
                        adjust.max_tokens_factor *= ctx.config.retry.max_tokens_growth;
                        adjust.temperature_delta += ctx.config.retry.temperature_step;
                    }
                    _ => {}
                }
                if delay > 0 {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                        s = stopped(&mut stop) => {
                            let status = if s == StopSignal::Cancel { TaskStatus::Cancelled } else { TaskStatus::Pending };
                            return TaskOutcome { status, attempts: attempt, atoms: 0, error_code: Some(code), output: None, grades: Default::default(), invocation_id: Some(inv_id.clone()) };
                        }
                    }
                }
                continue;
            }
        }
        // Final.
        let task_status = TaskStatus::from_invocation(status);
        let usable = task_status.satisfies_dependents();
        let mut grades = crate::protocol::GradeCounts::default();
        let output = if usable {
            let rows: Vec<AtomRow> = atoms
                .iter()
                .zip(&verdicts)
                .map(|(a, v)| {
                    grades.add(v.grade);
                    AtomRow {
                        atom_id: a.asset_id.clone(),
                        task_id: task.task_id.clone(),
                        invocation_id: inv_id.to_string(),
                        agent: task.agent.clone(),
                        atom_type: a
                            .atom_type()
                            .map(str::to_string)
                            .unwrap_or_else(|| agent_def.atom_type.clone()),
                        category: a.category.clone(),
                        data_status: a.data_status.clone(),
                        paper_id: a.provenance.paper_id.clone(),
                        content: a.content.to_string(),
                        confidence: a.confidence(),
                        grade: v.grade.as_str().to_string(),
                        score: v.score,
                        provenance: serde_json::to_string(&a.provenance).unwrap_or_default(),
                        delta_audit: serde_json::to_string(&a.delta_audit).unwrap_or_default(),
                        metadata: serde_json::to_string(&a.metadata).unwrap_or_default(),
                        issues: serde_json::to_string(&v.issues).unwrap_or_default(),
                        relations: a
                            .delta_audit
                            .existing_assets
                            .clone()
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|r| !v.fabricated_refs.contains(r))
                            .collect(),
                        contradiction: a.delta_audit.contradiction_marked.unwrap_or(false),
                    }
                })
                .collect();
            if let Ok(mut k) = ctx.known_assets.write() {
                for a in &atoms {
                    k.insert(a.asset_id.clone());
                }
            }
            let _ = ctx.emitter.write(WriteOp::Atoms {
                run_id: ctx.run_id.clone(),
                atoms: rows,
            });
            Some(Arc::new(json!({"atoms": atoms, "summary": summary})))
        } else {
            None
        };
        return TaskOutcome {
            status: task_status,
            attempts: attempt,
            atoms: if usable { atoms.len() as u32 } else { 0 },
            error_code: codes.first().copied(),
            output,
            grades,
            invocation_id: Some(inv_id),
        };
    }
}

/// Picks the retry for this attempt's errors: `(code, delay_ms, adjustment)`.
fn next_retry(
    ctx: &RunCtx,
    errors: &[ErrorInfo],
    transient_after: Option<Option<u64>>,
    retries: &mut HashMap<&'static str, u32>,
    task_id: &str,
    attempt: u32,
) -> Option<(ErrorCode, u64, String)> {
    let policy = &ctx.config.retry;
    if errors.iter().any(|e| !e.recoverable) {
        return None;
    }
    let first = errors.first()?;
    let code = first.error_code;
    if let Some(retry_after) = transient_after {
        let n = retries.entry("transient").or_insert(0);
        *n += 1;
        let mut rng =
            fastrand::Rng::with_seed(ctx.config.seed ^ (attempt as u64) ^ fxhash(task_id));
        let d = policy.transient_delay(*n, retry_after, rng.f64())?;
        return Some((
            code,
            d,
            format!(
                "transient error: backoff retry {n} of {}",
                policy.transient.max_retries
            ),
        ));
    }
    let key = code.as_str();
    let n = retries.entry(key).or_insert(0);
    *n += 1;
    let delay = policy.delay_for(code, *n)?;
    let max = policy.rule(code).map(|r| r.max_retries).unwrap_or(0);
    let note = match code {
        ErrorCode::E001 => format!("source unreachable: retry {n} of {max}"),
        ErrorCode::E002 => format!("parse error added to the prompt: retry {n} of {max}"),
        ErrorCode::E003 => format!("quality threshold lowered one grade: retry {n} of {max}"),
        ErrorCode::E004 => format!("timeout ×{}: retry {n} of {max}", policy.timeout_growth),
        ErrorCode::E005 => format!(
            "max_tokens ×{}, temperature {:+}: retry {n} of {max}",
            policy.max_tokens_growth, policy.temperature_step
        ),
        _ => return None,
    };
    Some((code, delay, note))
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
