//! What an eval would use before anything runs (`plexus eval --estimate`). Every
//! copy's prompt is built as the engine builds its first attempt's (the agent's system
//! prompt, the instruction with the sample placed, the context) and counted with the
//! model's tokenizer; each answer is bounded by its task's `max_tokens`. What cannot
//! be known beforehand is said, not guessed: upstream outputs a task reads (counted
//! when they are known only), tool schemas and tool results, retries. A judge's prompt
//! is counted without the output it will judge, which is bounded by the output task's
//! `max_tokens`.

use serde::Serialize;

use crate::base::protocol::invocation::render_user_prompt;
use crate::base::tokens::TokenCounter;
use crate::features::eval::judge::request::{judge_request, Judged};
use crate::features::eval::spec::Scoring;
use crate::model::plan::Plan;
use crate::run::engine::request::{constraints_for, threshold_for, user_prompt_for, ContextParts};

/// The calls of one kind (the plan's, or one judge check's) and their tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Calls {
    /// Calls (first attempts).
    pub calls: u64,
    /// Their prompts' tokens, counted.
    pub prompt_tokens: u64,
    /// Most tokens their answers can have (each call's `max_tokens`).
    pub max_output_tokens: u64,
}

/// What an eval would use.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// The plan's copies' calls.
    pub plan: Calls,
    /// Tasks that read upstream outputs (not in the count: unknown before they run).
    pub reading_upstream: u64,
    /// Tasks that use tools (their schemas and results are not in the count).
    pub using_tools: u64,
    /// Each judge check's calls: its prompts without the output judged, and the most
    /// tokens that output adds to them.
    pub judges: Vec<(String, Calls, u64)>,
    /// Copies' tasks whose prompt alone is over their agent's input limit: the engine
    /// will not send them (E008), and their samples are errors.
    pub too_large: Vec<TooLarge>,
}

/// A copy's task whose prompt does not fit its agent's input limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TooLarge {
    /// The copy's task (`SAMPLE/TASK`, or `SAMPLE#EPOCH/TASK`).
    pub task_id: String,
    /// Its prompt's tokens (system prompt and user prompt).
    pub prompt_tokens: u64,
    /// The agent's input limit.
    pub limit: u64,
}

/// Counts the prompts of `plan` (the eval's copies) and of `scoring`'s judges over
/// `samples` (each sample's id, input and expected value, once per epoch).
pub fn estimate(
    plan: &Plan,
    scoring: &Scoring,
    samples: &[(String, serde_json::Value, serde_json::Value)],
    counter: &TokenCounter,
    min_temperature: f64,
) -> Estimate {
    let mut e = Estimate::default();
    let mut output_max = 0u64;
    let formats = crate::run::engine::answer_shape::AnswerFormats::new(*counter);
    for task in &plan.tasks {
        let Some(agent) = plan.agents.get(&*task.agent) else {
            continue;
        };
        let constraints = constraints_for(
            agent,
            plan.execution_mode,
            &task.options().constraints,
            min_temperature,
        );
        let parts = ContextParts {
            dependencies: task.context.dependencies.clone(),
            existing_assets: task.context.existing_assets.clone(),
            inputs: Vec::new(),
            trimmed: None,
            fetchable: Vec::new(),
        };
        let format = formats.of(task, agent);
        let user = user_prompt_for(task, agent, threshold_for(task), None, parts, format.json());
        let text = render_user_prompt(&user)
            .map(|r| r.get().to_string())
            .unwrap_or_default();
        e.plan.calls += 1;
        let prompt = counter.count(&agent.system_prompt) + format.prompt_tokens(&text);
        e.plan.prompt_tokens += prompt;
        if prompt > agent.max_input_tokens {
            e.too_large.push(TooLarge {
                task_id: task.task_id.clone(),
                prompt_tokens: prompt,
                limit: agent.max_input_tokens,
            });
        }
        e.plan.max_output_tokens += u64::from(constraints.max_tokens);
        if task.task_id.ends_with(&format!("/{}", scoring.output_task)) {
            output_max = output_max.max(u64::from(constraints.max_tokens));
        }
        if !task.depends_on.is_empty() || !task.options().data_references.is_empty() {
            e.reading_upstream += 1;
        }
        if plan.react_for(task).is_some() {
            e.using_tools += 1;
        }
    }
    for c in &scoring.checks {
        let Some(parts) = c.judge() else {
            continue;
        };
        let Ok(rubric) = parts.rubric() else {
            continue;
        };
        let asks = parts.judges.len().max(1) as u64 * u64::from(parts.votes.max(1));
        let mut calls = Calls::default();
        for (id, input, expected) in samples {
            let what = Judged {
                sample_id: id.clone(),
                input: input.clone(),
                expected: expected.clone(),
                output: String::new(),
            };
            let req = judge_request(&rubric, &what, &c.name, 0);
            let text = render_user_prompt(&req.user_prompt)
                .map(|r| r.get().to_string())
                .unwrap_or_default();
            let per = counter.count(&req.system_prompt) + counter.count(&text);
            let n = asks * u64::from(scoring.epochs.max(1));
            calls.calls += n;
            calls.prompt_tokens += per * n;
            calls.max_output_tokens += u64::from(req.constraints.max_tokens) * n;
        }
        let added = output_max * calls.calls;
        e.judges.push((c.name.clone(), calls, added));
    }
    e
}
