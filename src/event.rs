//! `EngineEvent` and its `Envelope`: the contract between engine, store, UI and replay.
//!
//! Every fact the engine reports is an event; the store persists it in `execution_logs`
//! as `(event_id, run_id, seq, ts, kind, task_id, invocation_id, agent, payload)`, where
//! `event_id` numbers the run and the sequence number together and `payload` is the JSON
//! of the event's struct without its kind.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::protocol::refs::ResolutionFailure;
use crate::protocol::{Constraints, ErrorCode, GradeCounts, InvocationStatus};

/// Status of a task in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Waiting for dependencies.
    Pending,
    /// Dependencies met, waiting for a slot.
    Ready,
    /// An invocation is in flight.
    Running,
    /// Finished: success.
    Success,
    /// Finished: partial.
    Partial,
    /// Finished: failed.
    Failed,
    /// Finished: over time.
    Timeout,
    /// Not run because a dependency failed (E006).
    Blocked,
    /// Stopped by a cancel.
    Cancelled,
}

impl TaskStatus {
    /// Every status, in display order.
    pub const ALL: [TaskStatus; 9] = [
        TaskStatus::Pending,
        TaskStatus::Ready,
        TaskStatus::Running,
        TaskStatus::Success,
        TaskStatus::Partial,
        TaskStatus::Failed,
        TaskStatus::Timeout,
        TaskStatus::Blocked,
        TaskStatus::Cancelled,
    ];

    /// The status as text.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Ready => "ready",
            TaskStatus::Running => "running",
            TaskStatus::Success => "success",
            TaskStatus::Partial => "partial",
            TaskStatus::Failed => "failed",
            TaskStatus::Timeout => "timeout",
            TaskStatus::Blocked => "blocked",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Whether the task will not run again in this run.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Success
                | TaskStatus::Partial
                | TaskStatus::Failed
                | TaskStatus::Timeout
                | TaskStatus::Blocked
        )
    }

    /// Whether downstream tasks may use this task's output.
    pub fn satisfies_dependents(self) -> bool {
        matches!(self, TaskStatus::Success | TaskStatus::Partial)
    }

    /// The task status an invocation status leads to.
    pub fn from_invocation(s: InvocationStatus) -> TaskStatus {
        match s {
            InvocationStatus::Success => TaskStatus::Success,
            InvocationStatus::Partial => TaskStatus::Partial,
            InvocationStatus::Failed => TaskStatus::Failed,
            InvocationStatus::Timeout => TaskStatus::Timeout,
        }
    }
}

/// Status of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Dispatching tasks.
    Running,
    /// Not dispatching new tasks.
    Paused,
    /// Every task succeeded.
    Succeeded,
    /// Every task finished with success or partial, some partial.
    Partial,
    /// Some task failed, timed out or was blocked.
    Failed,
    /// Cancelled by a person.
    Cancelled,
    /// Stopped before the end (quit or crash); `plexus resume` continues it.
    Interrupted,
}

impl RunStatus {
    /// The status as text.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Paused,
            RunStatus::Succeeded,
            RunStatus::Partial,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// Whether a process exiting with this status should exit non-zero.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            RunStatus::Failed | RunStatus::Cancelled | RunStatus::Interrupted
        )
    }
}

/// A task as announced at run start: enough to draw the DAG from the log alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// Task id.
    pub task_id: String,
    /// Full agent name.
    pub agent: String,
    /// Upstream ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
}

/// Budget facts about an agent announced at run start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Full name.
    pub name: String,
    /// Most input tokens.
    pub max_input_tokens: u64,
    /// Data area.
    pub data_area_tokens: u64,
}

/// The run started (or a resumed run re-announced itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStarted {
    /// Plan id.
    pub plan_id: String,
    /// Execution mode.
    pub execution_mode: String,
    /// Provider name (`simulated`, …).
    pub provider: String,
    /// Seed of the simulated provider.
    pub seed: u64,
    /// Concurrency limit.
    pub concurrency: usize,
    /// Agents used.
    pub agents: Vec<AgentInfo>,
    /// Tasks and edges.
    pub tasks: Vec<TaskInfo>,
}

/// A crash was found when resuming: the run was left `running` with no process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashDetected {
    /// Last event seq found in the log.
    pub last_seq: u64,
    /// Timestamp of that event (ms).
    pub last_ts: i64,
    /// Tasks that were in flight and will be restarted.
    pub interrupted_tasks: Vec<String>,
}

/// A resuming process took the run over from an owner that was gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseTakenOver {
    /// The previous owner's process id.
    pub previous_pid: u32,
    /// Its host.
    pub previous_host: String,
    /// When it took the run (RFC 3339).
    pub previous_since: String,
    /// Its last heartbeat, ms since the Unix epoch.
    pub previous_heartbeat_ms: i64,
    /// Why it counts as gone: `process_gone` or `heartbeat_stale`.
    pub reason: String,
}

/// The run resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResumed {
    /// Status the run had before.
    pub previous_status: RunStatus,
    /// Tasks already finished (not run again).
    pub finished_tasks: u32,
    /// Tasks that will run.
    pub remaining_tasks: u32,
}

/// Empty payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// A cancel was requested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelRequested {
    /// Why.
    pub reason: String,
}

/// The run stopped dispatching and ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    /// Final status.
    pub status: RunStatus,
    /// Tasks by final status.
    pub tasks: BTreeMap<TaskStatus, u32>,
    /// Atoms accepted.
    pub atoms: u32,
    /// Grades of accepted atoms.
    pub grades: GradeCounts,
}

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
    pub provider_usage: Option<crate::provider::Usage>,
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
}

/// Grade of one atom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtomGrade {
    /// Asset id.
    pub asset_id: String,
    /// Atom type.
    pub atom_type: String,
    /// Grade.
    pub grade: crate::protocol::Grade,
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
    pub inputs: Vec<crate::engine::context::plan::InputPlan>,
    /// The §7.2 report.
    pub report: crate::protocol::context::ContextManagement,
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

pub use crate::debate::events::{
    DebateErrorLogged, DebateFinished, DebateOutput, DebateReply, DebateStarted, DebateTurnStarted,
    HostDecided, PositionsCompared,
};
pub use crate::loop_events::{
    ContextCompressed, LoopFinished, SkillActivated, SkillRefused, ToolAnswered, ToolCalled,
};

macro_rules! engine_events {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty) = $kind:literal, )*) => {
        /// A fact reported by the engine. Persisted, replayable, folded by reducers.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum EngineEvent {
            $( $(#[$doc])* #[serde(rename = $kind)] $variant($ty), )*
        }

        impl EngineEvent {
            /// Every kind name.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            /// The kind stored in `execution_logs.kind`.
            pub fn kind(&self) -> &'static str {
                match self { $( EngineEvent::$variant(_) => $kind, )* }
            }

            /// Writes the payload (the event without its kind) as JSON.
            pub fn write_payload<W: std::io::Write>(&self, w: W) -> serde_json::Result<()> {
                match self { $( EngineEvent::$variant(x) => serde_json::to_writer(w, x), )* }
            }

            /// Appends the payload to `buf`, as [`EngineEvent::write_payload`] writes it;
            /// a chunk's text (the bulk of a log) goes through the fast string writer.
            pub fn append_payload(&self, buf: &mut Vec<u8>) -> serde_json::Result<()> {
                match self {
                    EngineEvent::Chunk(c) => {
                        buf.extend_from_slice(b"{\"text\":");
                        crate::json_text::push_json_str(buf, &c.text);
                        buf.push(b'}');
                        Ok(())
                    }
                    other => other.write_payload(buf),
                }
            }

            /// Rebuilds an event from its stored kind and payload.
            pub fn from_parts(kind: &str, payload: &str) -> Result<EngineEvent, EventDecodeError> {
                match kind {
                    $( $kind => serde_json::from_str(payload)
                        .map(EngineEvent::$variant)
                        .map_err(|e| EventDecodeError::Payload { kind: kind.to_string(), message: e.to_string() }), )*
                    other => Err(EventDecodeError::UnknownKind(other.to_string())),
                }
            }
        }
    };
}

engine_events! {
    /// The run started.
    RunStarted(RunStarted) = "run_started",
    /// A crash was detected on resume.
    CrashDetected(CrashDetected) = "crash_detected",
    /// A resuming process took the run over from an owner that was gone.
    LeaseTakenOver(LeaseTakenOver) = "lease_taken_over",
    /// The run resumed.
    RunResumed(RunResumed) = "run_resumed",
    /// Dispatch paused.
    RunPaused(Empty) = "run_paused",
    /// Dispatch resumed.
    RunUnpaused(Empty) = "run_unpaused",
    /// Cancel requested.
    CancelRequested(CancelRequested) = "cancel_requested",
    /// The run ended.
    RunFinished(RunFinished) = "run_finished",
    /// A task's dependencies are met.
    TaskReady(Empty) = "task_ready",
    /// A task was blocked by a failed dependency.
    TaskBlocked(TaskBlocked) = "task_blocked",
    /// A task finished.
    TaskFinished(TaskFinished) = "task_finished",
    /// A finished task was reset for a retry.
    TaskReset(TaskReset) = "task_reset",
    /// An invocation started.
    InvocationStarted(InvocationStarted) = "invocation_started",
    /// Streamed output.
    Chunk(Chunk) = "chunk",
    /// An invocation ended.
    InvocationFinished(InvocationFinished) = "invocation_finished",
    /// A call in flight at a crash, closed by the resume.
    InvocationLost(InvocationLost) = "invocation_lost",
    /// Atoms were graded.
    AtomsGraded(AtomsGraded) = "atoms_graded",
    /// A retry was scheduled.
    RetryScheduled(RetryScheduled) = "retry_scheduled",
    /// A data reference failed.
    ReferenceFailed(ReferenceFailed) = "reference_failed",
    /// A task's context was planned.
    ContextPlanned(ContextPlanned) = "context_planned",
    /// A person accepted a task's atoms after a hallucination.
    ReviewAccepted(ReviewAccepted) = "review_accepted",
    /// A person rejected a task's atoms after a hallucination.
    ReviewRejected(ReviewRejected) = "review_rejected",
    /// A tool-using loop's step asked for a tool.
    ToolCalled(ToolCalled) = "tool_called",
    /// A tool answered.
    ToolAnswered(ToolAnswered) = "tool_answered",
    /// A skill was activated.
    SkillActivated(SkillActivated) = "skill_activated",
    /// A skill activation was refused (cycle or depth).
    SkillRefused(SkillRefused) = "skill_refused",
    /// A conversation was compressed.
    ContextCompressed(ContextCompressed) = "context_compressed",
    /// A tool-using loop ended.
    LoopFinished(LoopFinished) = "loop_finished",
    /// A debate session's settings.
    DebateStarted(DebateStarted) = "debate_started",
    /// A debate agent started a turn.
    DebateTurnStarted(DebateTurnStarted) = "debate_turn_started",
    /// One model call of a debate turn answered.
    DebateReply(DebateReply) = "debate_reply",
    /// A debate turn ended with its output.
    DebateOutput(DebateOutput) = "debate_output",
    /// A round's positions compared.
    PositionsCompared(PositionsCompared) = "positions_compared",
    /// The host decided.
    HostDecided(HostDecided) = "host_decided",
    /// An error handled by a fallback.
    DebateError(DebateErrorLogged) = "debate_error",
    /// The debate ended.
    DebateFinished(DebateFinished) = "debate_finished",
}

/// A stored event that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventDecodeError {
    /// The kind is not known to this build.
    #[error("unknown event kind `{0}`")]
    UnknownKind(String),
    /// The payload does not match the kind.
    #[error("bad payload for `{kind}`: {message}")]
    Payload {
        /// Kind.
        kind: String,
        /// Decoder message.
        message: String,
    },
}

/// An event with its place in the run's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Run.
    pub run_id: Arc<str>,
    /// Dense sequence number within the run, from 1.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub ts: i64,
    /// Task concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Arc<str>>,
    /// Invocation concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<Arc<str>>,
    /// Agent concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Arc<str>>,
    /// The fact.
    #[serde(flatten)]
    pub event: EngineEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_chunk_payload_is_the_serde_payload() {
        for text in [
            "",
            "plain",
            "{\n  \"a\": \"b\\c\"\n}\t\u{1}",
            "你好 \u{1b}[31m",
        ] {
            let ev = EngineEvent::Chunk(Chunk { text: text.into() });
            let (mut fast, mut serde) = (Vec::new(), Vec::new());
            ev.append_payload(&mut fast).expect("appends");
            ev.write_payload(&mut serde).expect("serialises");
            assert_eq!(String::from_utf8(fast), String::from_utf8(serde));
        }
    }

    #[test]
    fn payload_round_trips_through_kind_and_text() {
        let ev = EngineEvent::Chunk(Chunk {
            text: "你好 \u{1b}[31m".into(),
        });
        let mut buf = Vec::new();
        ev.write_payload(&mut buf).expect("serialises");
        let text = String::from_utf8(buf).expect("utf8");
        assert!(!text.contains("kind"));
        assert_eq!(EngineEvent::from_parts(ev.kind(), &text), Ok(ev));
        assert!(matches!(
            EngineEvent::from_parts("nope", "{}"),
            Err(EventDecodeError::UnknownKind(_))
        ));
        assert!(matches!(
            EngineEvent::from_parts("chunk", "{}"),
            Err(EventDecodeError::Payload { .. })
        ));
    }
}
