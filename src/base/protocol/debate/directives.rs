//! Host directives to the agents and the request that starts a session.

use serde::{Deserialize, Serialize};

use super::enums::AgentRole;
use crate::base::protocol::{is_empty_map, Extra};

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
