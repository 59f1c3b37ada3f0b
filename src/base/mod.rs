//! Layer 0–1, the base: the protocol's types, text and token tools, JSONPath, the config, agents, skills, a loop's conversation, and small helpers that import nothing above them.

pub mod agents;
pub mod allocator;
pub mod clock;
pub mod config;
pub mod conversation;
pub mod cost;
pub mod http_server;
pub mod http_status;
pub mod json_diff;
pub mod json_text;
pub mod jsonpath;
pub mod logging;
pub mod loop_events;
pub mod open_files;
pub mod out;
pub mod panic_guard;
pub mod pause_point;
pub mod protocol;
pub mod ranges;
pub mod signals;
pub mod skills;
pub mod table;
pub mod text;
pub mod tokens;
