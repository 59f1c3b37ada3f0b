//! ReAct tools (seed 003): the `Tool` abstraction, the built-in tools, and the executor
//! that turns one tool call into one observation.
//!
//! A call is checked (known tool, arguments ≤ 10 MB and matching the tool's schema), its
//! output level decided ([`effective_level`]), answered from the run's [`ToolCache`] when
//! the tool is idempotent, else run under a time limit with retries of timeouts and
//! resource errors ([`execute_cached`]); the data is rendered at the level or stored in
//! the run's data folder when it is large or the level is full. Every failure is one
//! observation in the unified error format. Nothing here prints.

pub mod args;
pub mod atom_query;
pub mod cache;
pub mod context;
pub mod error;
pub mod execute;
pub mod fetch_reference;
pub mod file_reader;
pub mod file_search;
pub mod level;
pub mod registry;
pub mod retry;
pub mod spill;
pub mod time;
pub mod tool;
pub mod validate;

pub use cache::{canonical_json, ToolCache};
pub use context::{CancelFlag, ToolClock, ToolContext};
pub use error::{ToolError, ToolErrorCode};
pub use execute::{error_result, execute, execute_cached, observe, tool_result_block, ToolRun};
pub use level::effective_level;
pub use registry::ToolRegistry;
pub use retry::{RecordingSleeper, Sleeper, TokioSleeper};
pub use spill::SPILL_THRESHOLD_BYTES;
pub use tool::{Payload, Tool, ToolData, ToolDefinition, ToolFuture};
pub use validate::{validate_args, validate_input_size};
