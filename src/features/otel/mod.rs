//! Runs as OpenTelemetry traces over OTLP/HTTP: the span model (a pure fold of a run's
//! events, [`build`]), the exporter (protobuf or JSON, batched, with retries), the live
//! sender fed from a run's committed events, and the export of a stored run.

pub mod attrs;
pub mod build;
mod chat;
mod debate;
mod fold;
mod fold_parts;
pub mod live;
mod notes;
pub mod send;
pub mod settings;
pub mod stored;
mod tools;

pub use build::{spans_of, BuildOptions, ChatUsage, ContentSource, CostFn, Prompt, SpanBuilder};
pub use settings::{OtlpSettings, Protocol};
#[cfg(test)]
mod tests;
