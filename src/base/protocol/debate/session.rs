//! Session state, the rounds recorded, and the host's decision rules.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::enums::{AgentStatus, HostAction, SessionStatus};
use super::output::AgentOutput;
use crate::base::protocol::{is_empty_map, Extra};

/// State of one debate session (§4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    /// Session id.
    pub session_id: String,
    /// The user's request.
    pub user_query: String,
    /// `multi_agent`.
    pub mode: String,
    /// Where the session is.
    pub status: SessionStatus,
    /// Round under way.
    pub current_round: u32,
    /// Most rounds (5 by §10).
    pub max_rounds: u32,
    /// Each agent's status and last output, by agent name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentSlot>,
    /// Outputs of past rounds.
    #[serde(default)]
    pub history: Vec<RoundRecord>,
    /// Consensus level after each round.
    #[serde(default)]
    pub consensus_trend: Vec<f64>,
    /// When the session started.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One agent's entry in [`SessionState::agents`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSlot {
    /// The agent's status.
    pub status: AgentStatus,
    /// Its last output; written as `null` before it has spoken.
    #[serde(default)]
    pub last_output: Option<AgentOutput>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One past round in [`SessionState::history`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// Round number.
    pub round: u32,
    /// Outputs of the round, in speaking order.
    #[serde(default)]
    pub outputs: Vec<AgentOutput>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Mean similarity above which the host converges (§5.1).
pub const CONVERGE_ABOVE: f64 = 0.90;
/// Mean similarity above which (up to [`CONVERGE_ABOVE`]) the host continues (§5.2);
/// at or below it the host forces opposition (§5.3).
pub const CONTINUE_ABOVE: f64 = 0.70;
/// Self-similarity above which a round counts as stubborn (§5.4).
pub const STUBBORN_SELF_SIMILARITY: f64 = 0.98;
/// Consecutive stubborn rounds that trigger `update_command` (§5.4).
pub const STUBBORN_ROUNDS: usize = 2;

/// The host's action for a mean similarity, by the bands of §5.1–§5.3.
pub fn action_for_similarity(mean_similarity: f64) -> HostAction {
    if mean_similarity > CONVERGE_ABOVE {
        HostAction::Converge
    } else if mean_similarity > CONTINUE_ABOVE {
        HostAction::Continue
    } else {
        HostAction::ForceOpposition
    }
}

/// Whether an agent's self-similarities (one per round, oldest first) make it stubborn
/// (§5.4): the last [`STUBBORN_ROUNDS`] are all above [`STUBBORN_SELF_SIMILARITY`].
pub fn is_stubborn(self_similarities: &[f64]) -> bool {
    self_similarities.len() >= STUBBORN_ROUNDS
        && self_similarities[self_similarities.len() - STUBBORN_ROUNDS..]
            .iter()
            .all(|s| *s > STUBBORN_SELF_SIMILARITY)
}
