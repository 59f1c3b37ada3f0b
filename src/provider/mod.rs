//! Providers answer AgentRequests by streaming text. The engine enforces timeouts,
//! parses and grades; a provider only produces text (or a transport-level error).

pub mod simulated;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::protocol::AgentRequest;

pub use simulated::{Fault, FaultRates, SimConfig, SimulatedProvider};

/// Receives streamed text as it arrives.
pub trait ChunkSink: Send {
    /// One piece of output text.
    fn chunk(&mut self, text: &str);
}

/// Usage reported by the provider itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

/// What a finished call returns (the text itself went through the sink).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderOutput {
    /// Usage reported by the provider, if it reports any.
    pub usage: Option<Usage>,
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
    /// Not retryable: bad credentials, unknown model, internal error (E008).
    #[error("provider error: {0}")]
    Permanent(String),
}

/// A boxed future returned by providers.
pub type ProviderFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ProviderOutput, ProviderError>> + Send + 'a>>;

/// An LLM provider.
pub trait Provider: Send + Sync {
    /// Name shown in the UI (`simulated`, `openai:gpt-4o`, …).
    fn name(&self) -> String;

    /// Whether the provider is the built-in simulation.
    fn is_simulated(&self) -> bool {
        false
    }

    /// Answers one request, streaming text into `sink`.
    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a>;
}
