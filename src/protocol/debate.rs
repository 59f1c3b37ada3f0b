//! Seed 004: the multi-agent debate protocol — agent outputs (planner, critic, host,
//! reporter), position summaries, the debate tools, session state, host decision rules,
//! the start request, SSE stream events and error documents.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{is_empty_map, Extra};

/// Declares a string enum whose unknown values are kept as `Other(String)`, so documents
/// that write a placeholder (the seed's `"string"`) or a future value still round-trip.
macro_rules! open_string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// Any other value, as written.
            Other(String),
        }

        impl $name {
            /// The value as written in JSON.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $text, )*
                    $name::Other(s) => s,
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $( $text => $name::$variant, )*
                    _ => $name::Other(s),
                }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> Self {
                match v {
                    $name::Other(s) => s,
                    known => known.as_str().to_string(),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

open_string_enum! {
    /// An agent of the debate (`agent_id`, `agent`, `target_agent`, …).
    pub enum AgentRole {
        /// Flow control, consensus detection, round management.
        Host => "host",
        /// Breaks the user's goal into a structured plan.
        Planner => "planner",
        /// Finds faults, checks feasibility, proposes fixes.
        Critic => "critic",
        /// Turns the final plan into readable text.
        Reporter => "reporter",
    }
}

open_string_enum! {
    /// Kind of an agent output (`output_type`).
    pub enum OutputType {
        /// A position only.
        Position => "position",
        /// A plan (planner).
        Plan => "plan",
        /// A critique (critic).
        Critique => "critique",
        /// The final report (reporter).
        Report => "report",
        /// A flow-control decision (host).
        Control => "control",
    }
}

open_string_enum! {
    /// Action decided by the host (`decision.action`, §5 `action`, SSE `host_decision`).
    pub enum HostAction {
        /// Another round with the named agents.
        Continue => "continue",
        /// Consensus reached: gather uncertainties, then report.
        Converge => "converge",
        /// Make an agent argue the opposite side.
        ForceOpposition => "force_opposition",
        /// Stop the discussion.
        Terminate => "terminate",
        /// Give a stubborn agent a new command.
        UpdateCommand => "update_command",
    }
}

open_string_enum! {
    /// Status of one agent inside a session.
    pub enum AgentStatus {
        /// Not involved yet.
        Idle => "idle",
        /// Waiting for its turn.
        Waiting => "waiting",
        /// Answering now.
        Running => "running",
        /// Produced its output for the round.
        Completed => "completed",
    }
}

open_string_enum! {
    /// Status of a debate session.
    pub enum SessionStatus {
        /// Rounds are going on.
        InProgress => "in_progress",
        /// Consensus reached.
        Converged => "converged",
        /// Stopped (by the host or the user).
        Terminated => "terminated",
        /// Stopped at `max_rounds` (§7.2).
        MaxRoundsReached => "max_rounds_reached",
        /// Stopped by the user before it ended (a stop key, a client that went away).
        Cancelled => "cancelled",
        /// Ended without a result: no agent gave a valid position in the first round.
        Failed => "failed",
    }
}

/// A three-step rating: risk severity, suggestion priority, reported consensus level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// High.
    High,
    /// Medium.
    Medium,
    /// Low.
    Low,
}

/// The output every agent produces each round (seed 004 §2.1); `M` is the type of its
/// structured `metadata` (a free map for the base format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentOutput<M = Extra> {
    /// Agent that spoke.
    pub agent_id: AgentRole,
    /// Round of the output, from 1.
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

/// Planner output (§2.2).
pub type PlannerOutput = AgentOutput<PlannerMetadata>;
/// Critic output (§2.3).
pub type CriticOutput = AgentOutput<CriticMetadata>;
/// Host output (§2.4).
pub type HostOutput = AgentOutput<HostMetadata>;
/// Reporter output (§2.5).
pub type ReporterOutput = AgentOutput<ReporterMetadata>;

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
    /// Confidence in [0, 1].
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
    pub confidence_delta: f64,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

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
    /// Consensus level in [0, 1].
    pub consensus_level: f64,
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

/// A call of one of the debate tools (§3), tagged by `tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum DebateToolCall {
    /// `compare_positions`: embed the positions and compare them.
    ComparePositions(ComparePositionsInput),
    /// `get_now`: current time.
    GetNow,
    /// `calculate_date`: a date plus an offset.
    CalculateDate(CalculateDateInput),
}

/// Input of `compare_positions` (§3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparePositionsInput {
    /// One text per agent: conclusion plus key reasons.
    pub texts: Vec<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Input of `calculate_date` (§3.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalculateDateInput {
    /// Start date (`YYYY-MM-DD`).
    pub base_date: String,
    /// Offset added.
    pub offset: DateOffset,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `offset` of a `calculate_date` call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DateOffset {
    /// Weeks (may be negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weeks: Option<i64>,
    /// Days (may be negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<i64>,
    /// Other units (e.g. months), kept as written.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// The envelope of every debate tool result: `success` and the tool's `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput<T> {
    /// Whether the tool succeeded.
    pub success: bool,
    /// The result, on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<T>,
    /// Fields not modelled here (e.g. an error message on failure).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Result of `compare_positions`.
pub type ComparePositionsOutput = ToolOutput<ComparePositionsData>;
/// Result of `get_now`.
pub type GetNowOutput = ToolOutput<GetNowData>;
/// Result of `calculate_date`.
pub type CalculateDateOutput = ToolOutput<CalculateDateData>;

/// `data` of a `compare_positions` result (§3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparePositionsData {
    /// One embedding per text (768 dimensions).
    #[serde(default)]
    pub embeddings: Vec<Vec<f64>>,
    /// Pairwise cosine similarity.
    pub similarity_matrix: Vec<Vec<f64>>,
    /// Mean of the off-diagonal similarities.
    pub mean_similarity: f64,
    /// Indices of the least similar pair.
    pub most_different_pair: [usize; 2],
    /// Similarity of that pair.
    pub most_different_similarity: f64,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `data` of a `get_now` result (§3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetNowData {
    /// Local time, `YYYY-MM-DDTHH:MM:SS`.
    pub now: String,
    /// IANA time zone, e.g. `Asia/Shanghai`.
    pub timezone: String,
    /// English weekday name.
    pub weekday: String,
    /// Local date, `YYYY-MM-DD`.
    pub date: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `data` of a `calculate_date` result (§3.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalculateDateData {
    /// Resulting date, `YYYY-MM-DD`.
    pub result_date: String,
    /// English weekday name of that date.
    pub weekday: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

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

/// A host decision rule of §5, tagged by `action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum HostDirective {
    /// High consensus (> 0.90): converge (§5.1).
    Converge(ConvergeDirective),
    /// Medium consensus (0.70 < s ≤ 0.90): another round (§5.2).
    Continue(ContinueDirective),
    /// Low consensus (≤ 0.70): force a devil's advocate (§5.3).
    ForceOpposition(ForceOppositionDirective),
    /// A stubborn agent gets a new command (§5.4).
    UpdateCommand(UpdateCommandDirective),
}

/// `converge` directive (§5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvergeDirective {
    /// What every agent does next.
    pub instructions: ConvergeInstructions,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `instructions` of a `converge` directive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvergeInstructions {
    /// Instruction to all agents, e.g. list remaining uncertainties and worst cases.
    pub to_all_agents: String,
    /// Next step, e.g. `reporter_summary`.
    pub next_step: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `continue` directive (§5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContinueDirective {
    /// Who speaks and on what.
    pub instructions: ContinueInstructions,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `instructions` of a `continue` directive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContinueInstructions {
    /// Agents speaking next.
    pub to_agents: Vec<AgentRole>,
    /// Points to focus on.
    #[serde(default)]
    pub focus_on: Vec<String>,
    /// Rounds left.
    pub rounds_remaining: u32,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `force_opposition` directive (§5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForceOppositionDirective {
    /// The role to take and its target.
    pub instructions: ForceOppositionInstructions,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `instructions` of a `force_opposition` directive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForceOppositionInstructions {
    /// Role imposed, e.g. `devils_advocate`.
    pub role: String,
    /// What the role must do.
    pub requirement: String,
    /// Agent whose position is opposed.
    pub target: AgentRole,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `update_command` directive for a stubborn agent (§5.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateCommandDirective {
    /// The stubborn agent.
    pub target_agent: AgentRole,
    /// Why, e.g. self-similarity above 0.98 for 2 rounds.
    pub reason: String,
    /// What it must do now.
    pub requirement: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Request that starts a multi-agent session from the front end (§6.1); camelCase on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiAgentStartRequest {
    /// The user's message.
    pub message: String,
    /// `multi_agent`.
    pub mode: String,
    /// User id (`userId`).
    #[serde(rename = "userId", default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Conversation id (`conversationId`).
    #[serde(
        rename = "conversationId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub conversation_id: Option<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

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
