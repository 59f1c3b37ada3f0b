//! Fitting a task's whole prompt into its agent's context budget (seed 000 §6): the
//! system prompt, the instruction, the context's dependencies and existing assets and the
//! resolved data inputs are trimmed together by priority, reported (`context_planned`,
//! stored with each request), and a prompt that still exceeds the agent's input limit
//! fails its task before any provider call.
//!
//! A task with no data inputs whose prompt is far below the limit is not counted: the
//! JSON bytes of its parts bound its tokens from above (every token is at least a byte),
//! and when that bound fits nothing could be trimmed.

use std::sync::Arc;

use serde_json::{json, Value};

use super::context::limits::{full_share, limits, FixedParts, SAFETY_MARGIN};
use super::context::plan::{plan_prompt, Input, InputPlan, TransferSettings};
use super::context::prompt::{
    json_bytes, OverLimit, PromptList, PromptParts, DEPENDENCIES_PRIORITY, EXISTING_ASSETS_PRIORITY,
};
use super::emit::Scope;
use super::planned::{abstractive_summaries, batch, Batched};
use super::request::{dependencies_for, threshold_for, user_prompt_for, ContextParts};
use super::run_ctx::RunCtx;
use crate::base::agents::AgentDef;
use crate::base::protocol::context::TransferMode;
use crate::base::protocol::SharedJson;
use crate::base::tokens::TokenCounter;
use crate::model::event::{ContextPlanned, EngineEvent};
use crate::model::plan::Task;
use crate::run::tools::fetch_reference::Fetchable;

/// A task's gathered inputs, fitted to its budget.
pub(super) struct Gathered {
    /// What the engine adds to the task's context, as the budget left it.
    pub parts: ContextParts,
    /// The context report, stored with each invocation.
    pub report: Option<Value>,
    /// Set when the task fails before any call: a reference failure that aborts it, or a
    /// prompt over the agent's input limit.
    pub abort: Option<String>,
    /// An input too large for one invocation, split into batches (seed 000 §6.2).
    pub batched: Option<Batched>,
}

impl Gathered {
    /// A task that fails before any call, for `why`.
    pub fn aborted(why: String) -> Gathered {
        Gathered {
            parts: ContextParts::default(),
            report: None,
            abort: Some(why),
            batched: None,
        }
    }
}

/// Bytes the instruction template and the user prompt's keys add to the task's own text
/// (checked against a rendered prompt in the tests below).
const TEMPLATE_BYTES: u64 = 512;

/// Above this many bytes a text is counted on a blocking thread, not on the runtime's.
const COUNT_INLINE_MAX: usize = 1 << 20;

/// Fits the prompt of task `idx`, with its resolved `inputs` and the `assets` of the
/// plan and of its upstream tasks, to its agent's budget.
pub(super) async fn fit(
    ctx: &RunCtx,
    idx: usize,
    scope: &Scope,
    inputs: Vec<Input>,
    assets: Vec<String>,
) -> Gathered {
    let task = &ctx.plan.tasks[idx];
    let agent = &ctx.plan.agents[&*task.agent];
    let counter = ctx.config.tokens;
    let mut parts = ContextParts {
        dependencies: dependencies_for(task),
        existing_assets: if assets.is_empty() {
            task.context.existing_assets.clone()
        } else {
            Some(assets)
        },
        inputs: Vec::new(),
        trimmed: None,
        fetchable: Vec::new(),
    };
    let window = agent.max_input_tokens;
    let (_, system_tokens) = ctx.system_prompt_info(&task.agent);
    // With inputs, room for `fetch_reference` too: any of them may go by reference.
    let candidates: Vec<Fetchable> = inputs
        .iter()
        .map(|i| Fetchable {
            ref_id: i.name.clone(),
            data: Arc::new(Value::Null),
        })
        .collect();
    let tools_tokens = super::toolbox::schema_tokens(ctx, task, agent, &candidates);
    let answer_format = ctx.answer_formats.of(task, agent).json();
    // The common small task: the whole prompt, bounded from above, well within the
    // window, so nothing to trim and nothing counted.
    if inputs.is_empty()
        && system_tokens.saturating_add(bytes_bound(task, &answer_format, &parts, &counter))
            <= within_margin(window.saturating_sub(tools_tokens))
    {
        return Gathered {
            parts,
            report: None,
            abort: None,
            batched: None,
        };
    }
    let prompt = PromptParts {
        system_tokens,
        instruction_tokens: instruction_tokens(task, agent, answer_format, counter).await,
        lists: lists_of(&parts, &counter),
    };
    // What the prompt really holds besides the data takes its room first.
    let fixed = FixedParts {
        system: system_tokens,
        instruction: prompt.instruction_tokens,
        tools: tools_tokens,
    };
    let lim = limits(
        window,
        agent.max_tokens as u64,
        Some(agent.data_area_tokens),
        fixed,
    );
    let mut settings = TransferSettings::of(task.options().transfer_config.as_ref());
    settings.full_under = full_share(window).min(lim.effective_data_limit);
    // The trimming weighs the whole prompt: its fixed parts beside the data's limit,
    // within the window (fixed parts over it cannot fit at all).
    let prompt_limit = (system_tokens + prompt.instruction_tokens + lim.effective_data_limit)
        .min(window.saturating_sub(tools_tokens));
    let mut planned = plan_prompt(
        &task.task_id,
        &task.agent,
        prompt_limit,
        &prompt,
        &inputs,
        &settings,
        &counter,
    );
    let over = planned_over_limit(task, agent, &prompt, planned.prompt_tokens);
    let batched = if over.is_none() {
        abstractive_summaries(ctx, idx, &inputs, &mut planned).await;
        batch(ctx, task, &inputs, &planned)
    } else {
        None
    };
    let report = json!({"context_management": planned.report, "inputs": planned.inputs, "effective_data_limit": lim.effective_data_limit, "batches": batched.as_ref().map(|b| b.batches.len())});
    cut_lists(&mut parts, &prompt.lists, &planned.lists);
    parts.inputs = planned.payloads;
    parts.fetchable = fetchable(inputs, &planned.inputs);
    let logged = ctx.emitter.emit(
        scope,
        EngineEvent::ContextPlanned(ContextPlanned {
            inputs: planned.inputs,
            report: planned.report,
            effective_data_limit: lim.effective_data_limit,
        }),
    );
    // A plan that cannot be logged stops the task before any call.
    let abort = match logged {
        Err(e) => Some(format!("the run's log cannot be written: {e}")),
        Ok(()) => over.map(|o| o.to_string()),
    };
    Gathered {
        parts,
        report: Some(report),
        abort,
        batched,
    }
}

/// Tokens of the task's user prompt without the lists and inputs: the instruction as the
/// template completes it, the output requirements and the plan's context. Counted once.
async fn instruction_tokens(
    task: &Task,
    agent: &AgentDef,
    answer_format: SharedJson,
    counter: TokenCounter,
) -> u64 {
    let skeleton = user_prompt_for(
        task,
        agent,
        threshold_for(task),
        None,
        ContextParts::default(),
        answer_format,
    );
    count_text(
        serde_json::to_string(&skeleton).unwrap_or_default(),
        counter,
    )
    .await
}

/// The error of a planned prompt of `tokens` over the agent's input limit.
///
/// Seed 001 §8: E008 (system_error: no retry, logged for a person) is the code of a task
/// that cannot be sent at all. Its instruction and system prompt are critical and never
/// shortened, so no retry can make them fit: only a change to the plan or the agent can.
/// The other codes either retry (E001–E005) or name another cause (E006 an upstream
/// failure, E007 the model's output).
fn planned_over_limit(
    task: &Task,
    agent: &AgentDef,
    prompt: &PromptParts,
    tokens: u64,
) -> Option<OverLimit> {
    let fixed = prompt.system_tokens + prompt.instruction_tokens;
    let breakdown = vec![
        ("system prompt", prompt.system_tokens),
        ("instruction", prompt.instruction_tokens),
        ("context and inputs", tokens.saturating_sub(fixed)),
    ];
    over_limit(task, agent, tokens, breakdown, true)
}

/// A prompt of `tokens` over `agent`'s input limit, if it is.
fn over_limit(
    task: &Task,
    agent: &AgentDef,
    tokens: u64,
    breakdown: Vec<(&'static str, u64)>,
    trimmed: bool,
) -> Option<OverLimit> {
    (tokens > agent.max_input_tokens).then(|| OverLimit {
        task_id: task.task_id.clone(),
        agent: task.agent.to_string(),
        tokens,
        breakdown,
        trimmed,
        limit: agent.max_input_tokens,
    })
}

/// The error of a prompt of `prompt_tokens` (as it would be sent, `tools_tokens` of tool
/// schemas included) over the agent's input limit. What the budget planned can still grow after it (a retry's feedback, a batch,
/// an abstractive summary): this check on the rendered prompt is the last word, with the
/// same code (E008).
pub(super) fn over_input_limit(
    task: &Task,
    agent: &AgentDef,
    prompt_tokens: u64,
    system_tokens: u64,
    tools_tokens: u64,
) -> Option<String> {
    if prompt_tokens <= agent.max_input_tokens {
        return None;
    }
    let mut breakdown = vec![
        ("system prompt", system_tokens),
        (
            "user prompt",
            prompt_tokens.saturating_sub(system_tokens + tools_tokens),
        ),
    ];
    if tools_tokens > 0 {
        breakdown.push(("tool schemas", tools_tokens));
    }
    over_limit(task, agent, prompt_tokens, breakdown, false).map(|o| o.to_string())
}

/// An upper bound of the tokens of the task's user prompt with `parts` and no inputs,
/// from the JSON bytes of what it is made of (the plan's dependencies and assets may be
/// counted twice: a bound only needs to be above).
fn bytes_bound(
    task: &Task,
    answer_format: &SharedJson,
    parts: &ContextParts,
    counter: &TokenCounter,
) -> u64 {
    let bytes = json_bytes(&task.instruction)
        + answer_format.get().len() as u64
        + 2 * json_bytes(&task.options().focus)
        + json_bytes(&task.context)
        + json_bytes(&task.output_requirements)
        + json_bytes(&parts.dependencies)
        + json_bytes(&parts.existing_assets)
        + TEMPLATE_BYTES;
    (bytes as f64 * counter.safety_factor.max(1.0)).ceil() as u64
}

/// The inputs passed by reference (whole, not in batches, not omitted), with their data:
/// what the task's `fetch_reference` reads.
fn fetchable(inputs: Vec<Input>, plans: &[InputPlan]) -> Vec<Fetchable> {
    inputs
        .into_iter()
        .zip(plans)
        .filter(|(_, p)| p.mode == TransferMode::Reference && !p.batched && p.action != "omit")
        .map(|(input, _)| Fetchable {
            ref_id: input.name,
            data: Arc::new(input.data),
        })
        .collect()
}

/// `tokens` times the protocol's safety margin.
fn within_margin(tokens: u64) -> u64 {
    (tokens as f64 * SAFETY_MARGIN).floor() as u64
}

/// Counts `text` once, on a blocking thread when it is large.
async fn count_text(text: String, counter: TokenCounter) -> u64 {
    if text.len() <= COUNT_INLINE_MAX {
        return counter.count(&text);
    }
    let bytes = text.len() as u64;
    tokio::task::spawn_blocking(move || counter.count(&text))
        .await
        // The counter does not panic on text; should the thread fail, the byte count
        // stands in (it is above the token count).
        .unwrap_or(bytes)
}

/// The context's lists as the budget sees them: existing assets, then dependencies.
fn lists_of(parts: &ContextParts, counter: &TokenCounter) -> Vec<PromptList> {
    // One token for the comma between entries.
    let tokens = |json: String| counter.count(&json) + 1;
    let mut lists = Vec::new();
    if let Some(a) = parts.existing_assets.as_ref().filter(|a| !a.is_empty()) {
        lists.push(PromptList {
            name: "existing_assets".into(),
            priority: EXISTING_ASSETS_PRIORITY,
            entries: a
                .iter()
                .map(|id| tokens(serde_json::to_string(id).unwrap_or_default()))
                .collect(),
        });
    }
    if let Some(d) = parts.dependencies.as_ref().filter(|d| !d.is_empty()) {
        lists.push(PromptList {
            name: "dependencies".into(),
            priority: DEPENDENCIES_PRIORITY,
            entries: d
                .iter()
                .map(|e| tokens(serde_json::to_string(e).unwrap_or_default()))
                .collect(),
        });
    }
    lists
}

/// Cuts each list of `parts` to the head the plan `kept`, and notes what was left out.
fn cut_lists(parts: &mut ContextParts, lists: &[PromptList], kept: &[usize]) {
    let mut note = serde_json::Map::new();
    for (l, &n) in lists.iter().zip(kept) {
        let total = l.entries.len();
        if n >= total {
            continue;
        }
        match l.name.as_str() {
            "existing_assets" => {
                parts.existing_assets = trunc(parts.existing_assets.take(), n);
            }
            _ => parts.dependencies = trunc(parts.dependencies.take(), n),
        }
        note.insert(l.name.clone(), json!({"sent": n, "total": total}));
    }
    if !note.is_empty() {
        parts.trimmed = Some(Value::Object(note));
    }
}

/// The first `n` entries of a list; none at all when `n` is 0.
fn trunc<T>(list: Option<Vec<T>>, n: usize) -> Option<Vec<T>> {
    let mut v = list?;
    v.truncate(n);
    (!v.is_empty()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::parse_plan;

    #[test]
    fn the_bytes_bound_is_above_the_rendered_prompt() {
        let plan = parse_plan(
            r#"{"plan_id":"P","execution_mode":"Quick_Assessment","tasks":[
              {"task_id":"U","agent":"Scholar_Internalizer","instruction":"x"},
              {"task_id":"A","agent":"Scholar_Internalizer","instruction":"Analyse \"it\"\n\tnow.",
               "focus":"the loss","depends_on":["U"],
               "context":{"paper_info":{"title":"T"},"existing_assets":["MATH_A_01"]},
               "output_requirements":{"required_fields":["content.x"],"max_atoms":3}}]}"#,
            "t",
        )
        .expect("plan");
        let task = &plan.tasks[1];
        let agent = &plan.agents[&*task.agent];
        let parts = ContextParts {
            dependencies: dependencies_for(task),
            existing_assets: Some(vec!["MATH_A_01".into(), "MATH_U_02".into()]),
            inputs: Vec::new(),
            trimmed: None,
            fetchable: Vec::new(),
        };
        let format = super::super::answer_shape::answer_format(task, agent);
        let p = user_prompt_for(
            task,
            agent,
            threshold_for(task),
            None,
            parts.clone(),
            format.clone(),
        );
        let text = serde_json::to_string(&p).expect("renders");
        let counter = TokenCounter::default();
        assert!(bytes_bound(task, &format, &parts, &counter) >= text.len() as u64);
        assert!(counter.count(&text) <= text.len() as u64);
    }

    #[test]
    fn lists_are_cut_to_their_head_and_noted() {
        let mut parts = ContextParts {
            dependencies: Some(Vec::new()),
            existing_assets: Some((0..5).map(|i| format!("A{i}")).collect()),
            inputs: Vec::new(),
            trimmed: None,
            fetchable: Vec::new(),
        };
        let lists = lists_of(&parts, &TokenCounter::default());
        assert_eq!(lists.len(), 1, "an empty list is no item");
        cut_lists(&mut parts, &lists, &[2]);
        assert_eq!(parts.existing_assets, Some(vec!["A0".into(), "A1".into()]));
        assert_eq!(
            parts.trimmed,
            Some(json!({"existing_assets": {"sent": 2, "total": 5}}))
        );
        cut_lists(&mut parts, &lists, &[0]);
        assert_eq!(parts.existing_assets, None);
    }
}
