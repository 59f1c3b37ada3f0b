//! What a task is handed besides its instruction. At dispatch (seed 000 §3.1: files and
//! queries at scheduling, task outputs once their task is done — in a DAG that is before
//! dispatch too) every data reference is resolved; failures follow the task's
//! `fallback_config` or the defaults of §3.2 and are logged as `reference_failed`; the
//! resolved data is then planned into the agent's context (`context_planned`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::context::limits::limits;
use super::context::plan::{plan, Input};
use super::context::select::DataType;
use super::emit::Scope;
use super::refs::{resolve_task_output, RefFailure};
use super::run::RunCtx;
use crate::event::{ContextPlanned, EngineEvent, ReferenceFailed};
use crate::protocol::refs::{RefErrorCode, ResolutionFailure};
use crate::protocol::{DataReference, FallbackConfig, FallbackStrategy, ResponseOutput};

/// A task's gathered inputs.
pub(super) struct Gathered {
    /// Asset ids of upstream work (for delta audits).
    pub assets: Vec<String>,
    /// Payloads for the request's `context.inputs`.
    pub payloads: Vec<Value>,
    /// The context report, stored with each invocation.
    pub report: Option<Value>,
    /// Set when a reference failure aborts the task.
    pub abort: Option<String>,
    /// An input too large for one invocation, split into batches (seed 000 §6.2).
    pub batched: Option<Batched>,
}

/// An input split into batches, one invocation each.
pub(super) struct Batched {
    /// One full-mode payload per batch.
    pub batches: Vec<Value>,
    /// How the batches' atoms are combined.
    pub aggregation: String,
}

/// Splits the largest batched input into batch payloads.
fn batches_of(
    input: &Input,
    cfg: &crate::protocol::context::BatchConfig,
    counter: &crate::tokens::TokenCounter,
) -> Vec<Value> {
    use super::context::batch::split;
    let (items, atoms): (Vec<Value>, bool) = match &input.data {
        Value::Array(a) => (a.clone(), true),
        Value::Object(o) if o.get("atoms").is_some_and(Value::is_array) => (
            o.get("atoms")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            true,
        ),
        other => (
            super::context::summary::text_of(other)
                .lines()
                .map(|l| Value::String(l.to_string()))
                .collect(),
            false,
        ),
    };
    let sizes: Vec<u64> = items
        .iter()
        .map(|v| match v {
            Value::String(s) => counter.count(s) + 1,
            other => counter.count(&other.to_string()),
        })
        .collect();
    let s = split(&sizes, cfg);
    if s.dropped > 0 {
        tracing::warn!(
            "{}: {} item(s) beyond max_batches {} are not sent",
            input.name,
            s.dropped,
            cfg.max_batches
        );
    }
    s.batches
        .into_iter()
        .map(|r| {
            let slice = &items[r];
            let data = if atoms {
                Value::Array(slice.to_vec())
            } else {
                Value::String(
                    slice
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("\n"),
                )
            };
            json!({"source": input.name, "transfer_mode": "full", "data": data})
        })
        .collect()
}

/// What to do after a failure, by the §3.2 table when the task configures nothing.
fn default_strategy(code: RefErrorCode, has_default: bool) -> &'static str {
    match code {
        RefErrorCode::RefNotFound if has_default => "use_default",
        RefErrorCode::RefNotFound => "skip",
        RefErrorCode::RefTimeout => "retry",
        RefErrorCode::RefPermissionDenied => "abort",
        RefErrorCode::RefFormatError => "abort",
        RefErrorCode::RefPathInvalid => "return_full",
        RefErrorCode::RefFilterError => "ignore_filter",
    }
}

fn strategy_name(s: FallbackStrategy) -> &'static str {
    match s {
        FallbackStrategy::UseDefault => "use_default",
        FallbackStrategy::Retry => "retry",
        FallbackStrategy::Skip => "skip",
        FallbackStrategy::Abort => "abort",
    }
}

fn ref_name(r: &DataReference) -> String {
    match r {
        DataReference::TaskOutput(t) => format!("task_output:{}", t.task_id),
        DataReference::File(f) => format!("file:{}", f.path),
        DataReference::DbQuery(q) => format!("db_query:{}", q.table),
    }
}

fn data_type_of(r: &DataReference, data: &Value) -> DataType {
    match r {
        DataReference::TaskOutput(_) => DataType::Atoms,
        DataReference::File(f) => match f.format.as_deref() {
            Some("json") => DataType::Metadata,
            _ if f.path.ends_with(".json") => DataType::Metadata,
            _ => DataType::Text,
        },
        DataReference::DbQuery(q) => match q.table.as_str() {
            "relations" => DataType::Relations,
            "knowledge_atoms" => DataType::Atoms,
            "papers" => DataType::Metadata,
            _ if data.is_null() => DataType::Metadata,
            _ => DataType::Table,
        },
    }
}

/// Resolves one reference once.
async fn resolve_once(
    ctx: &RunCtx,
    r: &DataReference,
    outputs: &HashMap<usize, Arc<ResponseOutput>>,
) -> Result<Value, RefFailure> {
    match r {
        DataReference::TaskOutput(t) => {
            let out = ctx
                .plan
                .task_index(&t.task_id)
                .and_then(|j| outputs.get(&j).cloned());
            match out {
                Some(o) => match serde_json::to_value(&*o) {
                    Ok(v) => resolve_task_output(&v, t),
                    Err(e) => Err(RefFailure {
                        code: RefErrorCode::RefFormatError,
                        message: format!("the output of `{}` does not serialise: {e}", t.task_id),
                    }),
                },
                None => Err(RefFailure {
                    code: RefErrorCode::RefNotFound,
                    message: format!("task `{}` produced no output", t.task_id),
                }),
            }
        }
        DataReference::File(f) => {
            let root = ctx.config.workspace.clone();
            let f = f.clone();
            tokio::task::spawn_blocking(move || super::file_ref::resolve_file(&root, &f))
                .await
                .unwrap_or_else(|e| {
                    Err(RefFailure {
                        code: RefErrorCode::RefFormatError,
                        message: format!("file reader failed: {e}"),
                    })
                })
        }
        DataReference::DbQuery(q) => {
            let Some(db) = ctx.db.clone() else {
                return Err(RefFailure {
                    code: RefErrorCode::RefNotFound,
                    message: "no database to query".into(),
                });
            };
            let q = q.clone();
            let timeout = Duration::from_millis(ctx.config.ref_timeout_ms);
            tokio::task::spawn_blocking(move || super::db_ref::resolve_db(&db, &q, timeout))
                .await
                .unwrap_or_else(|e| {
                    Err(RefFailure {
                        code: RefErrorCode::RefFormatError,
                        message: format!("query failed: {e}"),
                    })
                })
        }
    }
}

/// The reference with its path (`return_full`) or filter (`ignore_filter`) dropped.
fn degraded(r: &DataReference, code: RefErrorCode) -> Option<DataReference> {
    match (r, code) {
        (DataReference::TaskOutput(t), RefErrorCode::RefPathInvalid) => {
            let mut t = t.clone();
            t.path = None;
            Some(DataReference::TaskOutput(t))
        }
        (DataReference::TaskOutput(t), RefErrorCode::RefFilterError) => {
            let mut t = t.clone();
            t.filter = None;
            Some(DataReference::TaskOutput(t))
        }
        _ => None,
    }
}

/// Asks the provider for a summary of `data` within `target` tokens (seed 000 §4.2
/// `abstractive`). The call is an auxiliary one: it is logged, not graded.
async fn abstractive_summary(
    ctx: &RunCtx,
    idx: usize,
    k: usize,
    data: &Value,
    target: u64,
) -> Result<String, String> {
    use crate::protocol::{AgentRequest, Constraints, UserPrompt};
    struct Collect(String);
    impl crate::provider::ChunkSink for Collect {
        fn chunk(&mut self, text: &str) {
            self.0.push_str(text);
        }
    }
    let task = &ctx.plan.tasks[idx];
    let mut prompt = UserPrompt {
        instruction: format!(
            "Summarise the data below in at most {target} tokens. Keep identifiers, numbers and formulas exactly; add nothing that is not in the data."
        ),
        ..Default::default()
    };
    prompt.context.extra.insert("inputs".into(), data.clone());
    let request = Arc::new(AgentRequest {
        invocation_id: format!("{}_SUMMARY_{}", task.task_id, k + 1),
        agent: task.agent.clone(),
        task_id: task.task_id.clone(),
        plan_id: ctx.plan.plan_id.clone(),
        system_prompt: "You write faithful, compact summaries of research data.".into(),
        user_prompt: prompt,
        constraints: Constraints {
            timeout_seconds: 60.0,
            max_tokens: u32::try_from(target).unwrap_or(u32::MAX),
            temperature: 0.2,
        },
        extra: [("purpose".to_string(), json!("summary"))]
            .into_iter()
            .collect(),
    });
    let mut sink = Collect(String::new());
    let call = ctx.provider.invoke(request, 1, &mut sink);
    match tokio::time::timeout(Duration::from_secs(60), call).await {
        Ok(Ok(_)) if !sink.0.trim().is_empty() => {
            tracing::info!(
                "task {}: abstractive summary of {} chars",
                task.task_id,
                sink.0.len()
            );
            Ok(sink.0)
        }
        Ok(Ok(_)) => Err("the provider returned an empty summary".into()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the summary call timed out after 60 s".into()),
    }
}

/// Resolves the task's references, applies fallbacks, and plans the context.
pub(super) async fn gather_inputs(ctx: &RunCtx, idx: usize, scope: &Scope) -> Gathered {
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
    let outputs: HashMap<usize, Arc<ResponseOutput>> = match ctx.outputs.read() {
        Ok(o) => needed
            .iter()
            .filter_map(|j| o.get(j).map(|v| (*j, v.clone())))
            .collect(),
        Err(_) => HashMap::new(),
    };
    for d in &task.depends_on {
        if let Some(out) = ctx.plan.task_index(d).and_then(|j| outputs.get(&j)) {
            for a in &out.atoms {
                if !assets.contains(&a.asset_id) {
                    assets.push(a.asset_id.clone());
                }
            }
        }
    }
    let fallback: Option<&FallbackConfig> = task.fallback_config.as_ref();
    let mut inputs: Vec<Input> = Vec::new();
    let mut abort = None;
    for (i, r) in task.data_references.iter().enumerate() {
        let report = |failure: ResolutionFailure| {
            let _ = ctx.emitter.emit(
                scope,
                EngineEvent::ReferenceFailed(ReferenceFailed { index: i, failure }),
            );
        };
        let record = |f: &RefFailure, strategy: &str, value: Value| ResolutionFailure {
            ref_type: r.ref_type().into(),
            task_id: match r {
                DataReference::TaskOutput(t) => Some(t.task_id.clone()),
                _ => None,
            },
            error_code: f.code,
            error_message: f.message.clone(),
            fallback_strategy: strategy.into(),
            fallback_value: value,
            timestamp: crate::clock::now_rfc3339(),
            extra: Default::default(),
        };
        let mut resolved = resolve_once(ctx, r, &outputs).await;
        let mut used_ref = r.clone();
        if let Err(f) = &resolved {
            let f = f.clone();
            let default_value = fallback
                .map(|c| c.default_value.clone())
                .unwrap_or(Value::Null);
            let strategy = match fallback {
                Some(c) => strategy_name(c.strategy),
                None => default_strategy(f.code, !default_value.is_null()),
            };
            match strategy {
                "retry" => {
                    let (count, delay, last) = match fallback {
                        Some(c) => (
                            c.retry_count,
                            c.retry_delay_ms,
                            c.on_final_failure.unwrap_or(FallbackStrategy::Skip),
                        ),
                        None => (3, 1_000, FallbackStrategy::Skip),
                    };
                    let mut last_err = f;
                    for _ in 0..count {
                        report(record(&last_err, "retry", Value::Null));
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        match resolve_once(ctx, r, &outputs).await {
                            Ok(v) => {
                                resolved = Ok(v);
                                break;
                            }
                            Err(e) => last_err = e,
                        }
                    }
                    if resolved.is_err() {
                        let final_strategy = strategy_name(last);
                        report(record(&last_err, final_strategy, default_value.clone()));
                        match last {
                            FallbackStrategy::Abort => {
                                abort = Some(format!(
                                    "{}: {} {}",
                                    ref_name(r),
                                    last_err.code.as_str(),
                                    last_err.message
                                ))
                            }
                            FallbackStrategy::UseDefault if !default_value.is_null() => {
                                resolved = Ok(default_value.clone())
                            }
                            _ => {}
                        }
                    }
                }
                "return_full" | "ignore_filter" => {
                    report(record(&f, strategy, Value::Null));
                    if let Some(d) = degraded(r, f.code) {
                        resolved = resolve_once(ctx, &d, &outputs).await;
                        used_ref = d;
                    }
                }
                "use_default" => {
                    report(record(&f, strategy, default_value.clone()));
                    if !default_value.is_null() {
                        resolved = Ok(default_value.clone());
                    }
                }
                "abort" => {
                    report(record(&f, strategy, Value::Null));
                    abort = Some(format!(
                        "{}: {} {}",
                        ref_name(r),
                        f.code.as_str(),
                        f.message
                    ));
                }
                _ => report(record(&f, strategy, Value::Null)),
            }
        }
        if abort.is_some() {
            break;
        }
        if let Ok(data) = resolved {
            let priority = match r {
                DataReference::TaskOutput(_) => 1,
                _ => 2,
            };
            inputs.push(Input {
                name: ref_name(r),
                data_type: data_type_of(r, &data),
                data,
                priority,
                configured: task.transfer_config.as_ref().and_then(|c| c.mode),
                reference: serde_json::to_value(&used_ref).unwrap_or(Value::Null),
                tokens: None,
            });
        }
    }
    if let Some(a) = abort {
        return Gathered {
            assets,
            payloads: Vec::new(),
            report: None,
            abort: Some(a),
            batched: None,
        };
    }
    if inputs.is_empty() {
        return Gathered {
            assets,
            payloads: Vec::new(),
            report: None,
            abort: None,
            batched: None,
        };
    }
    let agent = &ctx.plan.agents[&task.agent];
    let lim = limits(
        agent.max_input_tokens,
        agent.max_tokens as u64,
        Some(agent.data_area_tokens),
    );
    let (_, system_tokens) = ctx.system_prompt_info(&task.agent);
    let instruction_tokens = ctx.config.tokens.count(&task.instruction);
    let preview = task
        .transfer_config
        .as_ref()
        .and_then(|c| c.inline_preview_count)
        .unwrap_or(3) as usize;
    let planned = plan(
        &task.task_id,
        &task.agent,
        lim.effective_data_limit,
        system_tokens,
        instruction_tokens,
        &inputs,
        preview,
        &ctx.config.tokens,
    );
    // Abstractive summaries: the provider rewrites the summary payloads.
    let mut planned = planned;
    let abstractive = ctx.config.abstractive_summaries
        || task
            .transfer_config
            .as_ref()
            .and_then(|c| c.extra.get("summary_strategy"))
            .and_then(Value::as_str)
            == Some("abstractive");
    if abstractive {
        for (k, p) in planned.payloads.iter_mut().enumerate() {
            if p["transfer_mode"] != "summary" {
                continue;
            }
            let Some(input) = inputs
                .iter()
                .find(|i| Some(i.name.as_str()) == p["source"].as_str())
            else {
                continue;
            };
            let target = p["summary_config"]["max_length"]
                .as_u64()
                .unwrap_or(2_000)
                .max(50);
            match abstractive_summary(ctx, idx, k, &input.data, target).await {
                Ok(text) => {
                    p["data"] = json!({"summary": text});
                    p["summary_config"]["strategy"] = json!("abstractive");
                    let sent = ctx.config.tokens.count(&p.to_string());
                    if let Some(plan) = planned.inputs.iter_mut().find(|x| x.name == input.name) {
                        plan.tokens_after = sent;
                    }
                }
                Err(e) => {
                    tracing::warn!(
                        "task {}: abstractive summary failed ({e}); extractive kept",
                        task.task_id
                    );
                    p["summary_config"]["strategy"] = json!("extractive");
                    p["summary_config"]["abstractive_error"] = json!(e);
                }
            }
        }
    }
    // The largest input marked for batches (over 50K tokens) is split, when batching is
    // enabled in the task's transfer_config (`batch_config`, seed defaults otherwise).
    let batch_cfg = task
        .transfer_config
        .as_ref()
        .and_then(|c| c.extra.get("batch_config"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_else(super::context::batch::default_config);
    let batched = planned
        .inputs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.batched && p.action != "omit")
        .max_by_key(|(_, p)| p.tokens)
        .map(|(i, _)| i)
        .filter(|_| batch_cfg.enabled)
        .and_then(|i| {
            let b = batches_of(&inputs[i], &batch_cfg, &ctx.config.tokens);
            (b.len() > 1).then(|| Batched {
                batches: b,
                aggregation: batch_cfg.aggregation_strategy.clone(),
            })
        });
    let report = json!({"context_management": planned.report, "inputs": planned.inputs, "effective_data_limit": lim.effective_data_limit, "batches": batched.as_ref().map(|b| b.batches.len())});
    let _ = ctx.emitter.emit(
        scope,
        EngineEvent::ContextPlanned(ContextPlanned {
            inputs: planned.inputs,
            report: planned.report,
            effective_data_limit: lim.effective_data_limit,
        }),
    );
    Gathered {
        assets,
        payloads: planned.payloads,
        report: Some(report),
        abort: None,
        batched,
    }
}
