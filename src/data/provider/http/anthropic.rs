//! The Anthropic Messages API: request body, streamed events (`message_start`,
//! `content_block_start/delta/stop`, `message_delta`, `message_stop`, `ping`, `error`)
//! and content blocks (text, thinking, tool_use), and whole answers.

use serde_json::{json, Value};

use super::emit::Emit;
use super::wire::{api_error, count_at, event_json};
use crate::base::protocol::messages::{ContentBlockType, MessageType, ReactTurns};
use crate::base::protocol::AgentRequest;
use crate::data::provider::profile::ProviderProfile;
use crate::data::provider::{ProviderError, ProviderOutput, ToolCall, Usage};

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
        body["max_tokens"] = json!(request
            .constraints
            .max_tokens
            .saturating_add(profile.thinking_budget));
    } else {
        body["temperature"] = json!(request.constraints.temperature.clamp(0.0, 1.0));
    }
    if let Some(react) = request.react() {
        add_react(&mut body, &react);
    }
    body
}

/// The tools (`tools[]` with `input_schema`) and the loop's turns as content blocks:
/// text and `tool_use` for the assistant, `tool_result` for the user (thinking is not
/// sent back: it would need the signature the API gave it).
fn add_react(body: &mut Value, react: &ReactTurns) {
    if !react.tools.is_empty() {
        body["tools"] = react
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
    }
    let Some(messages) = body["messages"].as_array_mut() else {
        return;
    };
    for turn in &react.turns {
        let role = match turn.role {
            MessageType::Assistant => "assistant",
            MessageType::User | MessageType::System => "user",
        };
        let content: Vec<Value> = turn
            .content
            .iter()
            .filter_map(|b| match b.block_type {
                ContentBlockType::Text => Some(json!({"type": "text", "text": b.text})),
                ContentBlockType::ToolUse => Some(json!({
                    "type": "tool_use", "id": b.id, "name": b.name, "input": b.input_json(),
                })),
                ContentBlockType::ToolResult => Some(json!({
                    "type": "tool_result", "tool_use_id": b.tool_use_id,
                    "content": b.result_text(), "is_error": b.is_error,
                })),
                ContentBlockType::Thinking => None,
            })
            .collect();
        if !content.is_empty() {
            messages.push(json!({"role": role, "content": content}));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Block {
    Text,
    Thinking,
    Tool(usize),
    /// The structured-output `answer` tool: its input is the answer's text.
    Answer,
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
        let v = event_json(data, self.events)?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "message_start" => self.message_start(&v, out),
            "content_block_start" => {
                let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                let b = v.get("content_block").cloned().unwrap_or(Value::Null);
                let block = start_block(&b, emit, out);
                self.blocks.push((index, block));
            }
            "content_block_delta" => self.block_delta(&v, emit, out)?,
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
                self.default_tool_inputs(out);
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

    /// `message_start`: the model, and the usage so far.
    fn message_start(&mut self, v: &Value, out: &mut ProviderOutput) {
        let m = v.get("message");
        if let Some(model) = m.and_then(|m| m.get("model")).and_then(Value::as_str) {
            out.model = Some(model.to_string());
        }
        if let Some(u) = m.and_then(|m| m.get("usage")) {
            self.take_usage(u);
        }
    }

    /// `content_block_delta`: more of a started block's text, thinking or tool input
    /// (an error for a block that never started).
    fn block_delta(
        &self,
        v: &Value,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<(), ProviderError> {
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
            (Block::Answer, Some("input_json_delta")) => emit.text(&str_of(&d, "partial_json")),
            (Block::Tool(t), Some("input_json_delta")) => {
                out.tool_calls[t]
                    .arguments
                    .push_str(&str_of(&d, "partial_json"));
            }
            _ => {}
        }
        Ok(())
    }

    /// A tool_use block streamed with no input has input `{}` (as in whole answers).
    fn default_tool_inputs(&self, out: &mut ProviderOutput) {
        for (_, b) in &self.blocks {
            if let Block::Tool(t) = b {
                if out.tool_calls[*t].arguments.is_empty() {
                    out.tool_calls[*t].arguments = "{}".into();
                }
            }
        }
    }

    /// Called when the stream ends without `message_stop`: never complete.
    pub fn ended(&mut self, out: &mut ProviderOutput) -> bool {
        if self.saw_usage {
            out.usage = Some(self.usage);
        }
        false
    }

    fn take_usage(&mut self, u: &Value) {
        if u.get("input_tokens").and_then(Value::as_u64).is_some() {
            let cached = count_at(u, "cache_read_input_tokens");
            self.usage.prompt_tokens =
                count_at(u, "input_tokens") + cached + count_at(u, "cache_creation_input_tokens");
            self.usage.cached_prompt_tokens = cached;
            self.saw_usage = true;
        }
        if u.get("output_tokens").and_then(Value::as_u64).is_some() {
            self.usage.completion_tokens = count_at(u, "output_tokens");
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
            // The structured-output `answer` tool's input is the answer's text.
            Some("tool_use") if str_of(b, "name") == super::structured::ANSWER_TOOL => {
                emit.text(&b.get("input").map(Value::to_string).unwrap_or_default())
            }
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

/// `content_block_start`: which block `b` is, its first text or thinking passed on, a
/// tool call begun for a `tool_use` block (other than the structured-output answer).
fn start_block(b: &Value, emit: &mut Emit<'_>, out: &mut ProviderOutput) -> Block {
    match b.get("type").and_then(Value::as_str) {
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
        Some("tool_use")
            if b.get("name").and_then(Value::as_str) == Some(super::structured::ANSWER_TOOL) =>
        {
            Block::Answer
        }
        Some("tool_use") => {
            out.tool_calls.push(ToolCall {
                id: str_of(b, "id"),
                name: str_of(b, "name"),
                arguments: String::new(),
            });
            Block::Tool(out.tool_calls.len() - 1)
        }
        _ => Block::Other,
    }
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::provider::http::redact::TextRedactor;
    use crate::data::provider::ChunkSink;

    struct Text(String);
    impl ChunkSink for Text {
        fn chunk(&mut self, t: &str) {
            self.0.push_str(t);
        }
    }

    #[test]
    fn blocks_of_every_kind_stream_into_place() {
        let events = [
            r#"{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi "}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"there"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu1","name":"get_now","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"tz\""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":":\"UTC\"}"}}"#,
            r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"tu2","name":"noargs","input":{}}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let mut sink = Text(String::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
        let mut out = ProviderOutput::default();
        let mut s = Stream::default();
        let mut done = false;
        for e in events {
            done = s.event(e, &mut emit, &mut out).expect("valid");
        }
        assert!(done);
        drop(emit);
        assert_eq!(sink.0, "Hi there");
        assert_eq!(out.thinking, "let me see");
        assert_eq!(out.model.as_deref(), Some("claude-x"));
        assert_eq!(out.finish_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            out.usage,
            Some(Usage {
                prompt_tokens: 25,
                completion_tokens: 42,
                cached_prompt_tokens: 5,
            })
        );
        assert_eq!(out.tool_calls[0].arguments, r#"{"tz":"UTC"}"#);
        assert_eq!(out.tool_calls[1].arguments, "{}");
    }

    #[test]
    fn errors_and_deltas_for_unknown_blocks() {
        let mut sink = Text(String::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
        let mut out = ProviderOutput::default();
        let mut s = Stream::default();
        let e = s.event(
            r#"{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}"#,
            &mut emit,
            &mut out,
        );
        assert!(matches!(e, Err(ProviderError::Malformed(m)) if m.contains("never started")));
        let e = s.event(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            &mut emit,
            &mut out,
        );
        assert!(matches!(e, Err(ProviderError::Transient { .. })));
        assert!(!s.ended(&mut out));
    }
}
