//! What a judge is asked: a system prompt that asks for JSON only, criterion by
//! criterion with evidence; the rubric, the sample's input and expected value and the
//! output as the user prompt; temperature 0. (The simulated model answers it too: see
//! `provider::sim_judge`.)

use serde_json::{json, Value};

use super::Rubric;
use crate::base::protocol::invocation::{Constraints, UserPrompt};
use crate::base::protocol::AgentRequest;

/// The agent name judge requests carry.
pub const JUDGE_AGENT: &str = "Eval_Judge";

/// What is judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The sample's id.
    pub sample_id: String,
    /// The sample's input.
    pub input: Value,
    /// Its expected value.
    pub expected: Value,
    /// The output judged.
    pub output: String,
}

const SYSTEM: &str = "You are an evaluator. Judge the OUTPUT below against each criterion \
of the rubric, one by one and independently: a criterion is met only when the output \
clearly satisfies it. For each criterion give `met` (true or false) and `evidence`: a \
short quote from the output, or what is missing. The expected value, when given, is a \
reference for you; the output need not repeat it word for word. Answer with one JSON \
object and nothing else: {\"criteria\": [{\"name\": \"...\", \"met\": true, \"evidence\": \"...\"}]}";

/// The request that asks a judge about `what` under `rubric` (vote `vote`).
pub fn judge_request(rubric: &Rubric, what: &Judged, check: &str, vote: u32) -> AgentRequest {
    let criteria: Vec<String> = rubric
        .criteria
        .iter()
        .map(|c| format!("- {}: {}", c.name, c.question))
        .collect();
    let task = if rubric.task.is_empty() {
        String::new()
    } else {
        format!("The output was written for this task: {}\n\n", rubric.task)
    };
    let instruction = format!(
        "{task}Judge the output against these criteria:\n{}\n\nAnswer in JSON only.",
        criteria.join("\n")
    );
    let mut user = UserPrompt {
        instruction,
        ..UserPrompt::default()
    };
    user.context
        .extra
        .insert("input".into(), what.input.clone());
    if !what.expected.is_null() {
        user.context
            .extra
            .insert("expected".into(), what.expected.clone());
    }
    user.context
        .extra
        .insert("output".into(), Value::String(what.output.clone()));
    let mut req = AgentRequest {
        invocation_id: format!("JUDGE_{}_{check}_{vote}", what.sample_id),
        agent: JUDGE_AGENT.into(),
        task_id: format!("{}/{check}", what.sample_id),
        plan_id: "eval-judge".into(),
        system_prompt: SYSTEM.into(),
        user_prompt: user,
        constraints: Constraints {
            timeout_seconds: 120.0,
            max_tokens: 1024,
            temperature: 0.0,
        },
        extra: Default::default(),
        response_schema: Some(std::sync::Arc::new(verdict_schema(rubric))),
    };
    req.extra.insert("purpose".into(), json!("judge"));
    req.extra.insert("force_json".into(), json!(true));
    req.extra.insert(
        "judge".into(),
        json!({"criteria": rubric.criteria.iter().map(|c| &c.name).collect::<Vec<_>>()}),
    );
    req
}

/// The JSON Schema of a judge's verdict under `rubric`: each criterion by name, `met`
/// and `evidence`, in the strict subset every structured-output dialect takes.
pub fn verdict_schema(rubric: &Rubric) -> Value {
    let names: Vec<&str> = rubric.criteria.iter().map(|c| c.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": {"criteria": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names},
                "met": {"type": "boolean"},
                "evidence": {"type": "string"},
            },
            "required": ["name", "met", "evidence"],
            "additionalProperties": false,
        }}},
        "required": ["criteria"],
        "additionalProperties": false,
    })
}
