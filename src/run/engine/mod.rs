//! The engine: a library with no terminal code. It takes a plan, a provider and a store
//! writer, runs the plan's DAG, and reports everything as typed events.

pub mod answer_shape;
mod attempt;
mod attempt_end;
mod attempt_request;
mod budget;
mod call_ids;
mod carry_over;
pub mod config;
pub mod context;
pub mod emit;
mod graph;
mod inputs;
mod money;
mod outcome;
pub mod parse;
mod planned;
pub mod react_loop;
mod reopen;
pub mod request;
mod response_json;
mod resume;
/// The retry policy, shared with every model call (it lives with the providers).
pub use crate::data::provider::retry;
mod review;
mod run;
mod run_ctx;
mod run_spec;
mod sink;
mod stopped_call;
mod toolbox;
mod worker;

pub use config::EngineConfig;
pub use run::start_run;
pub use run_spec::{
    Control, RecordedSuccess, ResumeState, Retained, RunHandle, RunOutcome, RunSpec, RETAINED_EVERY,
};

/// Errors that stop a run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::data::store::StoreError),
    /// The run could not continue.
    #[error("run failed: {0}")]
    Internal(String),
    /// A worker panicked (a bug): the run was stopped and left interrupted.
    #[error("a worker crashed (a bug): {0}; the run was stopped and stays resumable")]
    WorkerCrashed(String),
}
