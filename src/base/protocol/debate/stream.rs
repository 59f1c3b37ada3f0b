//! SSE stream events of a session and its error documents.

use serde::{Deserialize, Serialize};

use super::enums::{AgentRole, HostAction, SessionStatus};
use super::metadata::Plan;
use crate::base::protocol::{is_empty_map, Extra};

/// Payload of the SSE stream's end marker (`data: [DONE]`).
pub const SSE_DONE: &str = "[DONE]";

/// One JSON event of the SSE response stream (§6.1), tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// An agent spoke.
    AgentOutput(AgentOutputEvent),
    /// The host decided.
    HostDecision(HostDecisionEvent),
    /// The reporter's final report.
    FinalReport(FinalReportEvent),
    /// The session ended without its report (cancelled or failed); sent just before
    /// `[DONE]`.
    Error(StreamErrorEvent),
}

/// `error` stream event: why the stream ends without a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamErrorEvent {
    /// How the session ended: `cancelled` or `failed`.
    pub error: String,
    /// Why, as a word: `client_disconnected`, `server_stopping`, `session_failed`.
    pub reason: String,
    /// The same in a sentence.
    pub message: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `agent_output` stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentOutputEvent {
    /// Agent that spoke.
    pub agent: AgentRole,
    /// Round.
    pub round: u32,
    /// What it said.
    pub content: String,
    /// Fields not modelled here (e.g. a `position`).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `host_decision` stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostDecisionEvent {
    /// Action decided.
    pub action: HostAction,
    /// Why.
    pub reason: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `final_report` stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalReportEvent {
    /// The reporter.
    pub agent: AgentRole,
    /// Report text.
    pub content: String,
    /// The final plan.
    pub plan: Plan,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// The payload of one SSE `data:` line: an event or the end marker.
#[derive(Debug, Clone, PartialEq)]
pub enum SseData {
    /// A JSON event (boxed: events are large, the marker is empty).
    Event(Box<StreamEvent>),
    /// `[DONE]`.
    Done,
}

impl SseData {
    /// Parses the payload of a `data:` line (without the `data:` prefix).
    pub fn parse(payload: &str) -> serde_json::Result<SseData> {
        let payload = payload.trim();
        if payload == SSE_DONE {
            Ok(SseData::Done)
        } else {
            serde_json::from_str(payload).map(|e| SseData::Event(Box::new(e)))
        }
    }

    /// The payload of the `data:` line for this item.
    pub fn to_payload(&self) -> serde_json::Result<String> {
        match self {
            SseData::Event(e) => serde_json::to_string(e),
            SseData::Done => Ok(SSE_DONE.to_string()),
        }
    }
}

/// An error document of §7.1 / §7.3, tagged by `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum DebateError {
    /// `agent_timeout` (§7.1).
    AgentTimeout(AgentTimeoutError),
    /// `tool_execution_failed` (§7.3).
    ToolExecutionFailed(ToolExecutionFailedError),
}

/// `agent_timeout` error (§7.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTimeoutError {
    /// Agent that timed out.
    pub agent: AgentRole,
    /// Round.
    pub round: u32,
    /// What was done, e.g. `skip_agent`.
    pub action: String,
    /// What is used instead, e.g. the previous round's output.
    pub fallback: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `tool_execution_failed` error (§7.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExecutionFailedError {
    /// Tool that failed, e.g. `compare_positions`.
    pub tool: String,
    /// What is used instead, e.g. keyword-matching rules.
    pub fallback: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// The max-rounds document of §7.2: `status` is `max_rounds_reached`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaxRoundsReached {
    /// `max_rounds_reached`.
    pub status: SessionStatus,
    /// What is done, e.g. `force_summary`.
    pub action: String,
    /// Instruction to the reporter, e.g. report the diverging conclusions.
    pub reporter_instruction: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}
