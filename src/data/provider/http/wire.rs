//! What the OpenAI and Anthropic wire formats share: stream event JSON, API error
//! objects, token counts and short previews of bad answers.

use serde_json::Value;

use crate::data::provider::ProviderError;

/// Parses the JSON data of stream event number `n` (E002 when it is not JSON).
pub fn event_json(data: &str, n: usize) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        ProviderError::Malformed(format!(
            "invalid JSON in stream event {n}: {e}: {}",
            preview(data)
        ))
    })
}

/// An API error object (`{"type"|"code", "message"}`) mapped to an error.
pub fn api_error(err: &Value, place: &str) -> ProviderError {
    let kind = err
        .get("type")
        .or_else(|| err.get("code"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    let text = format!("provider error in the {place}: {kind}: {message}");
    match kind.as_str() {
        "authentication_error"
        | "permission_error"
        | "invalid_api_key"
        | "not_found_error"
        | "invalid_request_error"
        | "model_not_found"
        | "request_too_large" => ProviderError::Permanent(text),
        "timeout" | "timeout_error" => ProviderError::Timeout(text),
        _ => ProviderError::Transient {
            message: text,
            retry_after_ms: None,
        },
    }
}

/// A token count a server reported, capped at 2^40 (no real call comes near; a hostile
/// number cannot overflow sums or the database's signed integers).
pub fn count_at(u: &Value, key: &str) -> u64 {
    u.get(key).and_then(Value::as_u64).unwrap_or(0).min(1 << 40)
}

/// The start of a payload (at most 80 characters, cut at a word), quoted, for error
/// messages.
pub fn preview(s: &str) -> String {
    format!("{:?}", crate::base::text::cut::cut_chars(s, 80))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_map_to_codes() {
        let e = api_error(
            &serde_json::json!({"type": "overloaded_error", "message": "busy"}),
            "stream",
        );
        assert!(matches!(e, ProviderError::Transient { .. }));
        let e = api_error(
            &serde_json::json!({"type": "authentication_error", "message": "no"}),
            "stream",
        );
        assert!(matches!(e, ProviderError::Permanent(_)));
    }
}
