//! Layer 8, what is built on the engine: evaluations over a dataset, OpenTelemetry traces, debates.

pub mod debate;
pub mod eval;
pub mod otel;
