//! The OpenAI-compatible chat completions API: request body, streamed chunks
//! (`choices[0].delta.content` / `tool_calls`, `finish_reason`, `usage`, `[DONE]`) and
//! whole answers. Spoken by OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM, OpenRouter.

use serde_json::{json, Value};

use super::emit::Emit;
use super::openai_chunk;
use super::wire::{api_error, event_json};
use crate::base::protocol::AgentRequest;
use crate::data::provider::profile::ProviderProfile;
use crate::data::provider::{ProviderError, ProviderOutput, ToolCall, Usage};

pub use super::wire::{count_at, preview};

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
    if let Some(react) = request.react() {
        super::openai_react::add_react(&mut body, &react);
    }
    // Forced JSON (an eval's judge): the server's JSON mode.
    if request.extra.get("force_json") == Some(&json!(true)) {
        body["response_format"] = json!({"type": "json_object"});
    }
    body
}

/// State of one streamed answer.
#[derive(Debug, Default)]
pub struct Stream {
    tools: Vec<ToolCall>,
    events: usize,
    saw_usage: bool,
}

/// Whether a tool call is the structured-output `answer` tool (its arguments are the
/// answer's text).
fn is_answer(t: &ToolCall) -> bool {
    t.name == super::structured::ANSWER_TOOL
}

impl Stream {
    /// Handles one SSE event's data; `Ok(true)` at `[DONE]`.
    pub fn event(
        &mut self,
        data: &str,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<bool, ProviderError> {
        self.event_by(data, emit, out, true)
    }

    /// One event's data, read as a typed chunk first when `typed` (else, and for any
    /// chunk of another shape, through a JSON tree).
    fn event_by(
        &mut self,
        data: &str,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
        typed: bool,
    ) -> Result<bool, ProviderError> {
        self.events += 1;
        if data.trim() == "[DONE]" {
            out.tool_calls = self.take_tools();
            return Ok(true);
        }
        match typed.then(|| openai_chunk::read(data)).flatten() {
            Some(chunk) => self.chunk(chunk, emit, out)?,
            None => self.value(data, emit, out)?,
        }
        Ok(false)
    }

    /// A chunk of the usual shape, read without a JSON tree.
    fn chunk(
        &mut self,
        c: openai_chunk::Chunk<'_>,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<(), ProviderError> {
        if let Some(m) = c.model {
            out.model.get_or_insert_with(|| m.0.into_owned());
        }
        if let Some(u) = c.usage {
            out.usage = Some(Usage {
                prompt_tokens: capped(u.0.prompt_tokens),
                completion_tokens: capped(u.0.completion_tokens),
                cached_prompt_tokens: capped(
                    u.0.prompt_tokens_details.and_then(|d| d.0.cached_tokens),
                ),
            });
            self.saw_usage = true;
        }
        let Some(choice) = c.choices.and_then(|c| c.0) else {
            return Ok(());
        };
        let choice = choice.0;
        if let Some(delta) = choice.delta {
            let delta = delta.0;
            for t in [&delta.reasoning_content, &delta.reasoning]
                .into_iter()
                .flatten()
            {
                out.thinking.push_str(&t.0);
            }
            if let Some(text) = delta.content {
                emit.text(&text.0);
            }
            for call in delta.tool_calls.into_iter().flatten() {
                let call = call.0;
                let f = call.function.map(|f| f.0);
                let (name, arguments) = f.map_or((None, None), |f| (f.name, f.arguments));
                self.tool_delta(
                    emit,
                    call.index,
                    call.id.as_ref().map(|t| &*t.0),
                    name.as_ref().map(|t| &*t.0),
                    arguments.as_ref().map(|t| &*t.0),
                )?;
            }
        }
        if let Some(r) = choice.finish_reason {
            out.finish_reason = Some(r.0.into_owned());
        }
        Ok(())
    }

    /// [`Stream::event`] through the general path alone, for tests that compare both.
    #[cfg(test)]
    pub(super) fn event_general(
        &mut self,
        data: &str,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<bool, ProviderError> {
        self.event_by(data, emit, out, false)
    }

    /// Any other chunk, read as a JSON tree (the general path; every chunk reads the
    /// same through it as through the fast one).
    fn value(
        &mut self,
        data: &str,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
    ) -> Result<(), ProviderError> {
        let v = event_json(data, self.events)?;
        if let Some(err) = v.get("error") {
            return Err(api_error(err, "stream"));
        }
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            out.model.get_or_insert_with(|| m.to_string());
        }
        if let Some(u) = usage(&v) {
            out.usage = Some(u);
            self.saw_usage = true;
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            out.thinking.push_str(&reasoning_of(delta));
            if let Some(text) = content_text(delta.get("content")) {
                emit.text(&text);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for c in calls {
                    let f = c.get("function");
                    self.tool_delta(
                        emit,
                        c.get("index").and_then(Value::as_u64),
                        field_str(Some(c), "id"),
                        field_str(f, "name"),
                        arguments_of(f).as_deref(),
                    )?;
                }
            }
            // The legacy form: one call, no id, no index.
            if let Some(f) = delta.get("function_call").filter(|f| f.is_object()) {
                let name = field_str(Some(f), "name");
                let index = match (name, self.tools.len()) {
                    (Some(_), n) => n as u64,
                    (None, 0) => 0,
                    (None, n) => n as u64 - 1,
                };
                self.tool_delta(
                    emit,
                    Some(index),
                    None,
                    name,
                    arguments_of(Some(f)).as_deref(),
                )?;
            }
        }
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            out.finish_reason = Some(r.to_string());
        }
        Ok(())
    }

    /// One piece of a tool call: `index` says which (servers that omit it start a new
    /// call with each new id).
    fn tool_delta(
        &mut self,
        emit: &mut Emit<'_>,
        index: Option<u64>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) -> Result<(), ProviderError> {
        let i = match index {
            Some(i) => i as usize,
            None => match (id, self.tools.last()) {
                (Some(id), Some(last)) if last.id != id => self.tools.len(),
                (_, None) => 0,
                _ => self.tools.len() - 1,
            },
        };
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
        if let Some(id) = id {
            t.id = id.to_string();
        }
        if let Some(n) = name {
            t.name.push_str(n);
        }
        if let Some(a) = arguments {
            // The structured-output `answer` tool: its arguments are the answer, as text.
            if is_answer(t) {
                emit.text(a);
            } else {
                t.arguments.push_str(a);
            }
        }
        Ok(())
    }

    /// Called when the stream ends without `[DONE]`: complete only if both the finish
    /// reason and the usage chunk (asked for, and sent last) arrived.
    pub fn ended(&mut self, out: &mut ProviderOutput) -> bool {
        out.tool_calls = self.take_tools();
        out.finish_reason.is_some() && self.saw_usage
    }

    /// The tool calls, the `answer` tool's left out (its arguments went out as text).
    fn take_tools(&mut self) -> Vec<ToolCall> {
        std::mem::take(&mut self.tools)
            .into_iter()
            .filter(|t| !is_answer(t))
            .collect()
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
    if let Some(m) = msg {
        out.thinking.push_str(&reasoning_of(m));
    }
    if let Some(text) = content_text(msg.and_then(|m| m.get("content"))) {
        emit.text(&text);
    }
    for c in msg
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let call = ToolCall {
            id: str_at(c, &["id"]),
            name: str_at(c, &["function", "name"]),
            arguments: arguments_of(c.get("function")).unwrap_or_default(),
        };
        if is_answer(&call) {
            emit.text(&call.arguments);
        } else {
            out.tool_calls.push(call);
        }
    }
    // The legacy form: one `function_call`, no id.
    if let Some(f) = msg
        .and_then(|m| m.get("function_call"))
        .filter(|f| f.is_object())
    {
        out.tool_calls.push(ToolCall {
            id: String::new(),
            name: str_at(f, &["name"]),
            arguments: arguments_of(Some(f)).unwrap_or_default(),
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

/// A message's `content`: a string, or an array of parts (`{type: text, text}`, or bare
/// strings) joined; `None` when it holds no text.
fn content_text(v: Option<&Value>) -> Option<std::borrow::Cow<'_, str>> {
    match v? {
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o
                        .get("text")
                        .and_then(Value::as_str)
                        .filter(|_| o.get("type").and_then(Value::as_str) != Some("reasoning")),
                    _ => None,
                })
                .collect();
            (!text.is_empty()).then_some(std::borrow::Cow::Owned(text))
        }
        _ => None,
    }
}

/// The reasoning a message or delta carries apart from its answer
/// (`reasoning_content`, `reasoning`).
fn reasoning_of(m: &Value) -> String {
    ["reasoning_content", "reasoning"]
        .iter()
        .filter_map(|k| m.get(*k).and_then(Value::as_str))
        .collect()
}

/// A function's `arguments`: the JSON text as written, or an object (some servers send
/// one) as its JSON text.
fn arguments_of(f: Option<&Value>) -> Option<String> {
    match f?.get("arguments")? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// `v[k]` when it is a string.
fn field_str<'v>(v: Option<&'v Value>, k: &str) -> Option<&'v str> {
    v.and_then(|v| v.get(k)).and_then(Value::as_str)
}

/// A count of the fast path, capped as [`count_at`] caps it.
fn capped(n: Option<u64>) -> u64 {
    n.unwrap_or(0).min(1 << 40)
}

fn usage(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        prompt_tokens: count_at(u, "prompt_tokens"),
        completion_tokens: count_at(u, "completion_tokens"),
        cached_prompt_tokens: u
            .get("prompt_tokens_details")
            .map_or(0, |d| count_at(d, "cached_tokens")),
    })
}

fn str_at(v: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
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

    fn feed(events: &[&str]) -> (Result<bool, ProviderError>, String, ProviderOutput, Stream) {
        let mut sink = Text(String::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
        let mut out = ProviderOutput::default();
        let mut s = Stream::default();
        let mut last = Ok(false);
        for e in events {
            last = s.event(e, &mut emit, &mut out);
            if !matches!(last, Ok(false)) {
                break;
            }
        }
        drop(emit);
        (last, sink.0, out, s)
    }

    #[test]
    fn text_tool_calls_finish_and_usage() {
        let (r, text, out, _) = feed(&[
            r#"{"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"get_now","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"tz\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"UTC\"}"}},{"index":1,"id":"c2","function":{"name":"calc","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7}}"#,
            "[DONE]",
        ]);
        assert_eq!(r, Ok(true));
        assert_eq!(text, "Hello");
        assert_eq!(out.model.as_deref(), Some("gpt-x"));
        assert_eq!(out.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            out.usage,
            Some(Usage {
                prompt_tokens: 12,
                completion_tokens: 7,
                cached_prompt_tokens: 0,
            })
        );
        assert_eq!(out.tool_calls.len(), 2);
        assert_eq!(out.tool_calls[0].name, "get_now");
        assert_eq!(out.tool_calls[0].arguments, r#"{"tz":"UTC"}"#);
        assert_eq!(out.tool_calls[1].id, "c2");
    }

    #[test]
    fn tool_calls_without_index_split_by_id() {
        let (_, _, _, mut s) = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
        ]);
        let mut out = ProviderOutput::default();
        s.ended(&mut out);
        assert_eq!(out.tool_calls.len(), 2);
        assert_eq!(
            (
                out.tool_calls[1].id.as_str(),
                out.tool_calls[1].name.as_str()
            ),
            ("b", "g")
        );
    }

    #[test]
    fn errors_bad_json_and_missing_end_markers() {
        let (r, ..) = feed(&[r#"{"error":{"type":"server_error","message":"boom"}}"#]);
        assert!(matches!(r, Err(ProviderError::Transient { .. })));
        let (r, ..) = feed(&["{not json"]);
        assert!(matches!(r, Err(ProviderError::Malformed(m)) if m.contains("stream event 1")));
        // A finish reason without the usage chunk that was asked for: truncated.
        let (_, _, mut out, mut s) =
            feed(&[r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#]);
        assert!(!s.ended(&mut out));
        let (_, _, mut out, mut s) = feed(&[
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#,
        ]);
        assert!(s.ended(&mut out));
    }

    #[test]
    fn whole_answers() {
        let mut sink = Text(String::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
        let mut out = ProviderOutput::default();
        let v: Value = serde_json::from_str(r#"{"model":"m","choices":[{"message":{"content":"hi","tool_calls":[{"id":"t","function":{"name":"n","arguments":"{}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#).expect("json");
        whole(&v, &mut emit, &mut out).expect("ok");
        drop(emit);
        assert_eq!(sink.0, "hi");
        assert_eq!(out.tool_calls[0].name, "n");
        assert_eq!(out.usage.map(|u| u.prompt_tokens), Some(3));
        let mut out = ProviderOutput::default();
        let mut sink = Text(String::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
        let e = whole(&serde_json::json!({"choices": []}), &mut emit, &mut out);
        assert!(matches!(e, Err(ProviderError::Malformed(_))));
    }

    #[test]
    fn cached_prompt_tokens_are_read_streamed_and_whole_in_any_key_order() {
        // The usage chunk before the text, details before the counts, an extra field.
        let (r, _, out, _) = feed(&[
            r#"{"usage":{"prompt_tokens_details":{"audio_tokens":0,"cached_tokens":1024},"completion_tokens":9,"prompt_tokens":2048},"choices":[]}"#,
            r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(r, Ok(true));
        let u = out.usage.expect("usage");
        assert_eq!((u.prompt_tokens, u.cached_prompt_tokens), (2048, 1024));
        let mut sink = Text(String::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
        let mut out = ProviderOutput::default();
        let v = serde_json::json!({"choices":[{"message":{"content":"hi"}}],
            "usage":{"prompt_tokens":30,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":20}}});
        whole(&v, &mut emit, &mut out).expect("ok");
        assert_eq!(out.usage.map(|u| u.cached_prompt_tokens), Some(20));
    }
}
