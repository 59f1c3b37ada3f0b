//! The TUI's model and update, pure (no terminal, no drawing): actions and the keymap,
//! the UI state and its parts, `update` and each screen's keys, typed input, the mouse,
//! and the replay transport. The runtime that owns the terminal is `crate::tui`; drawing
//! is `crate::tui::ui`; neither is imported here.
//!
//! Imports point down this list: `action`, `docs`, `folds`, `nav`, `failures_list`,
//! `keymap`; `effect`; `transport`, `debate`; `ui_state`; `atoms_view`, `select`;
//! `follow`; the screens' keys (`attempts`, `debate_keys`, `review_keys`,
//! `failures_keys`, `loop_keys`, `run_keys`, `atoms_keys`, `runs_keys`,
//! `overlay_keys`); `update`;
//! `command_line`, `input`, `mouse` (these turn text and clicks into actions for
//! `update`).

pub mod action;
pub mod atoms_keys;
pub mod atoms_view;
pub mod attempts;
pub mod command_line;
pub mod debate;
pub mod debate_keys;
pub mod docs;
pub mod effect;
pub mod failures_keys;
pub mod failures_list;
pub mod folds;
pub mod follow;
pub mod input;
pub mod keymap;
pub mod loop_keys;
pub mod mouse;
pub mod nav;
pub mod overlay_keys;
pub mod review_keys;
pub mod run_keys;
pub mod runs_keys;
pub mod runs_list;
pub mod select;
pub mod transport;
pub mod ui_state;
pub mod update;
pub mod views;

pub use action::{Action, Screen};
pub use effect::Effect;
pub use ui_state::UiState;
pub use update::update;
