//! The structured `metadata` of each agent's output: planner, critic, host, reporter.

use serde::{Deserialize, Serialize};

use super::enums::{AgentRole, HostAction, Level};
use super::output::{AgentOutput, PositionSummary};
use crate::base::protocol::{is_empty_map, Extra};

/// Planner output (§2.2).
pub type PlannerOutput = AgentOutput<PlannerMetadata>;
/// Critic output (§2.3).
pub type CriticOutput = AgentOutput<CriticMetadata>;
/// Host output (§2.4).
pub type HostOutput = AgentOutput<HostMetadata>;
/// Reporter output (§2.5).
pub type ReporterOutput = AgentOutput<ReporterMetadata>;

/// `metadata` of a planner output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannerMetadata {
    /// The planner's position.
    pub position: PositionSummary,
    /// The plan proposed.
    pub plan: Plan,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// A structured plan: phases of tasks with estimated hours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Title (absent in the reporter's nested plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Phases in order.
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// Hours over all phases.
    #[serde(deserialize_with = "crate::base::protocol::lenient::f64")]
    pub total_estimated_hours: f64,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One phase of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Name, e.g. `阶段1：基础强化`.
    pub phase_name: String,
    /// Length, e.g. `6周`.
    pub duration: String,
    /// Tasks of the phase.
    #[serde(default)]
    pub tasks: Vec<PlanTask>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One task of a plan phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanTask {
    /// Title.
    pub title: String,
    /// Estimated effort.
    #[serde(deserialize_with = "crate::base::protocol::lenient::f64")]
    pub estimated_hours: f64,
    /// Deadline (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `metadata` of a critic output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticMetadata {
    /// The critic's position.
    pub position: PositionSummary,
    /// The critique.
    pub critique: Critique,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// A critique of another agent's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Critique {
    /// Agent criticised.
    pub target_agent: AgentRole,
    /// Round criticised.
    #[serde(deserialize_with = "crate::base::protocol::lenient::u32")]
    pub target_round: u32,
    /// Risks found.
    #[serde(default)]
    pub risks: Vec<Risk>,
    /// Fixes proposed.
    #[serde(default)]
    pub suggestions: Vec<Suggestion>,
    /// Overall validity.
    pub validity_check: ValidityCheck,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One risk of a critique.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Risk {
    /// The risk.
    pub risk: String,
    /// How severe.
    pub severity: Level,
    /// What it would cause.
    pub impact: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One suggestion of a critique.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// Issue addressed.
    pub issue: String,
    /// Proposed solution.
    pub solution: String,
    /// How urgent.
    pub priority: Level,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `validity_check` of a critique.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidityCheck {
    /// The plan can be carried out.
    pub feasible: bool,
    /// The plan is realistic.
    pub realistic: bool,
    /// The plan covers everything needed.
    pub complete: bool,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `metadata` of a host output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostMetadata {
    /// What happens next.
    pub decision: HostDecision,
    /// The consensus analysis behind it.
    pub analysis: ConsensusAnalysis,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `decision` of a host output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostDecision {
    /// Action taken.
    pub action: HostAction,
    /// Why.
    pub reason: String,
    /// Agents speaking next round.
    #[serde(default)]
    pub next_agents: Vec<AgentRole>,
    /// What the next round must and must not do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<DecisionConstraints>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `constraints` of a host decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionConstraints {
    /// Points the next round must address.
    #[serde(default)]
    pub must_address: Vec<String>,
    /// Things to avoid.
    #[serde(default)]
    pub avoid: Vec<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `analysis` of a host output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsensusAnalysis {
    /// Consensus level in [0, 1]; null for a round whose positions were not compared.
    pub consensus_level: Option<f64>,
    /// Pairwise similarity of the positions.
    pub similarity_matrix: Vec<Vec<f64>>,
    /// Indices of the least similar pair.
    pub most_different_pair: [usize; 2],
    /// Agents that keep repeating themselves.
    #[serde(default)]
    pub stubborn_agents: Vec<AgentRole>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `metadata` of a reporter output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReporterMetadata {
    /// The plan agreed on.
    pub final_plan: FinalPlan,
    /// Agreements, resolved and open concerns.
    pub summary: DiscussionSummary,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `final_plan` of a reporter output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalPlan {
    /// Title.
    pub title: String,
    /// Goal.
    pub goal: String,
    /// Consensus reached.
    pub consensus_level: Level,
    /// Agents that took part.
    #[serde(default)]
    pub participating_agents: Vec<AgentRole>,
    /// Rounds held.
    #[serde(deserialize_with = "crate::base::protocol::lenient::u32")]
    pub rounds: u32,
    /// The plan itself.
    pub plan: Plan,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `summary` of a reporter output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscussionSummary {
    /// Points all agents agreed on.
    #[serde(default)]
    pub key_agreements: Vec<String>,
    /// Concerns raised and how they were resolved.
    #[serde(default)]
    pub resolved_concerns: Vec<String>,
    /// What is still uncertain.
    #[serde(default)]
    pub remaining_uncertainties: Vec<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}
