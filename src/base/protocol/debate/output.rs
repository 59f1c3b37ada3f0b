//! The output every agent produces each round, and the position summary it carries.

use serde::{Deserialize, Serialize};

use super::enums::{AgentRole, OutputType};
use crate::base::protocol::{is_empty_map, Extra};

/// The output every agent produces each round (seed 004 §2.1); `M` is the type of its
/// structured `metadata` (a free map for the base format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentOutput<M = Extra> {
    /// Agent that spoke.
    pub agent_id: AgentRole,
    /// Round of the output, from 1.
    #[serde(deserialize_with = "crate::base::protocol::lenient::u32")]
    pub round: u32,
    /// Kind of output.
    pub output_type: OutputType,
    /// Main text, shown to the user.
    pub content: String,
    /// Structured information.
    pub metadata: M,
    /// When it was produced (RFC 3339).
    pub timestamp: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// An agent's position in one round (§8); every agent output carries one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionSummary {
    /// One-sentence conclusion.
    pub conclusion: String,
    /// Key reasons.
    #[serde(default)]
    pub key_reasons: Vec<String>,
    /// Assumptions made.
    #[serde(default)]
    pub assumptions: Vec<String>,
    /// Confidence in [0, 1] (`"80%"` is read as 0.8).
    #[serde(deserialize_with = "crate::base::protocol::lenient::confidence")]
    pub confidence: f64,
    /// What changed since the agent's previous round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_from_last_round: Option<PositionChanges>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `changes_from_last_round` of a position summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionChanges {
    /// Whether the conclusion changed.
    pub conclusion_changed: bool,
    /// Reasons added this round.
    #[serde(default)]
    pub reasons_added: Vec<String>,
    /// Change of confidence (signed).
    #[serde(deserialize_with = "crate::base::protocol::lenient::f64")]
    pub confidence_delta: f64,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}
