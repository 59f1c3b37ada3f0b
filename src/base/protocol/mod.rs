//! Serde types for every JSON structure of the seed protocol documents.
//!
//! `invocation` and `atom` follow seed 001 (AgentRequest / AgentResponse, atoms,
//! quality_check, errors); `refs` and `context` follow seed 000 (data references,
//! resolution failures, fallback / transfer / batch / priority configs and the
//! `context_management` report); `handoff` follows seed 002; `messages` seed 003;
//! `debate` seed 004. Unknown fields are kept (`extra`) so documents round-trip.

pub mod atom;
pub mod context;
pub mod debate;
pub mod debate_spec;
pub mod debate_turn;
pub mod handoff;
pub mod invocation;
pub mod lenient;
pub mod messages;
pub mod provider;
pub mod refs;
pub mod shared_json;

pub use atom::{Atom, AtomMetadata, DeltaAudit, Provenance};
pub use invocation::{
    AgentRequest, AgentResponse, CodeInfo, Constraints, Dependency, ErrorCode, ErrorInfo, Grade,
    GradeCounts, InvocationStatus, IssueSeverity, OutputRequirements, PaperInfo, QualityCheck,
    QualityIssue, RequestContext, ResponseOutput, UserPrompt,
};
pub use refs::{
    DataReference, DbCondition, DbQueryRef, FallbackConfig, FallbackStrategy, FileRef, FilterOp,
    OrderBy, RefFilter, TaskOutputRef, Transform,
};
pub use shared_json::SharedJson;

/// A JSON object that keeps fields this crate does not model, so documents round-trip.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// `skip_serializing_if` helper for empty maps of extra fields.
pub(crate) fn is_empty_map(m: &Extra) -> bool {
    m.is_empty()
}
