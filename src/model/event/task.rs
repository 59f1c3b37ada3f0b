//! The events of a task's life: blocking and resets, each model call (its start, the
//! streamed text, its end or its loss in a crash), grades, retries, failed references,
//! the planned context and a person's review.

use serde::{Deserialize, Serialize};

use super::TaskStatus;
use crate::base::protocol::refs::ResolutionFailure;
use crate::base::protocol::{Constraints, ErrorCode, GradeCounts, InvocationStatus};

/// A task was blocked (E006) by an upstream failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskBlocked {
    /// Always E006.
    pub error_code: ErrorCode,
    /// The upstream task that failed.
    pub upstream: String,
    /// Explanation.
    pub message: String,
}

/// A finished task goes back to pending: a person asked to retry it (or an upstream task
/// it was blocked by).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReset {
    /// Why.
    pub reason: String,
}

/// A task finished (for this run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskFinished {
    /// Final status.
    pub status: TaskStatus,
    /// Invocations made.
    pub attempts: u32,
    /// Atoms accepted.
    pub atoms: u32,
    /// The error that decided the outcome, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Why the task failed when no invocation says it: it failed before any call (a
    /// reference failure that aborts it, a prompt over its agent's input limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// An invocation started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationStarted {
    /// 1 for the first try.
    pub attempt: u32,
    /// Tokens of the system and user prompts.
    pub prompt_tokens: u64,
    /// Constraints sent.
    pub constraints: Constraints,
    /// Threshold applied by the gate.
    pub quality_threshold: String,
}

/// A piece of streamed model output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Text (as received; sanitised only for display).
    pub text: String,
}

/// Outcome of one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationFinished {
    /// Status by seed 001 §4.3; `None` when the invocation was cancelled.
    pub status: Option<InvocationStatus>,
    /// Wall time.
    pub execution_time_ms: u64,
    /// Tokens of the output text.
    pub output_tokens: u64,
    /// Chunks the provider streamed (the log may group fast chunks into fewer events).
    #[serde(default)]
    pub chunks: u64,
    /// Atoms parsed.
    pub atoms: u32,
    /// Mean score.
    pub avg_score: f64,
    /// Grades.
    pub grades: GradeCounts,
    /// Quality issues found.
    pub issues: u32,
    /// Error codes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCode>,
    /// First error's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Usage as the provider reported it (prompt and completion tokens), beside plexus's
    /// own counts; absent when the provider reports none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_usage: Option<crate::base::protocol::provider::Usage>,
    /// What the call cost, US dollars, at its model's price when it ended (absent when
    /// the model had no price, and in logs written before costs were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// A tool-using loop's prompt tokens over every step it sent (its start's
    /// `prompt_tokens` counts the first step only; `output_tokens` is then every step's
    /// text); absent for a single call and in logs written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_prompt_tokens: Option<u64>,
}

/// A call that was in flight when the process running it died, closed by the resume
/// that found it. The envelope names its task, invocation and agent. Its tokens are what
/// the log knows: the prompt counted when it started and the output that reached the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationLost {
    /// Its attempt number.
    pub attempt: u32,
    /// Tokens of its prompt, counted when it started.
    pub prompt_tokens: u64,
    /// Tokens of the output that reached the log before the crash.
    pub output_tokens: u64,
    /// Chunk events of it in the log.
    pub chunks: u64,
    /// When it started, ms since the Unix epoch.
    pub started_ts: i64,
    /// Its last event in the log, ms since the Unix epoch.
    pub last_ts: i64,
    /// What happened, in words.
    pub reason: String,
    /// What it cost as far as the log knows (its prompt and the output logged), US
    /// dollars; absent without a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// Grade of one atom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtomGrade {
    /// Asset id.
    pub asset_id: String,
    /// Atom type.
    pub atom_type: String,
    /// Grade.
    pub grade: crate::base::protocol::Grade,
    /// Score in [0, 1].
    pub score: f64,
    /// Confidence, if the atom gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Issues on this atom.
    pub issues: u32,
}

/// The gate graded an invocation's atoms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtomsGraded {
    /// One entry per atom.
    pub atoms: Vec<AtomGrade>,
}

/// A retry was scheduled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryScheduled {
    /// Attempt number of the retry.
    pub next_attempt: u32,
    /// Error being retried.
    pub error_code: ErrorCode,
    /// Wait before it.
    pub delay_ms: u64,
    /// What changes for the retry (threshold, timeout, temperature…).
    pub adjustment: String,
    /// A transient transport error (429, 5xx, reset): counted against the backoff's
    /// budget instead of the error code's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
    /// The previous error as the next attempt's prompt tells it to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// The batch (1-based) of a task run in batches: each batch has its own retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
}

/// How the adjustment note of a transient retry starts.
pub const TRANSIENT_NOTE: &str = "transient error";

impl RetryScheduled {
    /// Whether this retry counts against the transient backoff (logs written before the
    /// flag existed say so in the adjustment text).
    pub fn is_transient(&self) -> bool {
        self.transient || self.adjustment.starts_with(TRANSIENT_NOTE)
    }
}

/// A data reference failed to resolve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceFailed {
    /// Index in the task's data_references.
    pub index: usize,
    /// The seed 000 §3.2 record.
    pub failure: ResolutionFailure,
}

/// A task's context was planned (seed 000 §5–§7): how each input is passed and the
/// `context_management` report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextPlanned {
    /// Per input: mode, rule, priority, action, tokens before and after.
    pub inputs: Vec<crate::base::protocol::context::InputPlan>,
    /// The §7.2 report.
    pub report: crate::base::protocol::context::ContextManagement,
    /// The agent's effective data limit.
    pub effective_data_limit: u64,
}

/// A person accepted the atoms of a task stopped for review (E007, a hallucination).
/// The envelope names the task and the invocation whose atoms were reviewed; its time
/// is the decision's. The atoms are stored (marked as reviewed) and the task counts as
/// finished with `status`, so its dependents may run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewAccepted {
    /// Who decided.
    pub reviewer: String,
    /// What they noted, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The task's status from now on: `success` or `partial`, decided as if the
    /// fabricated references had not been flagged.
    pub status: TaskStatus,
    /// Atoms stored.
    pub atoms: u32,
    /// Their grades.
    pub grades: GradeCounts,
}

/// A person rejected the atoms of a task stopped for review (E007). The task stays
/// failed and its dependents stay blocked. The envelope names the task and the
/// invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRejected {
    /// Who decided.
    pub reviewer: String,
    /// Why.
    pub reason: String,
}
