//! plexus: a terminal workbench for multi-agent LLM work.
//!
//! The library holds the engine (plans, scheduling, quality gate), the store (one SQLite
//! file), the providers and the protocol types; the binary wires them to a CLI.

pub mod base;
pub mod cli;
pub mod data;
pub mod dev;
pub mod features;
pub mod model;
pub mod run;
pub mod tui;
