//! Seed 003: messages, content blocks, tool calls and results, retry policy, skill
//! activation, metrics and conversation rounds (snake_case field names as in the seed).

use serde::{Deserialize, Serialize};

use super::{is_empty_map, Extra};

/// Role of a message (seed 003 `MessageType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageType {
    /// A user turn.
    User,
    /// An assistant turn.
    Assistant,
    /// A system message.
    System,
}

/// Kind of a content block (seed 003 `ContentBlockType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentBlockType {
    /// Plain text (`text`).
    Text,
    /// Model reasoning (`thinking`).
    Thinking,
    /// A tool call (`id`, `name`, `input`).
    ToolUse,
    /// The result of a tool call (`tool_use_id`, `is_error`).
    ToolResult,
}

/// One content block of a message, Claude Code compatible (seed 003 `ContentBlock`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentBlock {
    /// Kind of block.
    #[serde(rename = "type")]
    pub block_type: ContentBlockType,
    /// Text of a `text` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Reasoning of a `thinking` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Call id of a `tool_use` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name of a `tool_use` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Arguments of a `tool_use` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Extra>,
    /// Call id a `tool_result` block answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Whether a `tool_result` reports an error (default `false`, always written).
    #[serde(default)]
    pub is_error: bool,
    /// Fields not modelled here (e.g. the `content` of a Claude `tool_result` block).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// A tool call issued by the agent (seed 003 `ToolCallMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallMessage {
    /// Id of the call, echoed by the result.
    pub tool_call_id: String,
    /// Tool to run.
    pub tool_name: String,
    /// Arguments.
    #[serde(default)]
    pub parameters: Extra,
    /// Output level the agent asks for; decided by the fallback chain when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_level: Option<OutputLevel>,
}

/// How much detail a tool result carries (seed 003 `OutputLevel`); orthogonal to the
/// observation's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputLevel {
    /// Key facts only.
    Brief,
    /// Actionable information (the global default).
    #[default]
    Standard,
    /// Complete data, usually stored in a file.
    Full,
}

/// The result of a tool call (seed 003 `ToolResultMessage`): one ReAct observation plus
/// storage and status fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// Id of the call answered.
    pub tool_call_id: String,
    /// What the LLM sees (the ReAct Observation).
    pub observation: String,
    /// Formatting level (default `standard`).
    #[serde(default)]
    pub output_level: OutputLevel,
    /// File holding the data when it is ≥ 1 MB or the level is `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_file: Option<String>,
    /// Size of the raw data in bytes (default 0).
    #[serde(default)]
    pub data_size_bytes: u64,
    /// Short description of the stored data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_summary: Option<String>,
    /// Whether the call succeeded (default `true`).
    #[serde(default = "default_true")]
    pub success: bool,
    /// Kind of error, used by the unified error observation (seed 003 `format_error_observation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Error code on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Error message on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

fn default_true() -> bool {
    true
}

impl ToolResultMessage {
    /// The unified error observation of seed 003 (`format_error_observation`); absent
    /// fields are written as `None`, as the Python f-string does.
    pub fn format_error_observation(&self) -> String {
        let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".to_string());
        format!(
            "Operation failed.\nError Type: {}\nError Code: {}\nError Message: {}\nTool Call ID: {}",
            or_none(&self.error_type),
            or_none(&self.error_code),
            or_none(&self.error_message),
            self.tool_call_id
        )
    }
}

/// Kind of tool error a retry policy reacts to (seed 003 `ToolErrorType`); names the seed
/// does not list are kept as [`ToolErrorType::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ToolErrorType {
    /// `timeout`: the tool ran over its time limit.
    Timeout,
    /// `resource_error`: a resource was unavailable or exhausted.
    ResourceError,
    /// Any other error type, as written.
    Other(String),
}

impl ToolErrorType {
    /// The error type as written in JSON.
    pub fn as_str(&self) -> &str {
        match self {
            ToolErrorType::Timeout => "timeout",
            ToolErrorType::ResourceError => "resource_error",
            ToolErrorType::Other(s) => s,
        }
    }
}

impl From<String> for ToolErrorType {
    fn from(s: String) -> Self {
        match s.as_str() {
            "timeout" => ToolErrorType::Timeout,
            "resource_error" => ToolErrorType::ResourceError,
            _ => ToolErrorType::Other(s),
        }
    }
}

impl From<ToolErrorType> for String {
    fn from(t: ToolErrorType) -> Self {
        match t {
            ToolErrorType::Other(s) => s,
            known => known.as_str().to_string(),
        }
    }
}

/// Retry policy of a tool (seed 003 `ToolRetryPolicy`), exponential backoff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRetryPolicy {
    /// Most retries (default 3).
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Error types that are retried (default `timeout`, `resource_error`).
    #[serde(default = "default_retry_on")]
    pub retry_on: Vec<ToolErrorType>,
    /// Factor between consecutive delays (default 1.5).
    #[serde(default = "default_backoff_multiplier")]
    pub backoff_multiplier: f64,
    /// Delay before the first retry (default 1000 ms).
    #[serde(default = "default_initial_delay_ms")]
    pub initial_delay_ms: u64,
    /// Cap on any delay (default 10000 ms).
    #[serde(default = "default_max_delay_ms")]
    pub max_delay_ms: u64,
}

fn default_max_retries() -> u32 {
    3
}

fn default_retry_on() -> Vec<ToolErrorType> {
    vec![ToolErrorType::Timeout, ToolErrorType::ResourceError]
}

fn default_backoff_multiplier() -> f64 {
    1.5
}

fn default_initial_delay_ms() -> u64 {
    1000
}

fn default_max_delay_ms() -> u64 {
    10_000
}

impl Default for ToolRetryPolicy {
    fn default() -> Self {
        ToolRetryPolicy {
            max_retries: default_max_retries(),
            retry_on: default_retry_on(),
            backoff_multiplier: default_backoff_multiplier(),
            initial_delay_ms: default_initial_delay_ms(),
            max_delay_ms: default_max_delay_ms(),
        }
    }
}

/// How much of a skill is loaded (seed 003 progressive disclosure, `Literal[1, 2, 3]`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(try_from = "u8", into = "u8")]
pub enum LoadLevel {
    /// Level 1: the frontmatter (~100 tokens).
    Frontmatter,
    /// Level 2: the full SKILL.md (~5000 tokens), the default.
    #[default]
    Full,
    /// Level 3: resource files, on demand.
    Resources,
}

impl TryFrom<u8> for LoadLevel {
    type Error = String;

    fn try_from(n: u8) -> Result<Self, Self::Error> {
        match n {
            1 => Ok(LoadLevel::Frontmatter),
            2 => Ok(LoadLevel::Full),
            3 => Ok(LoadLevel::Resources),
            _ => Err(format!("load_level must be 1, 2 or 3, not {n}")),
        }
    }
}

impl From<LoadLevel> for u8 {
    fn from(l: LoadLevel) -> Self {
        match l {
            LoadLevel::Frontmatter => 1,
            LoadLevel::Full => 2,
            LoadLevel::Resources => 3,
        }
    }
}

/// A request to activate a skill (seed 003 `SkillActivationRequest`), with cycle and
/// depth tracking for nested activations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillActivationRequest {
    /// Skill to activate.
    pub skill_name: String,
    /// Id of this activation.
    pub activation_id: String,
    /// How much of the skill to load (default 2).
    #[serde(default)]
    pub load_level: LoadLevel,
    /// Nesting depth of this activation (default 0).
    #[serde(default)]
    pub activation_depth: u32,
    /// Deepest nesting allowed (default 3).
    #[serde(default = "default_max_depth")]
    pub max_depth: u32,
    /// Skills activated on the way here, outermost first.
    #[serde(default)]
    pub activation_chain: Vec<String>,
}

fn default_max_depth() -> u32 {
    3
}

impl SkillActivationRequest {
    /// Whether `skill_name` may be activated from inside this activation: not already on
    /// the chain (direct or indirect cycle) and not at the depth limit.
    pub fn can_activate_nested(&self, skill_name: &str) -> bool {
        !self.activation_chain.iter().any(|s| s == skill_name)
            && self.activation_depth < self.max_depth
    }
}

/// Metrics of one tool call (seed 003 `ToolMetrics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolMetrics {
    /// Tool called.
    pub tool_name: String,
    /// Wall time of the call.
    pub duration_ms: f64,
    /// Tokens sent to the tool.
    pub input_tokens: u64,
    /// Tokens of the observation.
    pub output_tokens: u64,
    /// Whether the call succeeded.
    pub success: bool,
    /// Retries made.
    pub retry_count: u32,
    /// Output level used, as text (`brief`, `standard`, `full`).
    pub output_level: String,
}

/// Metrics of one conversation (seed 003 `ConversationMetrics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationMetrics {
    /// Conversation measured.
    pub conversation_id: String,
    /// Input tokens over the conversation.
    pub total_input_tokens: u64,
    /// Output tokens over the conversation.
    pub total_output_tokens: u64,
    /// Every tool call, in order.
    #[serde(default)]
    pub tool_calls: Vec<ToolMetrics>,
}

/// One ReAct round of a multi-turn conversation (seed 003 `ConversationRound`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationRound {
    /// Id of the round.
    pub round_id: String,
    /// The user's message.
    pub user_message: String,
    /// The agent's thoughts, in order.
    #[serde(default)]
    pub thoughts: Vec<String>,
    /// Tool calls made.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallMessage>,
    /// Observations returned, plain strings.
    #[serde(default)]
    pub tool_observations: Vec<String>,
    /// The final answer, once given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// Tokens used by the round.
    pub tokens_used: u64,
}

/// A tool offered to the model: its name, what it does, and the JSON schema of its
/// input (OpenAI `tools[].function`, Anthropic `tools[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of the input object.
    pub input_schema: serde_json::Value,
}

/// One message of a conversation: a role and its content blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: MessageType,
    /// What is said, block by block.
    pub content: Vec<ContentBlock>,
}

/// The tool-using part of a request: the tools offered, and the turns of the ReAct loop
/// that followed the first user message (assistant turns with their tool calls, user
/// turns carrying the tool results). Kept in the request's `react` field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReactTurns {
    /// Tools the model may call.
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
    /// Turns after the first user message, in order (older rounds may have been
    /// summarised into one message).
    #[serde(default)]
    pub turns: Vec<Message>,
    /// Which step of the loop this request is, from 1 (0 when not given).
    #[serde(default)]
    pub step: u32,
}

impl ContentBlock {
    fn empty(block_type: ContentBlockType) -> ContentBlock {
        ContentBlock {
            block_type,
            text: None,
            thinking: None,
            id: None,
            name: None,
            input: None,
            tool_use_id: None,
            is_error: false,
            extra: Extra::new(),
        }
    }

    /// A `text` block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock {
            text: Some(text.into()),
            ..ContentBlock::empty(ContentBlockType::Text)
        }
    }

    /// A `thinking` block.
    pub fn thinking(thinking: impl Into<String>) -> ContentBlock {
        ContentBlock {
            thinking: Some(thinking.into()),
            ..ContentBlock::empty(ContentBlockType::Thinking)
        }
    }

    /// A `tool_use` block: call `id` of tool `name` with `input` (a JSON object; any
    /// other value is wrapped as `{"value": …}`).
    pub fn tool_use(
        id: impl Into<String>,
        name: impl Into<String>,
        input: serde_json::Value,
    ) -> ContentBlock {
        let input = match input {
            serde_json::Value::Object(m) => m,
            other => [("value".to_string(), other)].into_iter().collect(),
        };
        ContentBlock {
            id: Some(id.into()),
            name: Some(name.into()),
            input: Some(input),
            ..ContentBlock::empty(ContentBlockType::ToolUse)
        }
    }

    /// A `tool_result` block answering call `tool_use_id` with the observation `content`.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> ContentBlock {
        let mut b = ContentBlock {
            tool_use_id: Some(tool_use_id.into()),
            is_error,
            ..ContentBlock::empty(ContentBlockType::ToolResult)
        };
        b.extra
            .insert("content".into(), serde_json::Value::String(content.into()));
        b
    }

    /// The input of a `tool_use` block as a JSON object (`{}` when absent).
    pub fn input_json(&self) -> serde_json::Value {
        serde_json::Value::Object(self.input.clone().unwrap_or_default())
    }

    /// The content of a `tool_result` block as text: a string, or the text blocks of
    /// an array joined by newlines, else its `text` (as the seed's example writes it).
    pub fn result_text(&self) -> String {
        match self.extra.get("content") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(serde_json::Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => self.text.clone().unwrap_or_default(),
        }
    }
}
