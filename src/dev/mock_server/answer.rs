//! What the mock server says: the answer text (a valid AgentResponse built by the
//! simulated provider from the request), framed as OpenAI or Anthropic SSE events or
//! whole JSON bodies.

use serde_json::{json, Value};

use crate::base::protocol::messages::{
    ContentBlock, Message, MessageType, ReactTurns, ToolDefinition,
};
use crate::base::protocol::{AgentRequest, UserPrompt};
use crate::data::provider::sim_react::{next_step, SimStep};
use crate::data::provider::simulated::{split_chunks, Fault};
use crate::data::provider::SimulatedProvider;
use crate::data::provider::ToolCall;

use super::script::fragments;
use crate::base::tokens::TokenCounter;

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
    /// The answer text (in a tool-using loop, the thought before the call).
    pub text: String,
    /// The tool calls of the answer (a step of a tool-using loop).
    pub tool_calls: Vec<ToolCall>,
    /// Pieces each call's arguments stream in (real servers send several).
    pub fragments: usize,
    /// The request forces the structured-output `answer` tool: the text goes out as
    /// that tool's input, as a server holding an answer to its schema sends it.
    pub answer_tool: bool,
}

/// Whether a request body forces the structured-output `answer` tool (Anthropic's
/// `tool_choice: {type: tool, name}`, OpenAI's `{type: function, function: {name}}`).
pub fn forces_answer_tool(v: &Value) -> bool {
    [
        &v["tool_choice"]["name"],
        &v["tool_choice"]["function"]["name"],
    ]
    .iter()
    .any(|n| n.as_str() == Some(crate::data::provider::http::structured::ANSWER_TOOL))
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
    // A step of a tool-using loop: the simulated model's thought and tool call.
    let react = react_of(api, &v);
    if let SimStep::Act { thought, call } = next_step(&react) {
        return Call {
            api,
            model,
            stream,
            prompt: format!("{system}{user}"),
            text: thought,
            tool_calls: vec![call],
            fragments: 2,
            answer_tool: false,
        };
    }
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
                response_schema: None,
            };
            let mut rng = fastrand::Rng::with_seed(
                task.bytes()
                    .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
            );
            sim.answer(&request, Fault::None, &mut rng)
        }
        Err(_) => "pong".to_string(),
    };
    // An answer held to its schema through a forced `answer` tool is the answer's JSON
    // object alone (the simulated model may write words around it).
    let answer_tool = forces_answer_tool(&v);
    let text = match (answer_tool, text.find('{'), text.rfind('}')) {
        (true, Some(a), Some(b)) if a < b => text[a..=b].to_string(),
        _ => text,
    };
    Call {
        api,
        model,
        stream,
        prompt: format!("{system}{user}"),
        text,
        tool_calls: Vec::new(),
        fragments: 2,
        answer_tool,
    }
}

/// The tools and the loop's turns of a request body, read back from the API's format.
fn react_of(api: Api, v: &Value) -> ReactTurns {
    let mut react = ReactTurns {
        tools: tools_of(api, v),
        ..ReactTurns::default()
    };
    let empty = Vec::new();
    let msgs = v["messages"].as_array().unwrap_or(&empty);
    // The turns after the first user message.
    let first_user = msgs.iter().position(|m| m["role"] == "user").unwrap_or(0);
    for m in msgs.iter().skip(first_user + 1) {
        let role = if m["role"] == "assistant" {
            MessageType::Assistant
        } else {
            MessageType::User
        };
        let content = match api {
            Api::Openai => openai_content(m),
            Api::Anthropic => anthropic_content(m),
        };
        // OpenAI sends one `tool` message per result: they join the turn before.
        match react.turns.last_mut() {
            Some(last) if last.role == MessageType::User && role == MessageType::User => {
                last.content.extend(content)
            }
            _ => react.turns.push(Message { role, content }),
        }
    }
    react
}

/// The tools a request body offers, but the structured-output tool.
fn tools_of(api: Api, v: &Value) -> Vec<ToolDefinition> {
    let mut tools = Vec::new();
    let empty = Vec::new();
    for t in v["tools"].as_array().unwrap_or(&empty) {
        let f = if api == Api::Openai {
            &t["function"]
        } else {
            t
        };
        // The structured-output tool is how an answer is given, not an action.
        if f["name"] == crate::data::provider::http::structured::ANSWER_TOOL {
            continue;
        }
        let schema = if api == Api::Openai {
            &f["parameters"]
        } else {
            &f["input_schema"]
        };
        tools.push(ToolDefinition {
            name: f["name"].as_str().unwrap_or_default().to_string(),
            description: f["description"].as_str().unwrap_or_default().to_string(),
            input_schema: schema.clone(),
        });
    }
    tools
}

/// The content of an OpenAI message: a tool's result, or text and tool calls.
fn openai_content(m: &Value) -> Vec<ContentBlock> {
    let mut content = Vec::new();
    if m["role"] == "tool" {
        let text = m["content"].as_str().unwrap_or_default();
        let id = m["tool_call_id"].as_str().unwrap_or_default();
        content.push(ContentBlock::tool_result(id, text, false));
    } else if let Some(t) = m["content"].as_str().filter(|t| !t.is_empty()) {
        content.push(ContentBlock::text(t));
    }
    let empty = Vec::new();
    for c in m["tool_calls"].as_array().unwrap_or(&empty) {
        let args = c["function"]["arguments"].as_str().unwrap_or("{}");
        content.push(ContentBlock::tool_use(
            c["id"].as_str().unwrap_or_default(),
            c["function"]["name"].as_str().unwrap_or_default(),
            serde_json::from_str(args).unwrap_or(Value::Null),
        ));
    }
    content
}

/// The content blocks of an Anthropic message: text, tool uses and tool results.
fn anthropic_content(m: &Value) -> Vec<ContentBlock> {
    let empty = Vec::new();
    let blocks = m["content"].as_array().unwrap_or(&empty);
    blocks
        .iter()
        .filter_map(|b| match b["type"].as_str() {
            Some("text") => Some(ContentBlock::text(b["text"].as_str().unwrap_or(""))),
            Some("tool_use") => Some(ContentBlock::tool_use(
                b["id"].as_str().unwrap_or_default(),
                b["name"].as_str().unwrap_or_default(),
                b["input"].clone(),
            )),
            Some("tool_result") => Some(ContentBlock::tool_result(
                b["tool_use_id"].as_str().unwrap_or_default(),
                b["content"].as_str().unwrap_or_default(),
                b["is_error"].as_bool().unwrap_or(false),
            )),
            _ => None,
        })
        .collect()
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
        Api::Openai => openai_events(call, pieces, usage),
        Api::Anthropic => anthropic_events(call, pieces, usage),
    }
}

/// [`sse_events`] in OpenAI's chat-completion chunks.
fn openai_events(
    call: &Call,
    pieces: &[&str],
    usage: (u64, u64),
) -> (Vec<String>, Vec<String>, Vec<String>) {
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
    let answer = crate::data::provider::http::structured::ANSWER_TOOL;
    let body = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| match (call.answer_tool, i) {
            (true, 0) => chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_answer", "type": "function",
                    "function": {"name": answer, "arguments": p}}]}),
                Value::Null,
            ),
            (true, _) => chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
                Value::Null,
            ),
            (false, _) => chunk(json!({"content": p}), Value::Null),
        })
        .collect();
    let mut close: Vec<String> = Vec::new();
    for (i, t) in call.tool_calls.iter().enumerate() {
        close.push(chunk(
            json!({"tool_calls": [{"index": i, "id": t.id, "type": "function",
                "function": {"name": t.name, "arguments": ""}}]}),
            Value::Null,
        ));
        // The arguments arrive in pieces, as real servers split them.
        for piece in fragments(&t.arguments, call.fragments) {
            close.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if call.tool_calls.is_empty() && !call.answer_tool {
        "stop"
    } else {
        "tool_calls"
    };
    close.extend([
        chunk(json!({}), json!(finish)),
        sse(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "model": call.model, "choices": [],
                "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1}}),
        ),
        "data: [DONE]\n\n".to_string(),
    ]);
    (open, body, close)
}

/// [`sse_events`] in Anthropic's message events.
fn anthropic_events(
    call: &Call,
    pieces: &[&str],
    usage: (u64, u64),
) -> (Vec<String>, Vec<String>, Vec<String>) {
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
            "content_block": if call.answer_tool {
                json!({"type": "tool_use", "id": "toolu_answer", "name": crate::data::provider::http::structured::ANSWER_TOOL, "input": {}})
            } else {
                json!({"type": "text", "text": ""})
            }}),
        ),
        sse(Some("ping"), &json!({"type": "ping"})),
    ];
    let body = pieces
        .iter()
        .map(|p| {
            let delta = if call.answer_tool {
                json!({"type": "input_json_delta", "partial_json": p})
            } else {
                json!({"type": "text_delta", "text": p})
            };
            sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            )
        })
        .collect();
    let mut close = vec![sse(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": 0}),
    )];
    for (i, t) in call.tool_calls.iter().enumerate() {
        let index = i + 1;
        close.push(sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": t.id, "name": t.name, "input": {}}}),
        ));
        for piece in fragments(&t.arguments, call.fragments) {
            close.push(sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        close.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = if call.tool_calls.is_empty() && !call.answer_tool {
        "end_turn"
    } else {
        "tool_use"
    };
    close.extend([
        sse(
            Some("message_delta"),
            &json!({"type": "message_delta", "delta": {"stop_reason": stop},
                "usage": {"output_tokens": usage.1}}),
        ),
        sse(Some("message_stop"), &json!({"type": "message_stop"})),
    ]);
    (open, body, close)
}

/// A whole (non-streamed) answer body.
pub fn whole(call: &Call, text: &str, usage: (u64, u64)) -> String {
    let tools = !call.tool_calls.is_empty();
    match call.api {
        Api::Openai if call.answer_tool => json!({
            "id": "chatcmpl-mock", "object": "chat.completion", "model": call.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_answer", "type": "function", "function": {
                    "name": crate::data::provider::http::structured::ANSWER_TOOL, "arguments": text}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1},
        }),
        Api::Openai => {
            let mut message = json!({"role": "assistant", "content": text});
            if tools {
                message["tool_calls"] = call
                    .tool_calls
                    .iter()
                    .map(|t| json!({"id": t.id, "type": "function",
                        "function": {"name": t.name, "arguments": t.arguments}}))
                    .collect();
            }
            json!({
                "id": "chatcmpl-mock", "object": "chat.completion", "model": call.model,
                "choices": [{"index": 0, "message": message,
                    "finish_reason": if tools { "tool_calls" } else { "stop" }}],
                "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1},
            })
        }
        Api::Anthropic => {
            // A forced `answer` tool's input is the answer's JSON (text that is not JSON
            // stays text: a server could not have sent it as the tool's input).
            let input = call
                .answer_tool
                .then(|| serde_json::from_str::<Value>(text).ok())
                .flatten()
                .filter(Value::is_object);
            let mut content = vec![match input {
                Some(input) => json!({"type": "tool_use", "id": "toolu_answer",
                    "name": crate::data::provider::http::structured::ANSWER_TOOL, "input": input}),
                None => json!({"type": "text", "text": text}),
            }];
            content.extend(call.tool_calls.iter().map(|t| {
                json!({"type": "tool_use", "id": t.id, "name": t.name,
                    "input": serde_json::from_str::<Value>(&t.arguments).unwrap_or(json!({}))})
            }));
            json!({
                "id": "msg_mock", "type": "message", "role": "assistant", "model": call.model,
                "content": content, "stop_reason": if tools { "tool_use" } else { "end_turn" },
                "usage": {"input_tokens": usage.0, "output_tokens": usage.1},
            })
        }
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
