//! What a model call gives back, as data every layer may hold: the usage a provider
//! reports, the tool calls it asks for, the finished call's output, the transport
//! failures and the stored form of one. The providers themselves live in
//! `crate::data::provider`.

/// Usage reported by the provider itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Of the prompt tokens, those the provider read from its prompt cache (OpenAI's
    /// `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`),
    /// billed at the cached-input price.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_prompt_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A tool call the model asked for (OpenAI `tool_calls`, Anthropic `tool_use`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// Call id given by the provider.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as the JSON text the model wrote.
    pub arguments: String,
}

/// What a finished call returns (the text itself went through the sink).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProviderOutput {
    /// Usage reported by the provider, if it reports any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the model stopped (`stop`, `length`, `end_turn`, `tool_use`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Model that answered, as the provider names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tool calls requested by the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Thinking text (Anthropic `thinking` blocks, a `reasoning_content` stream, a
    /// `<think>` block before the answer), kept apart from the answer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    /// The structured-output dialect the answer was asked in (`json_schema`,
    /// `json_object`, …), when it had a schema and the server took one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<String>,
}

/// Transport-level failures, mapped to seed 001 error codes by the engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// Rate limit, 5xx, connection reset: retried with exponential backoff (E001-style).
    #[error("transient provider error: {message}")]
    Transient {
        /// What happened.
        message: String,
        /// Server-requested wait (Retry-After), in ms.
        retry_after_ms: Option<u64>,
    },
    /// A source the task needs cannot be reached (E001).
    #[error("source not found: {0}")]
    SourceNotFound(String),
    /// The call ran out of time on the transport: HTTP 408, or a stream that stalled
    /// past the idle timeout (E004, retried with a longer timeout).
    #[error("provider timeout: {0}")]
    Timeout(String),
    /// The provider's answer could not be read: invalid SSE, invalid JSON in a chunk
    /// (E002, retried).
    #[error("unreadable provider response: {0}")]
    Malformed(String),
    /// Not retryable: bad credentials, unknown model, TLS failure, oversized answer,
    /// internal error (E008).
    #[error("provider error: {0}")]
    Permanent(String),
}

/// A provider error as the stored response keeps it (`provider_error`), beside the
/// error code it mapped to: which transport failure it was, so a replay can give the
/// same one back (E001 is a transient error or an unreachable source, E002 a malformed
/// stream or a text that did not parse, E004 a provider's or the engine's timeout).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredProviderError {
    /// `transient`, `source_not_found`, `timeout`, `malformed` or `permanent`.
    pub kind: String,
    /// The provider's message.
    pub message: String,
    /// The wait a transient error asked for (Retry-After), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl From<&ProviderError> for StoredProviderError {
    fn from(e: &ProviderError) -> Self {
        let (kind, message, retry_after_ms) = match e {
            ProviderError::Transient {
                message,
                retry_after_ms,
            } => ("transient", message, *retry_after_ms),
            ProviderError::SourceNotFound(m) => ("source_not_found", m, None),
            ProviderError::Timeout(m) => ("timeout", m, None),
            ProviderError::Malformed(m) => ("malformed", m, None),
            ProviderError::Permanent(m) => ("permanent", m, None),
        };
        StoredProviderError {
            kind: kind.to_string(),
            message: message.clone(),
            retry_after_ms,
        }
    }
}

impl StoredProviderError {
    /// The error again; `None` for a kind this build does not know.
    pub fn to_error(&self) -> Option<ProviderError> {
        let m = self.message.clone();
        Some(match self.kind.as_str() {
            "transient" => ProviderError::Transient {
                message: m,
                retry_after_ms: self.retry_after_ms,
            },
            "source_not_found" => ProviderError::SourceNotFound(m),
            "timeout" => ProviderError::Timeout(m),
            "malformed" => ProviderError::Malformed(m),
            "permanent" => ProviderError::Permanent(m),
            _ => return None,
        })
    }
}
