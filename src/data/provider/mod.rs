//! Providers answer AgentRequests by streaming text. The engine enforces timeouts,
//! parses and grades; a provider only produces text (or a transport-level error).

pub mod call;
pub mod http;
pub mod meter;
pub mod profile;
pub mod rate;
pub mod replay;
pub mod retry;
mod sim_answer;
mod sim_atoms;
pub mod sim_debate;
pub mod sim_debate_topic;
mod sim_fault;
pub mod sim_judge;
pub mod sim_react;
pub mod simulated;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::base::protocol::AgentRequest;

pub use crate::base::protocol::provider::{
    ProviderError, ProviderOutput, StoredProviderError, ToolCall, Usage,
};
pub use http::HttpProvider;
pub use profile::{ProviderKind, ProviderProfile};
pub use simulated::{Fault, FaultRates, SimConfig, SimulatedProvider};

/// Builds the provider a profile describes (`sim` configures the simulated one).
pub fn build(
    profile: &ProviderProfile,
    sim: &SimConfig,
) -> Result<Arc<dyn Provider>, profile::ProfileError> {
    Ok(match profile.kind {
        ProviderKind::Simulated => Arc::new(SimulatedProvider::new(sim.clone())),
        ProviderKind::Openai | ProviderKind::Anthropic => {
            Arc::new(HttpProvider::new(profile.clone())?)
        }
    })
}

/// Receives streamed text as it arrives.
pub trait ChunkSink: Send {
    /// One piece of output text.
    fn chunk(&mut self, text: &str);

    /// Bytes of the answer came that carry no answer text (reasoning, a tool call's
    /// arguments): the server is answering. Nothing by default.
    fn progress(&mut self) {}
}

/// Held while a call may run: a slot of the provider's own concurrency limit and rate
/// limit, or nothing. Dropping it frees the slot.
pub type Admission = Option<Box<dyn std::any::Any + Send>>;

/// A boxed future that admits one call.
pub type AdmitFuture<'a> = Pin<Box<dyn Future<Output = Admission> + Send + 'a>>;

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

    /// Waits until the provider may start another call (its concurrency and rate
    /// limits) and returns the slot, held for the call. The engine waits for this
    /// before the request's timeout starts, so queueing is never a timeout.
    fn admit(&self) -> AdmitFuture<'_> {
        Box::pin(std::future::ready(None))
    }

    /// The steps of a tool-using loop recorded for `task_id`'s attempt `attempt`, when
    /// this provider answers from a recording (a rerun answers the tools from it too).
    fn recorded_steps(
        &self,
        _task_id: &str,
        _attempt: u32,
    ) -> Option<Vec<crate::base::loop_events::RecordedStep>> {
        None
    }

    /// What replaces this provider's secret (its API key) in text decoded from its
    /// answers, when it has one: whoever decodes an answer (reads the JSON the model
    /// wrote) passes what it decoded through it before keeping it, since a string the
    /// model escaped (`\u0073k-…`) decodes to the key in clear.
    fn secret_redactor(&self) -> Option<&http::redact::TextRedactor> {
        None
    }

    /// The times the provider's profile sets for every call (`timeout_s`,
    /// `first_token_timeout_s`); none by default.
    fn call_times(&self) -> call::CallTimes {
        call::CallTimes::default()
    }

    /// The structured-output dialect answers with a schema are asked in now (`None`:
    /// none, the prompt alone states the shape), and what the server refused so far.
    fn structured_output(&self) -> (Option<&'static str>, Vec<String>) {
        (None, Vec::new())
    }

    /// Answers one request, streaming text into `sink` (after [`Provider::admit`]).
    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a>;
}
