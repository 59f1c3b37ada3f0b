//! Integration tests of the engine area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod attempts;
mod engine_errors;
mod engine_retry;
mod malformed_output;
mod quality_gate;
mod status_rules;
mod retry_jitter;
mod refs_fallback;
mod refs_resolve;
mod context_whole_prompt;
mod protocol_fixtures;
mod demo_timeouts;
