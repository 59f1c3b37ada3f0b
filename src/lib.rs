//! plexus: a terminal workbench for multi-agent LLM work.
//!
//! The library holds the engine (plans, scheduling, quality gate), the store (one SQLite
//! file), the providers and the protocol types; the binary wires them to a CLI.

pub mod agents;
pub mod allocator;
pub mod app;
pub mod bench;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod conversation;
pub mod cost;
pub mod crash;
pub mod debate;
pub mod diff;
pub mod engine;
pub mod eval;
pub mod eval_ui;
pub mod event;
pub mod exit;
pub mod failures;
pub mod gate;
pub mod http_server;
pub mod http_status;
pub mod json_diff;
pub mod json_text;
pub mod jsonpath;
pub mod launch;
pub mod logging;
pub mod loop_events;
pub mod open_files;
pub mod otel;
pub mod out;
pub mod panic_guard;
pub mod pause_point;
pub mod plan;
pub mod portable;
pub mod protocol;
pub mod provider;
pub mod ranges;
pub mod replay;
pub mod resolve;
pub mod review;
pub mod signals;
pub mod skills;
pub mod state;
pub mod store;
pub mod table;
pub mod text;
pub mod tokens;
pub mod tools;
pub mod tree_ui;
pub mod tui;
pub mod ui;
