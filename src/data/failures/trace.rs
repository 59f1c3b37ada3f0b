//! A trace document as a conversation: turns with role and text, the tool calls each
//! turn made (with their results when the trace has them) and the state snapshots taken
//! at it. Liberal in what it accepts: `conversation_history` (or `messages`, `turns`,
//! `conversation`, `history`); content as a string, content blocks or any JSON; tool
//! calls inside messages (OpenAI or Anthropic shape) or in a top-level `tool_calls`
//! list tied to a turn by id or turn number; `states` as a list or a map; and the
//! `epochs` list `plexus eval` writes instead of a history.

use serde_json::Value;

use super::conversation::{Conversation, ToolCall, Turn};

const HISTORY_KEYS: [&str; 5] = [
    "conversation_history",
    "messages",
    "conversation",
    "turns",
    "history",
];

fn str_of(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match v.get(k)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

fn num_of(v: &Value, keys: &[&str]) -> Option<u32> {
    keys.iter().find_map(|k| {
        let x = v.get(k)?;
        x.as_u64()
            .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
    })
}

/// Text of a content value: a string; text blocks joined (tool blocks left to the
/// tool-call list); anything else as compact JSON.
fn content_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<String> = blocks.iter().filter_map(block_text).collect();
            parts.join("\n")
        }
        Some(other) => other.to_string(),
    }
}

/// Text of one block of a content array: a string; a tool result's content; a text or
/// thinking block's text; none for a tool call (left to the tool-call list); anything
/// else as compact JSON.
fn block_text(b: &Value) -> Option<String> {
    match b {
        Value::String(s) => Some(s.clone()),
        Value::Object(_) => match b.get("type").and_then(Value::as_str) {
            Some("tool_use") => None,
            Some("tool_result") => Some(content_text(b.get("content"))),
            _ => match str_of(b, &["text", "thinking"]) {
                Some(t) => Some(t),
                None => Some(b.to_string()),
            },
        },
        other => Some(other.to_string()),
    }
}

/// Arguments as JSON: a string holding JSON is parsed.
fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// A tool call in any of the usual shapes.
fn tool_call(v: &Value) -> Option<ToolCall> {
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = str_of(f, &["name", "tool_name", "tool"])?;
    Some(ToolCall {
        id: str_of(v, &["id", "call_id", "tool_call_id", "tool_use_id"]),
        name,
        arguments: arguments(
            ["arguments", "args", "input", "parameters"]
                .iter()
                .find_map(|k| f.get(k)),
        ),
        result: ["result", "output", "response", "return"]
            .iter()
            .find_map(|k| v.get(k))
            .cloned(),
    })
}

fn turn_of(entry: &Value, position: usize) -> Turn {
    let mut calls: Vec<ToolCall> = entry
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(tool_call).collect())
        .unwrap_or_default();
    if let Some(blocks) = entry.get("content").and_then(Value::as_array) {
        calls.extend(
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .filter_map(tool_call),
        );
    }
    if let Some(fc) = entry.get("function_call") {
        calls.extend(tool_call(fc));
    }
    let content = match entry {
        Value::String(s) => s.clone(),
        _ => content_text(
            ["content", "text", "message"]
                .iter()
                .find_map(|k| entry.get(k)),
        ),
    };
    Turn {
        number: num_of(entry, &["turn", "turn_index", "index"]).unwrap_or(position as u32 + 1),
        role: str_of(entry, &["role", "speaker", "from", "author"])
            .map(|r| r.to_lowercase())
            .unwrap_or_else(|| "unknown".into()),
        content,
        tool_name: str_of(entry, &["name", "tool_name", "tool_call_id"]),
        tool_calls: calls,
        states: entry.get("state").cloned().into_iter().collect(),
    }
}

/// Parses a trace document (any JSON; a bare list is taken as the history).
pub fn parse_trace(doc: &Value) -> Conversation {
    let mut c = Conversation::default();
    let history = match doc {
        Value::Array(a) => Some(a),
        _ => HISTORY_KEYS.iter().find_map(|k| doc.get(k)?.as_array()),
    };
    match history {
        Some(h) => c.turns = h.iter().enumerate().map(|(i, e)| turn_of(e, i)).collect(),
        None if super::eval_trace::is_eval_trace(doc) => {
            super::eval_trace::epoch_turns(doc, &mut c)
        }
        None => c.notes.push("no conversation_history list".into()),
    }
    if let Some(list) = doc.get("tool_calls") {
        match list.as_array() {
            Some(a) => {
                for v in a {
                    attach_call(&mut c, v);
                }
            }
            None => c.notes.push("tool_calls is not a list".into()),
        }
    }
    match doc.get("states") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            for (i, s) in a.iter().enumerate() {
                match num_of(s, &["turn", "turn_index", "after_turn"]).and_then(|n| c.position(n)) {
                    Some(p) => c.turns[p].states.push(s.clone()),
                    None => {
                        let label = str_of(s, &["label", "name", "stage"])
                            .unwrap_or_else(|| format!("state {}", i + 1));
                        c.loose_states.push((label, s.clone()));
                    }
                }
            }
        }
        Some(Value::Object(m)) => {
            for (k, v) in m {
                c.loose_states.push((k.clone(), v.clone()));
            }
        }
        Some(other) => c.loose_states.push(("states".into(), other.clone())),
    }
    c
}

/// Ties a top-level tool call to the call of the same id in a turn (adding its result),
/// else to its turn number, else keeps it loose.
fn attach_call(c: &mut Conversation, v: &Value) {
    let Some(call) = tool_call(v) else {
        c.notes
            .push(format!("a tool call without a name: {}", short(v)));
        return;
    };
    if let Some(id) = &call.id {
        for t in &mut c.turns {
            if let Some(known) = t.tool_calls.iter_mut().find(|k| k.id.as_ref() == Some(id)) {
                if known.result.is_none() {
                    known.result = call.result;
                }
                return;
            }
        }
    }
    match num_of(v, &["turn", "turn_index"]).and_then(|n| c.position(n)) {
        Some(p) => c.turns[p].tool_calls.push(call),
        None => c.loose_tool_calls.push(call),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_and_anthropic_shapes_and_top_level_lists() {
        let doc = json!({
            "sample_id": "BS_MT_001",
            "conversation_history": [
                {"turn": 1, "role": "user", "content": "我想请3天年假"},
                {"turn": 2, "role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_leave_balance", "arguments": "{\"employee_id\": \"E1\"}"}}]},
                {"turn": 3, "role": "tool", "tool_call_id": "c1", "content": "{\"annual\": 10}"},
                {"role": "Assistant", "content": [{"type": "text", "text": "好的"},
                    {"type": "tool_use", "id": "c2", "name": "create_leave_application", "input": {"days": 3}}]}
            ],
            "tool_calls": [
                {"call_id": "c1", "tool_name": "get_leave_balance", "result": {"annual": 10}},
                {"turn": 4, "tool_name": "notify_approver", "arguments": {}},
                {"tool_name": "audit"}
            ],
            "states": [{"turn": 4, "state": {"balance": 10}}, {"label": "initial", "state": {}}]
        });
        let c = parse_trace(&doc);
        assert_eq!(c.turns.len(), 4);
        assert_eq!(c.turns[1].tool_calls[0].name, "get_leave_balance");
        assert_eq!(
            c.turns[1].tool_calls[0].arguments,
            json!({"employee_id": "E1"})
        );
        assert_eq!(c.turns[1].tool_calls[0].result, Some(json!({"annual": 10})));
        assert_eq!(c.turns[2].tool_name.as_deref(), Some("c1"));
        assert_eq!(c.turns[3].number, 4);
        assert_eq!(c.turns[3].role, "assistant");
        assert_eq!(c.turns[3].content, "好的");
        assert_eq!(c.turns[3].tool_calls.len(), 2);
        assert_eq!(c.turns[3].states.len(), 1);
        assert_eq!(c.loose_tool_calls.len(), 1);
        assert_eq!(c.loose_states[0].0, "initial");
        assert_eq!(c.tool_call_count(), 4);
    }

    #[test]
    fn odd_documents_do_not_fail() {
        assert_eq!(parse_trace(&json!(null)).notes.len(), 1);
        let c = parse_trace(&json!(["hello", {"speaker": "bot", "text": "hi"}]));
        assert_eq!(c.turns[0].content, "hello");
        assert_eq!(c.turns[1].role, "bot");
        let c = parse_trace(&json!({"messages": [], "tool_calls": 3, "states": {"final": {}}}));
        assert_eq!(c.notes, ["tool_calls is not a list"]);
        assert_eq!(c.loose_states.len(), 1);
    }
}
