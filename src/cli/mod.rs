//! Layer 10, the command line: its definition (`args`), what commands share to launch a
//! run (`launch`) and to open the TUI (`open`), and one module per command (`commands`).

pub mod args;
pub mod commands;
pub mod launch;
pub mod open;
