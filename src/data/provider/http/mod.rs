//! Providers over HTTP: one pooled client per profile, the profile's concurrency limit
//! and rate limit, streaming with an idle timeout and a size cap, and every transport
//! fault mapped to a [`ProviderError`] (and so to a seed 001 error code):
//!
//! | fault                                   | error                | code |
//! |-----------------------------------------|----------------------|------|
//! | connection refused, reset, stream cut   | `Transient` (backoff) | E001 |
//! | 429 (Retry-After honoured), 500/502/503/504/529 | `Transient`  | E001 |
//! | DNS failure                             | `SourceNotFound`     | E001 |
//! | 408, connect timeout, stalled stream    | `Timeout`            | E004 |
//! | invalid SSE, invalid JSON in a chunk    | `Malformed`          | E002 |
//! | 401/403, 404, other 4xx, TLS, oversized | `Permanent`          | E008 |
//!
//! The API key lives only in this module's client: it is sent in one header, the bytes
//! of every response pass through a [`redact::Redactor`] before they are decoded, and the
//! decoded text through a [`redact::TextRedactor`] (answer deltas as they accumulate, the
//! rest of the answer and error messages whole), so a server that echoes the key back —
//! split across stream events or JSON-escaped — cannot get it into a message, the log or text.
//! Both find the key in any JSON spelling of it (`\u0073k-…`), and the provider lends its
//! text redactor ([`Provider::secret_redactor`]) to whoever decodes the answer's JSON.

pub mod anthropic;
mod call;
mod client;
pub mod emit;
mod headers;
mod key_match;
pub mod openai;
mod openai_chunk;
mod openai_react;
pub mod redact;
pub mod sse;
mod status;
pub mod structured;
mod wire;

use std::sync::Arc;

use self::emit::redact_output;
use self::redact::TextRedactor;
use super::{AdmitFuture, ChunkSink, Provider, ProviderFuture};
use crate::base::protocol::AgentRequest;

pub use self::client::HttpProvider;
pub use self::emit::Emit;
pub use self::headers::profile_headers;
pub use self::wire::{api_error, event_json};

impl Provider for HttpProvider {
    fn name(&self) -> String {
        self.profile.label()
    }

    fn admit(&self) -> AdmitFuture<'_> {
        Box::pin(async move {
            self.admit_call()
                .await
                .map(|p| Box::new(p) as Box<dyn std::any::Any + Send>)
        })
    }

    fn secret_redactor(&self) -> Option<&TextRedactor> {
        Some(&self.text_redactor).filter(|r| r.is_active())
    }

    fn call_times(&self) -> crate::data::provider::call::CallTimes {
        crate::data::provider::call::CallTimes {
            timeout: self
                .profile
                .timeout_s
                .map(crate::base::ranges::duration_from_secs),
            first_token: self
                .profile
                .first_token_timeout_s
                .map(crate::base::ranges::duration_from_secs),
        }
    }

    fn structured_output(&self) -> (Option<&'static str>, Vec<String>) {
        (
            self.structured.current().map(structured::Dialect::as_str),
            self.structured.notes(),
        )
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.call(&request, attempt, sink)
                .await
                .map(|out| redact_output(&self.text_redactor, out))
                .map_err(|e| self.redact_error(e))
        })
    }
}
