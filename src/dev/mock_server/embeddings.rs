//! `POST …/embeddings` in the OpenAI format, answered with the built-in embedding (so a
//! test's endpoint and the offline default agree). The model `fail-embeddings` answers
//! 500, for testing what happens when the endpoint is down.

use serde_json::{json, Value};

use crate::base::text::embed::builtin_embedding;

/// The status and JSON body answering an embeddings request.
pub fn answer(body: &[u8]) -> (u16, String) {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return (
                400,
                json!({"error": {"type": "invalid_request_error", "message": format!("body is not JSON: {e}")}})
                    .to_string(),
            )
        }
    };
    let model = v["model"].as_str().unwrap_or("mock-embedding");
    if model == "fail-embeddings" {
        return (
            500,
            json!({"error": {"type": "server_error", "message": "embedding backend down (mock)"}})
                .to_string(),
        );
    }
    let inputs: Vec<String> = match &v["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => {
            return (
                400,
                json!({"error": {"type": "invalid_request_error", "message": "input must be a string or an array of strings"}})
                    .to_string(),
            )
        }
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": builtin_embedding(t)}))
        .collect();
    let tokens: usize = inputs.iter().map(|t| t.split_whitespace().count()).sum();
    (
        200,
        json!({"object": "list", "data": data, "model": model,
               "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
        .to_string(),
    )
}
