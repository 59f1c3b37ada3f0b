//! The `[providers.NAME]` tables as plain data, and the checks of their values that
//! serde cannot make. Provider profiles are built from these in `provider::profile`.
//!
//! ```toml
//! [providers.openai]
//! kind = "openai"                      # openai | anthropic | simulated
//! base_url = "https://api.openai.com/v1"
//! model = "gpt-4o-mini"
//! api_key_env = "OPENAI_API_KEY"       # or api_key_file = "~/.config/plexus/openai.key"
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which API a profile speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible `/chat/completions` (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM).
    Openai,
    /// Anthropic `/v1/messages`.
    Anthropic,
    /// The built-in offline simulation.
    Simulated,
}

impl ProviderKind {
    /// The kind as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Simulated => "simulated",
        }
    }
}

/// How a profile asks its server to hold an answer to the answer's JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// By the profile's kind, falling back once per form the server refuses.
    #[default]
    Auto,
    /// OpenAI's `response_format: {type: json_schema, json_schema: {strict: true, …}}`.
    JsonSchema,
    /// `response_format: {type: json_object, schema: …}` (llama.cpp, llama-cpp-python).
    JsonObject,
    /// vLLM's `guided_json`.
    GuidedJson,
    /// Ollama's `format` holding the schema.
    OllamaFormat,
    /// Anthropic: a forced tool whose input schema is the answer's.
    Tool,
    /// Not asked: the prompt alone states the shape.
    Off,
}

impl StructuredOutput {
    /// Every setting, as the config writes it.
    pub const NAMES: &'static [&'static str] = &[
        "auto",
        "json_schema",
        "json_object",
        "guided_json",
        "ollama_format",
        "tool",
        "off",
    ];

    /// The setting as the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            StructuredOutput::Auto => "auto",
            StructuredOutput::JsonSchema => "json_schema",
            StructuredOutput::JsonObject => "json_object",
            StructuredOutput::GuidedJson => "guided_json",
            StructuredOutput::OllamaFormat => "ollama_format",
            StructuredOutput::Tool => "tool",
            StructuredOutput::Off => "off",
        }
    }
}

/// One `[providers.NAME]` table as the file writes it (its name is the table's key).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// API spoken.
    pub kind: ProviderKind,
    /// Endpoint root: `https://api.openai.com/v1` (the provider appends
    /// `/chat/completions`) or `https://api.anthropic.com` (it appends `/v1/messages`).
    #[serde(default)]
    pub base_url: String,
    /// Model name sent with every call.
    #[serde(default)]
    pub model: String,
    /// Environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// File holding the API key (first line; `~/` is the home directory).
    #[serde(default)]
    pub api_key_file: Option<PathBuf>,
    /// Extra headers sent with every call (not for secrets: they are shown by
    /// `plexus providers`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Calls in flight through this profile (the run's `--concurrency` applies too).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Requests per minute (token bucket); 0 = unlimited.
    #[serde(default)]
    pub rate_limit_rpm: u32,
    /// Requests the bucket may release at once (default: one second's worth, at least 1).
    #[serde(default)]
    pub rate_burst: Option<u32>,
    /// Stream the answer (SSE); `false` waits for the whole answer.
    #[serde(default = "yes")]
    pub stream: bool,
    /// Seconds to open a connection.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_s: f64,
    /// Seconds a stream may go without a byte before the call ends as a timeout (E004).
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_s: f64,
    /// Largest answer accepted, bytes (the call ends with E008 past it).
    #[serde(default = "default_max_response")]
    pub max_response_bytes: usize,
    /// Name of the max-tokens field (OpenAI only): `max_tokens`, or
    /// `max_completion_tokens` for OpenAI reasoning models.
    #[serde(default = "default_max_tokens_param")]
    pub max_tokens_param: String,
    /// `anthropic-version` header (Anthropic only).
    #[serde(default = "default_anthropic_version")]
    pub anthropic_version: String,
    /// Anthropic extended thinking budget in tokens (0 = off).
    #[serde(default)]
    pub thinking_budget: u32,
    /// Embedding model of an OpenAI-compatible `/embeddings` endpoint; when set, debate
    /// sessions on this profile compare positions with it instead of the built-in
    /// embedding.
    #[serde(default)]
    pub embedding_model: Option<String>,
    /// Model of an OpenAI-compatible `/moderations` endpoint (at `base_url`); when set,
    /// every debate output on this profile passes it besides the built-in check.
    #[serde(default)]
    pub moderation_model: Option<String>,
    /// Endpoint root of the embeddings (`…/v1`; `/embeddings` is appended) when it is
    /// not `base_url` (an Anthropic profile needs one).
    #[serde(default)]
    pub embedding_base_url: Option<String>,
    /// How answers with a shape are held to their JSON Schema.
    #[serde(default)]
    pub structured_output: StructuredOutput,
    /// Seconds a whole call may take (a task's, a debate turn's, a judge's): when set,
    /// it replaces the plan's and the debate's timeouts for calls on this profile.
    #[serde(default)]
    pub timeout_s: Option<f64>,
    /// Seconds to the first byte of an answer (a local model reads a long prompt
    /// first); `idle_timeout_s` when absent.
    #[serde(default)]
    pub first_token_timeout_s: Option<f64>,
}

/// Calls in flight through a profile unless it says otherwise.
pub(super) const DEFAULT_CONCURRENCY: usize = 256;
/// Seconds to open a connection unless a profile says otherwise.
pub(super) const DEFAULT_CONNECT_TIMEOUT: f64 = 10.0;
/// Seconds a stream may stay silent unless a profile says otherwise.
pub(super) const DEFAULT_IDLE_TIMEOUT: f64 = 60.0;
/// Largest answer accepted unless a profile says otherwise.
pub(super) const DEFAULT_MAX_RESPONSE: usize = 8 * 1024 * 1024;
/// The max-tokens field's name unless a profile says otherwise.
pub(super) const DEFAULT_MAX_TOKENS_PARAM: &str = "max_tokens";
/// The `anthropic-version` header unless a profile says otherwise.
pub(super) const DEFAULT_ANTHROPIC_VERSION: &str = "2023-06-01";

/// The names `max_tokens_param` may hold.
pub const MAX_TOKENS_PARAMS: &[&str] = &["max_tokens", "max_completion_tokens"];

fn default_concurrency() -> usize {
    DEFAULT_CONCURRENCY
}
fn yes() -> bool {
    true
}
fn default_connect_timeout() -> f64 {
    DEFAULT_CONNECT_TIMEOUT
}
fn default_idle_timeout() -> f64 {
    DEFAULT_IDLE_TIMEOUT
}
fn default_max_response() -> usize {
    DEFAULT_MAX_RESPONSE
}
fn default_max_tokens_param() -> String {
    DEFAULT_MAX_TOKENS_PARAM.into()
}
fn default_anthropic_version() -> String {
    DEFAULT_ANTHROPIC_VERSION.into()
}

impl ProviderSettings {
    /// The values of a table that sets only `kind`: every other field at its default.
    pub fn new(kind: ProviderKind) -> ProviderSettings {
        ProviderSettings {
            kind,
            base_url: String::new(),
            model: String::new(),
            api_key_env: None,
            api_key_file: None,
            headers: BTreeMap::new(),
            concurrency: default_concurrency(),
            rate_limit_rpm: 0,
            rate_burst: None,
            stream: true,
            connect_timeout_s: default_connect_timeout(),
            idle_timeout_s: default_idle_timeout(),
            max_response_bytes: default_max_response(),
            max_tokens_param: default_max_tokens_param(),
            anthropic_version: default_anthropic_version(),
            thinking_budget: 0,
            embedding_model: None,
            moderation_model: None,
            embedding_base_url: None,
            structured_output: StructuredOutput::Auto,
            timeout_s: None,
            first_token_timeout_s: None,
        }
    }

    /// Checks the values serde cannot: required fields, ranges, header syntax.
    pub fn check(&self) -> Result<(), String> {
        if self.kind == ProviderKind::Simulated {
            return Ok(());
        }
        if self.base_url.trim().is_empty() {
            return Err("`base_url` is required".into());
        }
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "`base_url` must start with http:// or https:// (got {url:?})"
            ));
        }
        if self.model.trim().is_empty() {
            return Err("`model` is required".into());
        }
        if self.api_key_env.is_some() && self.api_key_file.is_some() {
            return Err("give `api_key_env` or `api_key_file`, not both".into());
        }
        if self.concurrency == 0 {
            return Err("`concurrency` must be at least 1".into());
        }
        for (what, v) in [
            ("connect_timeout_s", self.connect_timeout_s),
            ("idle_timeout_s", self.idle_timeout_s),
            ("timeout_s", self.timeout_s.unwrap_or(1.0)),
            (
                "first_token_timeout_s",
                self.first_token_timeout_s.unwrap_or(1.0),
            ),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                return Err(format!(
                    "`{what}` must be a number of seconds above 0 and at most 86400"
                ));
            }
        }
        if !MAX_TOKENS_PARAMS.contains(&self.max_tokens_param.as_str()) {
            return Err("`max_tokens_param` must be max_tokens or max_completion_tokens".into());
        }
        if self.thinking_budget != 0 && self.thinking_budget < 1024 {
            return Err("`thinking_budget` must be 0 (off) or at least 1024 tokens".into());
        }
        if self.max_response_bytes < 1024 {
            return Err("`max_response_bytes` must be at least 1024".into());
        }
        if let Some(u) = &self.embedding_base_url {
            let u = u.trim();
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(format!(
                    "`embedding_base_url` must start with http:// or https:// (got {u:?})"
                ));
            }
        }
        if self
            .embedding_model
            .as_deref()
            .is_some_and(|m| m.trim().is_empty())
        {
            return Err("`embedding_model` must not be empty".into());
        }
        if self
            .moderation_model
            .as_deref()
            .is_some_and(|m| m.trim().is_empty())
        {
            return Err("`moderation_model` must not be empty".into());
        }
        if self.embedding_base_url.is_some() && self.embedding_model.is_none() {
            return Err("`embedding_base_url` needs `embedding_model`".into());
        }
        for (k, v) in &self.headers {
            if reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_err() {
                return Err(format!("header name {k:?} is not a valid HTTP header name"));
            }
            if reqwest::header::HeaderValue::from_str(v).is_err() {
                return Err(format!("the value of header {k:?} is not valid in HTTP"));
            }
        }
        Ok(())
    }
}
