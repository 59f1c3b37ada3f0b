//! The mock server's `/moderations`: an input is flagged (category `violence`) when it
//! holds the text [`FLAG_WORD`]; model `fail-moderation` answers 500, as a backend that
//! is down.

use serde_json::{json, Value};

/// The text that gets an input flagged.
pub const FLAG_WORD: &str = "MODERATION-FLAG";

/// Status and body of the answer to a `/moderations` request `body`.
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
    if v["model"].as_str() == Some("fail-moderation") {
        return (
            500,
            json!({"error": {"type": "server_error", "message": "moderation backend down (mock)"}})
                .to_string(),
        );
    }
    let inputs: Vec<&str> = match &v["input"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().map(|x| x.as_str().unwrap_or_default()).collect(),
        _ => Vec::new(),
    };
    let results: Vec<Value> = inputs
        .iter()
        .map(|t| {
            let flagged = t.contains(FLAG_WORD);
            json!({"flagged": flagged, "categories": {"violence": flagged, "hate": false}})
        })
        .collect();
    (
        200,
        json!({"id": "modr-mock", "model": v["model"], "results": results}).to_string(),
    )
}
