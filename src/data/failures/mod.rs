//! Failure trees on disk: the Execute agent's output layout
//! (`execution_outputs/iteration_N/{samples,execution_traces,evaluation_results,attribution_analysis}`,
//! `failure_summary.json`, `layer1_problems_report.json`) and the `ExecuteToInitContext`
//! handoff that points into it, and the `InitToExecuteContext` before it — read lazily,
//! written atomically, generated for tests.
//!
//! No terminal code lives here; the Failures screen calls it.
//!
//! - [`index`]: [`open`] a tree or a context file; only the index is read up front.
//! - [`doc`]: a sample's four documents, loaded when asked, each with a [`DocStatus`]
//!   (ok, missing, broken, truncated, partial, too large, unreadable) — never an error.
//! - [`report`]: the problems report as types.
//! - [`query`]: filters and sorts over the index, as row numbers.
//! - [`trace`] and [`fold`]: a trace as a conversation; long histories folded.
//! - [`budget`]: token costs of what was opened against the on-demand budget.
//! - [`handoff`]: an `ExecuteToInitContext` for chosen samples, with its size check.
//! - [`facts`]: what an iteration's documents say (counts, mean score, a sample's
//!   failure type, checkers, priority, turns), read when a handoff is written.
//! - [`init_context`]: the Init→Execute context: written, and read back with its
//!   design files.
//! - [`summary`]: the `failure_summary.json` format (the protocol names the file only).
//! - [`write`]: a tree written into a temporary directory, then renamed into place.
//! - [`generate`]: realistic trees in the protocol's own example domain.
//! - [`from_run`]: plexus's own failed invocations written as a tree.

pub mod budget;
mod conversation;
mod discover;
pub mod doc;
mod eval_trace;
pub mod facts;
pub mod fold;
pub mod from_run;
mod from_run_report;
mod from_run_text;
pub mod handoff;
pub mod index;
mod index_read;
pub mod init_context;
pub mod layout;
pub mod query;
pub mod report;
pub mod sample;
pub mod size;
pub mod summary;
pub mod trace;
pub mod write;

pub use budget::{BudgetLevel, TokenBudget, DEFAULT_BUDGET};
pub use conversation::{Conversation, ToolCall, Turn};
pub use doc::{load_file, load_text, Doc, DocKind, DocStatus, LoadOptions, DEFAULT_DOC_CAP};
pub use fold::{key_turns, Folding, Keep, KeyTurn, Row, DEFAULT_KEEP};
pub use from_run::{export_run, ExportError, ExportReport};
pub use handoff::{
    build_handoff, check_size, fired_rule, index_entry, index_entry_read, write_handoff,
    HandoffSpec, SizeCheck, SizeVerdict,
};
pub use index::{
    open, open_with, ContextInfo, Facets, IndexSource, Iteration, OpenError, Sample, Selection,
    Tree,
};
pub use init_context::{
    build_init_context, write_init_context, DesignFile, InitContext, InitError, InitSpec,
};
pub use query::{Filter, Selector, Sort, SortKey};
pub use report::{PriorityItem, Problem, ProblemsReport};
pub use summary::FailureSummary;
pub use trace::parse_trace;
