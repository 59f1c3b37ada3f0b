//! What the mock server says: the answer text (a valid AgentResponse built by the
//! simulated provider from the request), framed as OpenAI or Anthropic SSE events or
//! whole JSON bodies.

use serde_json::{json, Value};

use crate::protocol::{AgentRequest, UserPrompt};
use crate::provider::simulated::{split_chunks, Fault};
use crate::provider::SimulatedProvider;
use crate::tokens::TokenCounter;

/// Which API a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `/chat/completions`.
    Openai,
    /// `/v1/messages`.
    Anthropic,
}

/// A parsed call.
pub struct Call {
    /// API.
    pub api: Api,
    /// The model asked for.
    pub model: String,
    /// Streaming asked for.
    pub stream: bool,
    /// System and user text.
    pub prompt: String,
    /// The answer text.
    pub text: String,
}

/// Reads a request body and builds the answer text.
pub fn call(api: Api, body: &[u8], task: &str, invocation: &str, sim: &SimulatedProvider) -> Call {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let model = v["model"].as_str().unwrap_or("mock").to_string();
    let stream = v["stream"].as_bool().unwrap_or(false);
    let (system, user) = match api {
        Api::Openai => {
            let msgs = v["messages"].as_array().cloned().unwrap_or_default();
            let of = |role: &str| {
                msgs.iter()
                    .filter(|m| m["role"] == role)
                    .filter_map(|m| m["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            (of("system"), of("user"))
        }
        Api::Anthropic => (
            v["system"].as_str().unwrap_or("").to_string(),
            v["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        ),
    };
    let text = match serde_json::from_str::<UserPrompt>(&user) {
        // `plexus ping`.
        Ok(user_prompt) if user_prompt.instruction == "ping" => "pong".to_string(),
        Ok(user_prompt) => {
            let request = AgentRequest {
                invocation_id: invocation.to_string(),
                agent: String::new(),
                task_id: task.to_string(),
                plan_id: String::new(),
                system_prompt: system.clone(),
                user_prompt,
                constraints: Default::default(),
                extra: Default::default(),
            };
            let mut rng = fastrand::Rng::with_seed(
                task.bytes()
                    .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
            );
            sim.answer(&request, Fault::None, &mut rng)
        }
        Err(_) => "pong".to_string(),
    };
    Call {
        api,
        model,
        stream,
        prompt: format!("{system}{user}"),
        text,
    }
}

/// Prompt and completion token counts (cl100k), scaled by `usage_factor`.
pub fn usage(call: &Call, text: &str, usage_factor: f64) -> (u64, u64) {
    let counter = TokenCounter::default();
    let p = counter.count(&call.prompt) as f64 * usage_factor;
    let c = counter.count(text) as f64 * usage_factor;
    (p.round() as u64, c.round() as u64)
}

/// The SSE events of a streamed answer: opening events, one per piece, closing events.
pub fn sse_events(
    call: &Call,
    pieces: &[&str],
    usage: (u64, u64),
) -> (Vec<String>, Vec<String>, Vec<String>) {
    match call.api {
        Api::Openai => {
            let id = "chatcmpl-mock";
            let chunk = |delta: Value, finish: Value| {
                sse(
                    None,
                    &json!({"id": id, "object": "chat.completion.chunk", "model": call.model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            let open = vec![chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            )];
            let body = pieces
                .iter()
                .map(|p| chunk(json!({"content": p}), Value::Null))
                .collect();
            let close = vec![
                chunk(json!({}), json!("stop")),
                sse(
                    None,
                    &json!({"id": id, "object": "chat.completion.chunk", "model": call.model, "choices": [],
                        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1}}),
                ),
                "data: [DONE]\n\n".to_string(),
            ];
            (open, body, close)
        }
        Api::Anthropic => {
            let open = vec![
                sse(
                    Some("message_start"),
                    &json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
                        "role": "assistant", "model": call.model, "content": [],
                        "usage": {"input_tokens": usage.0, "output_tokens": 1}}}),
                ),
                sse(
                    Some("content_block_start"),
                    &json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
                ),
                sse(Some("ping"), &json!({"type": "ping"})),
            ];
            let body = pieces
                .iter()
                .map(|p| {
                    sse(
                        Some("content_block_delta"),
                        &json!({"type": "content_block_delta", "index": 0,
                            "delta": {"type": "text_delta", "text": p}}),
                    )
                })
                .collect();
            let close = vec![
                sse(
                    Some("content_block_stop"),
                    &json!({"type": "content_block_stop", "index": 0}),
                ),
                sse(
                    Some("message_delta"),
                    &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": usage.1}}),
                ),
                sse(Some("message_stop"), &json!({"type": "message_stop"})),
            ];
            (open, body, close)
        }
    }
}

/// A whole (non-streamed) answer body.
pub fn whole(call: &Call, text: &str, usage: (u64, u64)) -> String {
    match call.api {
        Api::Openai => json!({
            "id": "chatcmpl-mock", "object": "chat.completion", "model": call.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1},
        }),
        Api::Anthropic => json!({
            "id": "msg_mock", "type": "message", "role": "assistant", "model": call.model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": usage.0, "output_tokens": usage.1},
        }),
    }
    .to_string()
}

/// An error event in the stream.
pub fn stream_error(api: Api) -> String {
    match api {
        Api::Openai => sse(
            None,
            &json!({"error": {"type": "server_error", "message": "The server had an error while processing your request (mock)"}}),
        ),
        Api::Anthropic => sse(
            Some("error"),
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded (mock)"}}),
        ),
    }
}

/// Splits the text into `n` pieces on character boundaries.
pub fn pieces(text: &str, n: usize) -> Vec<&str> {
    split_chunks(text, n.max(1))
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}
