//! The failure-tree browser (`plexus failures PATH`): an evaluation pipeline's output
//! tree or a handoff file of either direction, browsed from the keyboard. The sample
//! list (filter, sort, search, marks), the problems report as a view of its own, a
//! sample's four documents as tabs (the trace as a conversation with long histories
//! folded), a running total of the tokens opened against the on-demand budget, the
//! handoff of marked samples, and an Init→Execute context's design files.
//!
//! - [`state`]: what is on screen and how keys change it (no terminal).
//! - [`detail`]: one sample opened: its documents, folding and lines.
//! - [`design`] and [`draw_design`]: an Init→Execute context's design files.
//! - [`prompt`]: the input line: search, and the handoff's path and reason.
//! - [`draw`]: the screens drawn into a ratatui buffer.
//! - [`reader`]: the reads and writes, on the browser's reader thread.
//! - [`run`]: the browser on the driver loop.

pub mod design;
mod design_keys;
pub mod detail;
pub mod draw;
pub mod draw_design;
pub mod prompt;
pub mod reader;
pub mod run;
pub mod state;

pub use state::{Browser, View};
