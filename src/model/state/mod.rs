//! `RunState` and the pure reducer that folds engine events into it. No I/O, no clock,
//! no randomness: live runs, runs opened from the log and replays fold the same way.

pub mod arc_str;
pub mod clock;
mod dag;
pub mod debate;
pub mod debate_front;
pub mod debate_session;

mod fold_invocation;
mod fold_run;
mod fold_task;
pub mod json_field;
mod loop_steps;
pub mod loop_view;
mod ops;
pub mod output;
mod reduce;
mod review;
mod review_mark;
pub mod shared;
mod slim;
pub mod snapshot;
mod view;

pub use dag::layers_of;
pub use output::OutputBuffer;
pub use reduce::{reduce, DEBATE_MODE};
pub use review_mark::ReviewMark;
pub use view::{
    status_slot, AgentView, AtomView, InvocationFailure, InvocationSummary, Note, Quality,
    ReportedUsage, RunState, TaskView, DEFAULT_OUTPUT_BUDGET, MAX_NOTES,
};
