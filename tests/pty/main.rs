//! Integration tests of the pty area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod debate_pty;
mod eval_pty;
mod eval_read_pty;
mod failures_pty;
mod review_wait_pty;
mod run_screen_pty;
mod runs_pty;
mod tui_pty;
