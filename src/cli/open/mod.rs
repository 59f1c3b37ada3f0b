//! Setting the terminal UI up for a command: the look and keys it opens with, whether
//! to open it at all, and the ways it opens (on a live run, on a debate session, on the
//! database alone).

pub mod browse;
pub mod live;
pub mod setup;
pub mod summary;

pub use self::browse::{browse_tui, browse_tui_on, replay_options, ReplayOptions};
pub use self::live::{run_debate_tui, run_tui};
pub use self::setup::{ui_setup, want_tui, UiSetup};
