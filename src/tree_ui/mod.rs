//! The failure-tree browser (`plexus failures PATH`): an evaluation pipeline's output
//! tree or handoff file, browsed from the keyboard. The sample list (filter, sort,
//! search, marks), the problems report as a view of its own, a sample's four documents
//! as tabs (the trace as a conversation with long histories folded), a running total of
//! the tokens opened against the on-demand budget, and the handoff of marked samples.
//!
//! - [`state`]: what is on screen and how keys change it (no terminal).
//! - [`detail`]: one sample opened: its documents, folding and lines.
//! - [`draw`]: the screens drawn into a ratatui buffer.
//! - [`run`]: the terminal loop.

pub mod detail;
pub mod draw;
pub mod run;
pub mod state;

pub use state::{Browser, View};
