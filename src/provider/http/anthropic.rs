//! The Anthropic Messages API: request body, streamed events (`message_start`,
//! `content_block_start/delta/stop`, `message_delta`, `message_stop`, `ping`, `error`)
//! and content blocks (text, thinking, tool_use), and whole answers.

use serde_json::{json, Value};

use super::openai::preview;
use super::{api_error, Emit};
use crate::protocol::AgentRequest;
use crate::provider::profile::ProviderProfile;
use crate::provider::{ProviderError, ProviderOutput, ToolCall, Usage};

/// `{base_url}/v1/messages` (a base_url already ending in `/v1` is accepted as is).
pub fn url(profile: &ProviderProfile) -> String {
    if profile.base_url.ends_with("/v1") {
        format!("{}/messages", profile.base_url)
    } else {
        format!("{}/v1/messages", profile.base_url)
    }
}

/// The request body.
pub fn body(request: &AgentRequest, user_text: &str, profile: &ProviderProfile) -> Value {
    let mut body = json!({
        "model": profile.model,
        "system": request.system_prompt,
        "messages": [{"role": "user", "content": user_text}],
        "max_tokens": request.constraints.max_tokens.max(1),
        "stream": profile.stream,
    });
    if profile.thinking_budget > 0 {
        // Extended thinking takes its budget out of max_tokens and fixes temperature.
        body["thinking"] = json!({"type": "enabled", "budget_tokens": profile.thinking_budget});
        body["max_tokens"] = json!(request.constraints.max_tokens + profile.thinking_budget);
    } else {
        body["temperature"] = json!(request.constraints.temperature.clamp(0.0, 1.0));
    }
    body
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Block {
    Text,
    Thinking,
    Tool(usize),
    Other,
}

/// State of one streamed answer.
#[derive(Debug, Default)]
pub struct Stream {
    blocks: Vec<(usize, Block)>,
    usage: Usage,
    saw_usage: bool,
    events: usize,
}

impl Stream {
    /// Handles one SSE event's data; `Ok(true)` at `message_stop`.
    pub fn event(
        &mut self,
        data: &str,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<bool, ProviderError> {
        self.events += 1;
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Malformed(format!(
                "invalid JSON in stream event {}: {e}: {}",
                self.events,
                preview(data)
            ))
        })?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "message_start" => {
                let m = v.get("message");
                if let Some(model) = m.and_then(|m| m.get("model")).and_then(Value::as_str) {
                    out.model = Some(model.to_string());
                }
                if let Some(u) = m.and_then(|m| m.get("usage")) {
                    self.take_usage(u);
                }
            }
            "content_block_start" => {
                let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                let b = v.get("content_block").cloned().unwrap_or(Value::Null);
                let block = match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = b.get("text").and_then(Value::as_str) {
                            emit.text(t);
                        }
                        Block::Text
                    }
                    Some("thinking") => {
                        if let Some(t) = b.get("thinking").and_then(Value::as_str) {
                            out.thinking.push_str(t);
                        }
                        Block::Thinking
                    }
                    Some("tool_use") => {
                        out.tool_calls.push(ToolCall {
                            id: str_of(&b, "id"),
                            name: str_of(&b, "name"),
                            arguments: String::new(),
                        });
                        Block::Tool(out.tool_calls.len() - 1)
                    }
                    _ => Block::Other,
                };
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                let block = self
                    .blocks
                    .iter()
                    .rev()
                    .find(|(i, _)| *i == index)
                    .map(|(_, b)| *b)
                    .ok_or_else(|| {
                        ProviderError::Malformed(format!(
                            "stream event {}: delta for content block {index}, which never started",
                            self.events
                        ))
                    })?;
                let d = v.get("delta").cloned().unwrap_or(Value::Null);
                match (block, d.get("type").and_then(Value::as_str)) {
                    (Block::Text, Some("text_delta")) => emit.text(&str_of(&d, "text")),
                    (Block::Thinking, Some("thinking_delta")) => {
                        out.thinking.push_str(&str_of(&d, "thinking"))
                    }
                    (Block::Tool(t), Some("input_json_delta")) => {
                        out.tool_calls[t]
                            .arguments
                            .push_str(&str_of(&d, "partial_json"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    out.finish_reason = Some(r.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.take_usage(u);
                }
            }
            "message_stop" => {
                if self.saw_usage {
                    out.usage = Some(self.usage);
                }
                return Ok(true);
            }
            "error" => return Err(api_error(v.get("error").unwrap_or(&Value::Null), "stream")),
            _ => {}
        }
        Ok(false)
    }

    /// Called when the stream ends without `message_stop`: never complete.
    pub fn ended(&mut self, out: &mut ProviderOutput) -> bool {
        if self.saw_usage {
            out.usage = Some(self.usage);
        }
        false
    }

    fn take_usage(&mut self, u: &Value) {
        if let Some(n) = u.get("input_tokens").and_then(Value::as_u64) {
            self.usage.prompt_tokens = n
                + u.get("cache_read_input_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                + u.get("cache_creation_input_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
            self.saw_usage = true;
        }
        if let Some(n) = u.get("output_tokens").and_then(Value::as_u64) {
            self.usage.completion_tokens = n;
            self.saw_usage = true;
        }
    }
}

/// Reads a whole (non-streamed) answer.
pub fn whole(
    v: &Value,
    emit: &mut Emit<'_>,
    out: &mut ProviderOutput,
) -> Result<(), ProviderError> {
    if v.get("type").and_then(Value::as_str) == Some("error") {
        return Err(api_error(v.get("error").unwrap_or(&Value::Null), "answer"));
    }
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::Malformed("the answer has no `content` array".into()))?;
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => emit.text(&str_of(b, "text")),
            Some("thinking") => out.thinking.push_str(&str_of(b, "thinking")),
            Some("tool_use") => out.tool_calls.push(ToolCall {
                id: str_of(b, "id"),
                name: str_of(b, "name"),
                arguments: b.get("input").map(Value::to_string).unwrap_or_default(),
            }),
            _ => {}
        }
    }
    out.finish_reason = v
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    out.model = v.get("model").and_then(Value::as_str).map(str::to_string);
    let mut s = Stream::default();
    if let Some(u) = v.get("usage") {
        s.take_usage(u);
    }
    if s.saw_usage {
        out.usage = Some(s.usage);
    }
    Ok(())
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}
