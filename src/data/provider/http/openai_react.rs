//! A tool-using loop's part of an OpenAI-compatible request: the tools
//! (`tools[].function`) and the loop's turns as chat messages.

use serde_json::{json, Value};

use crate::base::protocol::messages::{
    ContentBlock, ContentBlockType, Message, MessageType, ReactTurns,
};

/// The tools (`tools[].function`) and the loop's turns: an assistant message with its
/// `tool_calls`, a `tool` message per result (thinking is not sent back).
pub(super) fn add_react(body: &mut Value, react: &ReactTurns) {
    if !react.tools.is_empty() {
        body["tools"] = react
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
    }
    let Some(messages) = body["messages"].as_array_mut() else {
        return;
    };
    for turn in &react.turns {
        match turn.role {
            MessageType::Assistant => messages.push(assistant_message(turn)),
            MessageType::User | MessageType::System => push_user_turn(messages, turn),
        }
    }
}

/// A text block's text (none for another block).
fn text(b: &ContentBlock) -> Option<String> {
    (b.block_type == ContentBlockType::Text).then(|| b.text.clone().unwrap_or_default())
}

/// An assistant turn as one message: its text blocks joined, its tool calls.
fn assistant_message(turn: &Message) -> Value {
    let content: Vec<String> = turn.content.iter().filter_map(text).collect();
    let calls: Vec<Value> = turn
        .content
        .iter()
        .filter(|b| b.block_type == ContentBlockType::ToolUse)
        .map(|b| {
            json!({"id": b.id, "type": "function", "function": {
                "name": b.name, "arguments": b.input_json().to_string(),
            }})
        })
        .collect();
    let mut m = json!({"role": "assistant", "content": content.join("\n")});
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    m
}

/// A user (or system) turn as messages: a `tool` message per tool result, one of the
/// turn's role per text block.
fn push_user_turn(messages: &mut Vec<Value>, turn: &Message) {
    let role = if turn.role == MessageType::User {
        "user"
    } else {
        "system"
    };
    for b in &turn.content {
        if b.block_type == ContentBlockType::ToolResult {
            messages.push(json!({
                "role": "tool", "tool_call_id": b.tool_use_id, "content": b.result_text(),
            }));
        } else if let Some(t) = text(b) {
            messages.push(json!({"role": role, "content": t}));
        }
    }
}
