//! Integration tests of the ui area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod app_update;
mod config_theme;
mod debate_screen;
mod eval_screen;
mod failures_screen;
mod keys;
mod loop_screen;
mod popups;
mod reducer;
mod review_wait;
mod run_screen;
mod runs_screen;
mod theme_contrast;
mod tree_browser;
mod tui_render;
