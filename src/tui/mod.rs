//! The TUI's runtime: the terminal guard, the loader thread, the replay feed, the
//! application and its driver loop. It sits above the model (`crate::app`) and the
//! drawing (`crate::ui`), and is the only part that owns the terminal.
//!
//! Imports point down this list: `terminal`, `loader`, `replay_feed`; `app`; `effects`;
//! `driver`.

pub mod app;
pub mod driver;
pub mod effects;
pub mod loader;
pub mod replay_feed;
pub mod terminal;
