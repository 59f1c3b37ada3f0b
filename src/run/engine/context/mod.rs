//! Context budgets (seed 000 §4–§6): per-agent limits, the transfer mode of each input,
//! summaries, priority trimming with its `context_management` report, and batching.

pub mod batch;
pub mod limits;
mod payload;
pub mod plan;
pub mod prompt;
pub mod select;
pub mod settings;
mod table;
pub mod trim;
