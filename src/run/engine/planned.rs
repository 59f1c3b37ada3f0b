//! What follows a planned context: summaries rewritten by the provider when the task
//! asks for abstractive ones (seed 000 §4.2), and the largest input over 50K tokens split
//! into batches, one invocation each (§6.2).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::context::plan::{Input, Planned};
use super::run_ctx::RunCtx;
use crate::model::plan::Task;

/// An input split into batches, one invocation each.
pub(super) struct Batched {
    /// One full-mode payload per batch.
    pub batches: Vec<Value>,
    /// How the batches' atoms are combined.
    pub aggregation: String,
}

/// Rewrites the summary payloads of `planned` through the provider, when the run or the
/// task's `transfer_config` asks for abstractive summaries; an extractive summary stays
/// where a call fails.
pub(super) async fn abstractive_summaries(
    ctx: &RunCtx,
    idx: usize,
    inputs: &[Input],
    planned: &mut Planned,
) {
    let task = &ctx.plan.tasks[idx];
    let abstractive = ctx.config.abstractive_summaries
        || super::context::settings::TransferSettings::of(task.options().transfer_config.as_ref())
            .strategy
            == crate::base::text::summary::Strategy::Abstractive;
    if !abstractive {
        return;
    }
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
                    planned.prompt_tokens =
                        (planned.prompt_tokens + sent).saturating_sub(plan.tokens_after);
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

/// The batches of the largest input marked for them (over 50K tokens), when batching is
/// enabled in the task's transfer_config (`batch_config`, seed defaults otherwise) and
/// the input splits into more than one.
pub(super) fn batch(
    ctx: &RunCtx,
    task: &Task,
    inputs: &[Input],
    planned: &Planned,
) -> Option<Batched> {
    let batch_cfg = task
        .options()
        .transfer_config
        .as_ref()
        .and_then(|c| c.extra.get("batch_config"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_else(super::context::batch::default_config);
    planned
        .inputs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.batched && p.action != "omit")
        .max_by_key(|(_, p)| p.tokens)
        .map(|(i, _)| i)
        .filter(|_| batch_cfg.enabled)
        .and_then(|i| inputs.get(i))
        .and_then(|input| {
            let b = batches_of(input, &batch_cfg, &ctx.config.tokens);
            (b.len() > 1).then(|| Batched {
                batches: b,
                aggregation: batch_cfg.aggregation_strategy.clone(),
            })
        })
}

/// Splits the largest batched input into batch payloads.
fn batches_of(
    input: &Input,
    cfg: &crate::base::protocol::context::BatchConfig,
    counter: &crate::base::tokens::TokenCounter,
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
            crate::base::text::summary::text_of(other)
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

/// Asks the provider for a summary of `data` within `target` tokens (seed 000 §4.2
/// `abstractive`). The call is an auxiliary one: it is logged, not graded.
async fn abstractive_summary(
    ctx: &RunCtx,
    idx: usize,
    k: usize,
    data: &Value,
    target: u64,
) -> Result<String, String> {
    use crate::base::protocol::{AgentRequest, Constraints, UserPrompt};
    struct Collect(String);
    impl crate::data::provider::ChunkSink for Collect {
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
        agent: task.agent.to_string(),
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
        response_schema: None,
    });
    let mut sink = Collect(String::new());
    let provider = ctx.provider.as_ref();
    let limits = crate::data::provider::call::Limits::for_call(
        provider,
        crate::data::provider::call::timeout_of(provider, Duration::from_secs(60)),
        request.constraints.max_tokens,
    );
    let (outcome, _) =
        crate::data::provider::call::call(provider, request, &mut sink, &limits, &ctx.config.retry)
            .await;
    match outcome {
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
        Err(stopped) => Err(format!(
            "the summary call was stopped: {}",
            crate::data::provider::call::said(&stopped)
        )),
    }
}
