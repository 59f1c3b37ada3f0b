//! The OpenAI-compatible chat completions API: request body, streamed chunks
//! (`choices[0].delta.content` / `tool_calls`, `finish_reason`, `usage`, `[DONE]`) and
//! whole answers. Spoken by OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM, OpenRouter.

use serde_json::{json, Value};

use super::{api_error, Emit};
use crate::protocol::AgentRequest;
use crate::provider::profile::ProviderProfile;
use crate::provider::{ProviderError, ProviderOutput, ToolCall, Usage};

/// `{base_url}/chat/completions`.
pub fn url(profile: &ProviderProfile) -> String {
    format!("{}/chat/completions", profile.base_url)
}

/// The request body.
pub fn body(request: &AgentRequest, user_text: &str, profile: &ProviderProfile) -> Value {
    let mut body = json!({
        "model": profile.model,
        "messages": [
            {"role": "system", "content": request.system_prompt},
            {"role": "user", "content": user_text},
        ],
        "temperature": request.constraints.temperature,
        "stream": profile.stream,
    });
    body[profile.max_tokens_param.as_str()] = json!(request.constraints.max_tokens);
    if profile.stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

/// State of one streamed answer.
#[derive(Debug, Default)]
pub struct Stream {
    tools: Vec<ToolCall>,
    events: usize,
}

impl Stream {
    /// Handles one SSE event's data; `Ok(true)` at `[DONE]`.
    pub fn event(
        &mut self,
        data: &str,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<bool, ProviderError> {
        self.events += 1;
        if data.trim() == "[DONE]" {
            out.tool_calls = std::mem::take(&mut self.tools);
            return Ok(true);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Malformed(format!(
                "invalid JSON in stream event {}: {e}: {}",
                self.events,
                preview(data)
            ))
        })?;
        if let Some(err) = v.get("error") {
            return Err(api_error(err, "stream"));
        }
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            out.model.get_or_insert_with(|| m.to_string());
        }
        if let Some(u) = usage(&v) {
            out.usage = Some(u);
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return Ok(false);
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                emit.text(text);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for c in calls {
                    let i = c.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                    if i > 1024 {
                        return Err(ProviderError::Malformed(format!(
                            "tool call index {i} in stream event {}",
                            self.events
                        )));
                    }
                    if self.tools.len() <= i {
                        self.tools.resize(i + 1, ToolCall::default());
                    }
                    let t = &mut self.tools[i];
                    if let Some(id) = c.get("id").and_then(Value::as_str) {
                        t.id = id.to_string();
                    }
                    if let Some(f) = c.get("function") {
                        if let Some(n) = f.get("name").and_then(Value::as_str) {
                            t.name.push_str(n);
                        }
                        if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                            t.arguments.push_str(a);
                        }
                    }
                }
            }
        }
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            out.finish_reason = Some(r.to_string());
        }
        Ok(false)
    }

    /// Called when the stream ends without `[DONE]`: complete if a finish_reason came.
    pub fn ended(&mut self, out: &mut ProviderOutput) -> bool {
        out.tool_calls = std::mem::take(&mut self.tools);
        out.finish_reason.is_some()
    }
}

/// Reads a whole (non-streamed) answer.
pub fn whole(
    v: &Value,
    emit: &mut Emit<'_>,
    out: &mut ProviderOutput,
) -> Result<(), ProviderError> {
    if let Some(err) = v.get("error") {
        return Err(api_error(err, "answer"));
    }
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| ProviderError::Malformed("the answer has no `choices[0]`".into()))?;
    let msg = choice.get("message");
    if let Some(text) = msg.and_then(|m| m.get("content")).and_then(Value::as_str) {
        emit.text(text);
    }
    for c in msg
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.tool_calls.push(ToolCall {
            id: str_at(c, &["id"]),
            name: str_at(c, &["function", "name"]),
            arguments: str_at(c, &["function", "arguments"]),
        });
    }
    out.finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    out.model = v.get("model").and_then(Value::as_str).map(str::to_string);
    out.usage = usage(v);
    Ok(())
}

fn usage(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        prompt_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        completion_tokens: u
            .get("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    })
}

fn str_at(v: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The first 80 characters of a payload, for error messages.
pub fn preview(s: &str) -> String {
    let p: String = s.chars().take(80).collect();
    if p.len() < s.len() {
        format!("{p:?}…")
    } else {
        format!("{p:?}")
    }
}
