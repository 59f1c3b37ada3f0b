//! Integration tests of the engine area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod attempts;
mod context_whole_prompt;
mod context_window;
mod data_types;
mod demo_timeouts;
mod engine_errors;
mod engine_retry;
mod malformed_output;
mod protocol_fixtures;
mod quality_gate;
mod refs_fallback;
mod refs_resolve;
mod retry_jitter;
mod status_rules;
