//! `EngineEvent` and its `Envelope`: the contract between engine, store, UI and replay.
//!
//! Every fact the engine reports is an event; the store persists it in `execution_logs`
//! as `(event_id, run_id, seq, ts, kind, task_id, invocation_id, agent, payload)`, where
//! `event_id` numbers the run and the sequence number together and `payload` is the JSON
//! of the event's struct without its kind.
//!
//! The event types live in submodules by what they tell of: [`status`] (task and run
//! status), [`run`] (a run's life), [`task`] (a task's life and its model calls),
//! [`debate`] (a debate session); a tool-using loop's events are in
//! [`crate::base::loop_events`]. Everything is re-exported here.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub mod debate;
pub mod run;
pub mod status;
pub mod task;

pub use run::*;
pub use status::*;
pub use task::*;

pub use crate::base::loop_events::{
    ContextCompressed, LoopFinished, SkillActivated, SkillRefused, ToolAnswered, ToolCalled,
};
pub use debate::{
    DebateErrorLogged, DebateFinished, DebateOutput, DebateReply, DebateStarted, DebateTurnStarted,
    HostDecided, PositionsCompared,
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
                        crate::base::json_text::push_json_str(buf, &c.text);
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
    /// The run's calls cost its whole money budget: no new call starts.
    BudgetReached(BudgetReached) = "budget_reached",
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
