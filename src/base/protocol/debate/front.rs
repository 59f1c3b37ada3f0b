//! The front end's view of a session (`type: multi_agent_session`): each round's outputs
//! with their positions and the host's decision, and the final report. Field names are
//! the front end's (`sessionId`, `hostDecision`, `finalReport`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::enums::{AgentRole, HostAction, SessionStatus};
use super::metadata::Plan;
use super::output::PositionSummary;

/// `multi_agent_session`.
pub const FRONT_END_TYPE: &str = "multi_agent_session";

/// A session as the front end shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiAgentMessage {
    /// Always `multi_agent_session`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The session's id (its run id).
    pub session_id: String,
    /// How the session stands or ended (`in_progress`, `converged`, `failed`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SessionStatus>,
    /// The rounds, in order.
    pub rounds: Vec<FrontRound>,
    /// The reporter's report, once written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_report: Option<FrontReport>,
}

/// One round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontRound {
    /// Round number.
    pub round: u32,
    /// What each agent said.
    pub outputs: Vec<FrontOutput>,
    /// The host's decision after the round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_decision: Option<FrontDecision>,
}

/// One agent's output in a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontOutput {
    /// Who spoke.
    pub agent: AgentRole,
    /// What it said.
    pub content: String,
    /// Its position summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<PositionSummary>,
}

/// The host's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontDecision {
    /// Action.
    pub action: HostAction,
    /// Why.
    pub reason: String,
    /// The round's consensus; null when the round was not compared.
    pub consensus_level: Option<f64>,
}

/// The final report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontReport {
    /// The report's text.
    pub content: String,
    /// The final plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// The TODO list of the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todo: Option<Value>,
}
