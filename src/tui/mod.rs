//! The TUI's runtime: the terminal guard, the loader thread, the replay feed, the
//! application and its driver loop. It sits above the model (`crate::tui::app`) and the
//! drawing (`crate::tui::ui`), and is the only part that owns the terminal.
//!
//! Imports point down this list: `terminal`, `data_file`, `loader`, `replay_feed`; `app`;
//! `effects`;
//! `driver`; `open`, the ways a command opens the TUI (on a live run, a debate session,
//! the database alone) with the look and keys it opens with.

pub mod app;
pub mod application;
pub mod data_file;
pub mod driver;
pub mod effects;
pub mod eval_ui;
pub mod issues_doc;
pub mod loader;
pub mod replay_feed;
pub mod run_screen;
pub mod terminal;
pub mod tree_ui;
pub mod ui;
pub mod worker;
