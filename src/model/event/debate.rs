//! The events of a debate session. A session is a run: it starts with `run_started`
//! (execution mode `debate`), then `debate_started`, and each agent turn is a task
//! (`r1.planner`, `r2.critic`, `r3.host`, `report.reporter`) whose replies, outputs and
//! the host's decisions are logged here, until `debate_finished` and `run_finished`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::protocol::debate::{AgentRole, SessionStatus};
use crate::base::protocol::debate_spec::DebateSpec;

/// The session's settings and context, logged once after `run_started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateStarted {
    /// The settings.
    pub spec: DebateSpec,
    /// The embedding used (`builtin`, `endpoint:PROFILE/MODEL`).
    pub embedder: String,
    /// The `get_now` data the agents plan from (§3.2 shape).
    pub now: Value,
}

/// An agent started a turn (one model call; `attempt` counts tries of the turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateTurnStarted {
    /// Round, from 1.
    pub round: u32,
    /// Agent.
    pub agent: AgentRole,
    /// Try of the turn, from 1.
    pub attempt: u32,
    /// A closing turn: after the host converged, the remaining uncertainties and the
    /// worst cases, asked before the report.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closing: bool,
}

/// What one model call of a turn returned: the text as received, or why there is none.
/// A rerun answers its calls from these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateReply {
    /// Round.
    pub round: u32,
    /// Agent.
    pub agent: AgentRole,
    /// Try of the turn, from 1.
    pub attempt: u32,
    /// A closing turn: after the host converged, the remaining uncertainties and the
    /// worst cases, asked before the report.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closing: bool,
    /// The text received (may be partial when the call failed).
    pub text: String,
    /// Tokens of the text.
    pub output_tokens: u64,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// The call ran out of time.
    #[serde(default)]
    pub timed_out: bool,
    /// The provider failed (which failure, its message), or the session was stopped
    /// during the call (kind `cancelled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<crate::base::protocol::provider::StoredProviderError>,
    /// Why the text is not a valid output (empty when it is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// A valid output.
    Valid,
    /// No valid output after every try: recorded as received; the last valid output (if
    /// any) stands for the agent.
    Invalid,
    /// The agent timed out: skipped, its last output reused.
    TimedOut,
    /// The provider failed: skipped, its last output reused.
    Failed,
    /// The session was stopped during the turn.
    Cancelled,
}

impl TurnOutcome {
    /// The task status a turn's outcome is stored as.
    pub fn task_status(self) -> &'static str {
        match self {
            TurnOutcome::Valid => "success",
            TurnOutcome::Invalid | TurnOutcome::Failed => "failed",
            TurnOutcome::TimedOut => "timeout",
            TurnOutcome::Cancelled => "cancelled",
        }
    }
}

/// A turn ended: the agent's output in the protocol's shape (the engine fills in the
/// changes since the agent's previous round), or what stands in for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateOutput {
    /// Round.
    pub round: u32,
    /// Agent.
    pub agent: AgentRole,
    /// How the turn ended.
    pub outcome: TurnOutcome,
    /// Tries made.
    pub attempts: u32,
    /// A closing turn: after the host converged, the remaining uncertainties and the
    /// worst cases, asked before the report.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closing: bool,
    /// The output (for a skipped agent, its previous output, re-stamped with this
    /// round); `None` when there is nothing to stand for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The output is an earlier round's, reused.
    #[serde(default)]
    pub reused: bool,
    /// Tokens of the final reply.
    pub output_tokens: u64,
    /// Wall time of the whole turn.
    pub duration_ms: u64,
}

/// The positions of a round compared (`compare_positions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionsCompared {
    /// Round.
    pub round: u32,
    /// Agents compared, in matrix order.
    pub agents: Vec<AgentRole>,
    /// Pairwise similarity.
    pub similarity_matrix: Vec<Vec<f64>>,
    /// Mean of the pairs.
    pub mean_similarity: f64,
    /// Least similar pair (indices into `agents`).
    pub most_different_pair: [usize; 2],
    /// Its similarity.
    pub most_different_similarity: f64,
    /// Each agent's similarity to its own previous position (absent in its first round).
    #[serde(default)]
    pub self_similarity: BTreeMap<String, f64>,
    /// `embedding`, or `keyword` when the embedding failed.
    pub method: String,
    /// Embedder used.
    pub embedder: String,
    /// Texts embedded now.
    pub embedded: usize,
    /// Texts taken from the cache.
    pub cached: usize,
    /// Wall time, µs.
    pub duration_us: u64,
}

/// The host decided (its output in the protocol's shape, and the rule applied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostDecided {
    /// Round.
    pub round: u32,
    /// The host's output (`output_type` `control`).
    pub output: Value,
    /// The rule's directive (converge, continue, force_opposition, update_command) or
    /// the max-rounds document.
    pub directive: Value,
}

/// An error handled by a fallback (agent timeout, tool failure), as its protocol
/// document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateErrorLogged {
    /// Round.
    pub round: u32,
    /// The error document (`agent_timeout`, `tool_execution_failed`, `invalid_output`).
    pub error: Value,
    /// What happened, in words.
    pub message: String,
}

/// The session ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateFinished {
    /// Final status.
    pub status: SessionStatus,
    /// Rounds held.
    pub rounds: u32,
    /// Consensus after each round.
    pub consensus_trend: Vec<f64>,
    /// Why it ended.
    pub reason: String,
}
