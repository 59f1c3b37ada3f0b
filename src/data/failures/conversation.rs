//! A trace as the browser shows it: turns with role and text, the tool calls each turn
//! made (with their results when the trace has them) and the state snapshots taken at
//! it. Built from a conversation history or from an eval's epochs.

use serde_json::Value;

/// One tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Call id, when given.
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments (a JSON string is parsed when it holds JSON).
    pub arguments: Value,
    /// Result, when the trace records it.
    pub result: Option<Value>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// Turn number: the entry's own `turn` field, else its position from 1.
    pub number: u32,
    /// `system`, `user`, `assistant`, `tool`… (lowercase; `unknown` when absent).
    pub role: String,
    /// The text (content blocks joined; other JSON as compact JSON).
    pub content: String,
    /// For a tool message: the tool's name or the call it answers.
    pub tool_name: Option<String>,
    /// Tool calls made in this turn.
    pub tool_calls: Vec<ToolCall>,
    /// State snapshots taken at this turn.
    pub states: Vec<Value>,
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    /// Turns in order.
    pub turns: Vec<Turn>,
    /// Top-level tool calls tied to no turn.
    pub loose_tool_calls: Vec<ToolCall>,
    /// State snapshots tied to no turn (an initial or final state, a map without turns).
    pub loose_states: Vec<(String, Value)>,
    /// What was not understood (the view still shows the rest).
    pub notes: Vec<String>,
}

impl Conversation {
    /// Tool calls in all turns and loose.
    pub fn tool_call_count(&self) -> usize {
        self.turns.iter().map(|t| t.tool_calls.len()).sum::<usize>() + self.loose_tool_calls.len()
    }

    /// The position of turn number `n`.
    pub fn position(&self, n: u32) -> Option<usize> {
        self.turns.iter().position(|t| t.number == n)
    }
}
