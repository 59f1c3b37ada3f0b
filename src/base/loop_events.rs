//! The events of a tool-using loop (Thought → Action → Observation): each step, each
//! skill activation or refusal, each compression of the conversation, and the loop's
//! totals. The envelope names the task and the invocation (the model call) they
//! belong to.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::protocol::messages::OutputLevel;
use crate::base::protocol::provider::ToolCall;

/// The model asked for a tool (the Action), after its thought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCalled {
    /// Step of the loop, from 1 (one model call each).
    pub step: u32,
    /// The call's id, echoed by its result.
    pub tool_call_id: String,
    /// Tool asked for.
    pub tool: String,
    /// Its input, as the model wrote it.
    pub input: Value,
    /// The thought before it (the step's text).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thought: String,
    /// Tokens of the step's assistant message (its thought and every call it asks for),
    /// as the conversation counts them; absent in logs written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_tokens: Option<u64>,
}

/// A tool answered (the Observation), with the call's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolAnswered {
    /// Step of the loop.
    pub step: u32,
    /// The call answered.
    pub tool_call_id: String,
    /// Tool.
    pub tool: String,
    /// What the model sees.
    pub observation: String,
    /// Whether it is an error observation.
    #[serde(default)]
    pub is_error: bool,
    /// Output level used.
    pub output_level: OutputLevel,
    /// File the data went to (1 MB or more, or the full level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_file: Option<String>,
    /// Size of the data, bytes.
    #[serde(default)]
    pub data_size_bytes: u64,
    /// Wall time of the call, retries included.
    pub duration_ms: f64,
    /// Tokens of the input.
    pub input_tokens: u64,
    /// Tokens of the observation.
    pub output_tokens: u64,
    /// Retries made.
    #[serde(default)]
    pub retries: u32,
    /// Answered from the run's cache of idempotent calls.
    #[serde(default)]
    pub cached: bool,
}

/// A skill was activated: its whole SKILL.md joined the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillActivated {
    /// Skill.
    pub skill: String,
    /// The activation chain, outermost first, ending with this skill.
    pub chain: Vec<String>,
    /// Tokens its text added.
    pub tokens: u64,
}

/// A skill activation was refused: a cycle (the chain names it) or the depth limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillRefused {
    /// Skill asked for.
    pub skill: String,
    /// The chain it would have made, e.g. `["A", "B", "C", "A"]`.
    pub chain: Vec<String>,
    /// Why, for a person.
    pub reason: String,
}

/// The conversation reached its threshold and older rounds were summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextCompressed {
    /// Tokens before.
    pub before_tokens: u64,
    /// Tokens after.
    pub after_tokens: u64,
    /// Rounds replaced by the summary.
    pub rounds_summarised: u32,
    /// Rounds kept whole.
    pub rounds_kept: u32,
}

/// The loop ended: why, and its totals (the conversation's metrics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopFinished {
    /// `answer`, `step_failed` (the provider failed the last step: an error or a
    /// timeout), `step_limit`, `token_budget`, `context_window`, or `money_budget` (the
    /// run's money budget was spent before the next step: the task waits for a resume).
    pub stop: String,
    /// Model calls made.
    pub steps: u32,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Compressions of the conversation.
    pub compressions: u32,
    /// Prompt and output tokens over every step.
    pub total_tokens: u64,
    /// Of those, the prompts': every step's whole prompt, as sent (0 in logs written
    /// before the split was recorded).
    #[serde(default)]
    pub input_tokens: u64,
    /// Of those, the model's text: thoughts and the final answer (0 in older logs).
    #[serde(default)]
    pub output_tokens: u64,
    /// Of those, the final answer's (or what streamed before the last step failed);
    /// absent in logs written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_tokens: Option<u64>,
}

/// One step as recorded with the invocation, so that a rerun can answer it again: the
/// model's text and tool calls, and the observations it got back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedStep {
    /// The text of the step (a thought, or the final answer).
    pub text: String,
    /// The tools it asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Each call's answer (observation and metrics), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<ToolAnswered>,
}
