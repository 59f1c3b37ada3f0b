//! The simulated model as an eval's judge (a request whose `purpose` is `judge`): it
//! judges without understanding, every criterion alike: met when the output contains
//! the expected value (or, with none, is not empty), with that as its evidence.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::base::protocol::AgentRequest;

/// Whether `req` asks for a judgment.
pub fn is_judge_request(req: &AgentRequest) -> bool {
    req.extra.get("purpose").and_then(Value::as_str) == Some("judge")
}

/// The simulated model's answer to a judge request (see the module's doc).
pub fn simulated_answer(req: &Arc<AgentRequest>) -> String {
    let extra = &req.user_prompt.context.extra;
    let output = extra.get("output").and_then(Value::as_str).unwrap_or("");
    let expected = match extra.get("expected") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    };
    let met = if expected.is_empty() {
        !output.trim().is_empty()
    } else {
        output.contains(expected.as_str())
    };
    let evidence = if met && !expected.is_empty() {
        format!("the output contains “{expected}”")
    } else if met {
        "the output is not empty".to_string()
    } else if expected.is_empty() {
        "the output is empty".to_string()
    } else {
        format!("the output does not contain “{expected}”")
    };
    let names: Vec<String> = req
        .extra
        .get("judge")
        .and_then(|j| j.get("criteria"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    json!({"criteria": names.iter().map(|n| json!({"name": n, "met": met, "evidence": evidence})).collect::<Vec<_>>()})
        .to_string()
}
