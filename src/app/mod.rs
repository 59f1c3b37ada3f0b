//! The application: actions, the UI state and its update function, the loader thread,
//! the terminal guard and the driver loop.

pub mod action;
pub mod atoms_view;
pub mod attempts;
pub mod command_line;
pub mod debate;
pub mod driver;
pub mod failures_keys;
pub mod failures_list;
pub mod follow;
pub mod loader;
pub mod mouse;
pub mod replay_app;
pub mod replay_feed;
pub mod review_keys;
pub mod terminal;
pub mod transport;
pub mod ui_state;
pub mod update;

pub use action::{Action, Screen};
pub use ui_state::UiState;
pub use update::{update, Effect};
