//! Integration tests of the pty area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod tui_pty;
mod run_screen_pty;
mod failures_pty;
mod debate_pty;
