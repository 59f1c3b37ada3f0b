//! Integration tests of the ui area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod app_update;
mod run_screen;
mod tui_render;
mod tree_browser;
mod failures_screen;
mod debate_screen;
mod theme_contrast;
mod config_theme;
mod keys;
mod reducer;
