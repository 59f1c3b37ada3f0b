//! The Eval screen (`plexus eval open`): an eval's progress, rate, time left and
//! spend; a table per check (pass bar, 95% interval, difference to the parent
//! iteration with its interval, flips); the sample list, filtered by status, by a
//! check missed, by flips or by metadata; a sample opened with expected and found side
//! by side; marks for a rerun and the handoff. It reads the database only, so it
//! follows an eval another process is running.
//!
//! - [`model`]: what is shown, read from the database (one row per sample).
//! - [`state`]: the filters, the focus, the marks, and how keys change them.
//! - [`detail`]: one sample opened.
//! - [`draw`], [`draw_checks`], [`draw_detail`]: the screen drawn into a ratatui buffer.
//! - [`reader`]: the reads and writes, on the screen's reader thread; [`answers`]:
//!   what the screen asks it and how its answers change the screen.
//! - [`marks`]: the marks file of a rerun.
//! - [`run`]: the screen on the driver loop.

pub mod answers;
pub mod detail;
pub mod draw;
pub mod draw_checks;
pub mod draw_detail;
pub mod marks;
pub mod model;
pub mod reader;
pub mod run;
pub mod state;

pub use model::EvalModel;
pub use state::EvalScreen;
