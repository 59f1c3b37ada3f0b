//! What an agent is told in one turn: the question, the round, what the others said,
//! the host's instructions. It travels in the request's user prompt (`debate` field),
//! so the simulated model and a real one read the same facts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::protocol::debate::AgentRole;
use crate::base::protocol::{AgentRequest, Constraints, UserPrompt};

/// The host's instruction to one agent for its next turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostInstruction {
    /// The host's action (`continue`, `force_opposition`, `update_command`, `converge`,
    /// `terminate`).
    pub action: String,
    /// Why.
    pub reason: String,
    /// Points to address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_address: Vec<String>,
    /// What to avoid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub avoid: Vec<String>,
    /// A role imposed (`devils_advocate`), with its target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The agent whose position is opposed (force_opposition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<AgentRole>,
    /// What the agent must do (update_command, force_opposition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<String>,
}

/// One round as the reporter reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundDigest {
    /// Round.
    pub round: u32,
    /// Mean similarity of the positions, when compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consensus: Option<f64>,
    /// The host's action.
    pub action: String,
    /// The host's reason.
    pub reason: String,
    /// Each agent's conclusion: `[agent, conclusion]`.
    pub conclusions: Vec<(AgentRole, String)>,
}

/// The `debate` part of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateTurn {
    /// Who answers.
    pub role: AgentRole,
    /// Round.
    pub round: u32,
    /// Most rounds.
    pub max_rounds: u32,
    /// The user's question.
    pub question: String,
    /// The current date and time the agent plans from (`get_now`).
    pub now: Value,
    /// The agent's own previous output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_previous: Option<Value>,
    /// The latest outputs of the other speakers (the planner's plan for the critic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Value>,
    /// The host's instruction for this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInstruction>,
    /// The rounds held (the reporter's turn).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<RoundDigest>,
    /// How the discussion ended (the reporter's turn): `converged`, `early_stop`,
    /// `max_rounds_reached`, `terminated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<String>,
    /// Why the previous try was refused (a retry).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// A closing turn: the host converged, and before the report each speaker lists the
    /// remaining uncertainties and the worst cases.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closing: bool,
}

/// What the host asks of every speaker when it converges.
pub const CLOSING_REQUEST: &str = "list the remaining uncertainties and the worst cases";

impl DebateTurn {
    /// The task id of the turn: `r2.critic` (`r3.critic.closing` for a closing turn).
    pub fn task_id(&self) -> String {
        turn_task_id(self.round, &self.role, self.closing)
    }

    /// The turn of a request, when it is a debate turn.
    pub fn of(request: &AgentRequest) -> Option<DebateTurn> {
        serde_json::from_value(request.user_prompt.extra.get("debate")?.clone()).ok()
    }
}

/// Task id of an agent's turn in a round.
pub fn task_id(round: u32, role: &AgentRole) -> String {
    format!("r{round}.{role}")
}

/// Task id of an agent's turn in a round, or of its closing turn (`r3.planner.closing`).
pub fn turn_task_id(round: u32, role: &AgentRole, closing: bool) -> String {
    if closing {
        format!("r{round}.{role}.closing")
    } else {
        task_id(round, role)
    }
}

/// The output type each agent writes.
pub fn output_type_of(role: &AgentRole) -> &'static str {
    match role {
        AgentRole::Planner => "plan",
        AgentRole::Critic => "critique",
        AgentRole::Reporter => "report",
        AgentRole::Host => "control",
        AgentRole::Other(_) => "position",
    }
}

const COMMON_RULES: &str = "Answer with one JSON object and nothing else: \
{\"agent_id\", \"round\", \"output_type\", \"content\", \"metadata\", \"timestamp\"}. \
`content` is what the user reads. `metadata.position` is your position summary: \
{\"conclusion\": one sentence, \"key_reasons\": [up to 5], \"assumptions\": [...], \
\"confidence\": 0..1}. Stay under 2000 tokens. Dates are YYYY-MM-DD, computed from `now`.";

/// The system prompt of a role.
pub fn system_prompt(role: &AgentRole) -> String {
    let job = match role {
        AgentRole::Planner => {
            "You are the planner of a debate. Break the user's goal into a \
            structured plan: `output_type` \"plan\", `metadata.plan` = {\"title\", \"goal\", \
            \"phases\": [{\"phase_name\", \"duration\", \"tasks\": [{\"title\", \
            \"estimated_hours\", \"deadline\", \"tags\"}]}], \"total_estimated_hours\"}. Revise \
            it each round by the critic's points and the host's instructions."
        }
        AgentRole::Critic => {
            "You are the critic of a debate. Find what is wrong with the \
            planner's plan: `output_type` \"critique\", `metadata.critique` = {\"target_agent\": \
            \"planner\", \"target_round\", \"risks\": [{\"risk\", \"severity\": \
            high|medium|low, \"impact\"}], \"suggestions\": [{\"issue\", \"solution\", \
            \"priority\"}], \"validity_check\": {\"feasible\", \"realistic\", \"complete\"}}. \
            When the host makes you the devil's advocate, argue only the opposite side."
        }
        AgentRole::Reporter => {
            "You are the reporter of a debate. Turn the discussion into \
            the final plan for the user: `output_type` \"report\", `content` in Markdown, \
            `metadata.final_plan` = {\"title\", \"goal\", \"consensus_level\": high|medium|low, \
            \"participating_agents\", \"rounds\", \"plan\"}, `metadata.summary` = \
            {\"key_agreements\", \"resolved_concerns\", \"remaining_uncertainties\"} (with \
            the uncertainties and worst cases the speakers listed last), `metadata.todo` = \
            [{\"task\", \"phase\", \"deadline\", \"estimated_hours\", \"done\": false}], \
            one item per task of the final plan. When the discussion did not converge, \
            report the diverging conclusions."
        }
        AgentRole::Host | AgentRole::Other(_) => "You take part in a debate.",
    };
    format!("{job}\n{COMMON_RULES}")
}

/// What the host decided for this agent, in words: the decision, why, and what it must
/// do (`The host decided: force opposition — argue the opposing side as devil's advocate
/// against the planner. Why: … Requirement: … Address: a; b.`).
pub fn host_said(h: &HostInstruction) -> String {
    let decision = match h.action.as_str() {
        "continue" => "another round".to_string(),
        "force_opposition" => format!(
            "force opposition — you argue the opposing side{}{}",
            h.role
                .as_deref()
                .map(|r| match r {
                    "devils_advocate" => " as devil's advocate".to_string(),
                    r => format!(" as {}", r.replace('_', " ")),
                })
                .unwrap_or_default(),
            h.target
                .as_ref()
                .map(|t| format!(" against the {t}"))
                .unwrap_or_default()
        ),
        "update_command" => "you must update your position".to_string(),
        other => other.replace('_', " "),
    };
    let mut s = format!("The host decided: {decision}. Why: {}.", h.reason);
    if let Some(r) = &h.requirement {
        s.push_str(&format!(" Requirement: {r}."));
    }
    if !h.must_address.is_empty() {
        s.push_str(&format!(" Address: {}.", h.must_address.join("; ")));
    }
    if !h.avoid.is_empty() {
        s.push_str(&format!(" Avoid: {}.", h.avoid.join("; ")));
    }
    s
}

/// The request of a turn.
pub fn request(turn: &DebateTurn, invocation_id: &str, timeout_ms: u64) -> AgentRequest {
    let instruction = match (&turn.role, &turn.host) {
        (AgentRole::Reporter, _) => format!("Write the final report on: {}", turn.question),
        (_, Some(h)) if turn.closing => format!(
            "Round {}: the host converged ({}). Before the report, {CLOSING_REQUEST} of the plan \
             as it now stands: say them in `content`, and give them as \
             `metadata.remaining_uncertainties` and `metadata.worst_cases` (lists of \
             sentences); keep your position summary. The question: {}",
            turn.round, h.reason, turn.question
        ),
        (_, Some(h)) => format!(
            "Round {} of {}. {} Give your revised position on: {}",
            turn.round,
            turn.max_rounds,
            host_said(h),
            turn.question
        ),
        _ => format!(
            "Round {} of {}. Give your position on: {}",
            turn.round, turn.max_rounds, turn.question
        ),
    };
    let mut user_prompt = UserPrompt {
        instruction,
        ..UserPrompt::default()
    };
    if let Ok(v) = serde_json::to_value(turn) {
        user_prompt.extra.insert("debate".into(), v);
    }
    AgentRequest {
        invocation_id: invocation_id.to_string(),
        agent: turn.role.as_str().to_string(),
        task_id: turn.task_id(),
        plan_id: "debate".into(),
        system_prompt: system_prompt(&turn.role),
        user_prompt,
        constraints: Constraints {
            timeout_seconds: timeout_ms as f64 / 1000.0,
            max_tokens: super::debate_spec::MAX_OUTPUT_TOKENS as u32,
            temperature: 0.3,
        },
        extra: Default::default(),
        response_schema: output_schema(&turn.role, turn.round, turn.closing)
            .map(std::sync::Arc::new),
    }
}

/// An object schema in the strict subset: every property required, no other.
fn object(props: serde_json::Value) -> serde_json::Value {
    let required: Vec<String> = props
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    serde_json::json!({"type": "object", "properties": props, "required": required,
                       "additionalProperties": false})
}

/// The JSON Schema of `role`'s output in `round` (a closing turn's adds what it is
/// asked for), as a structured-output server is asked to hold it; `None` for agents
/// that do not answer through a model.
pub fn output_schema(role: &AgentRole, round: u32, closing: bool) -> Option<serde_json::Value> {
    use serde_json::json;
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let level = json!({"type": "string", "enum": ["high", "medium", "low"]});
    let position = object(json!({
        "conclusion": {"type": "string", "minLength": 1},
        "key_reasons": {"type": "array", "items": {"type": "string", "minLength": 1},
                        "minItems": 1, "maxItems": 5},
        "assumptions": strings,
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    }));
    let plan = object(json!({
        "title": {"type": "string"},
        "goal": {"type": "string"},
        "phases": {"type": "array", "items": object(json!({
            "phase_name": {"type": "string"},
            "duration": {"type": "string"},
            "tasks": {"type": "array", "items": object(json!({
                "title": {"type": "string"},
                "estimated_hours": {"type": "number"},
            }))},
        }))},
        "total_estimated_hours": {"type": "number"},
    }));
    let mut metadata = match role {
        AgentRole::Planner => json!({"position": position, "plan": plan}),
        AgentRole::Critic => json!({
            "position": position,
            "critique": object(json!({
                "target_agent": {"type": "string", "enum": ["planner"]},
                "target_round": {"type": "integer"},
                "risks": {"type": "array", "items": object(json!({
                    "risk": {"type": "string"}, "severity": level, "impact": {"type": "string"},
                }))},
                "suggestions": {"type": "array", "items": object(json!({
                    "issue": {"type": "string"}, "solution": {"type": "string"}, "priority": level,
                }))},
                "validity_check": object(json!({
                    "feasible": {"type": "boolean"},
                    "realistic": {"type": "boolean"},
                    "complete": {"type": "boolean"},
                })),
            })),
        }),
        AgentRole::Reporter => json!({
            "position": position,
            "final_plan": object(json!({
                "title": {"type": "string"},
                "goal": {"type": "string"},
                "consensus_level": level,
                "participating_agents": {"type": "array", "items": {"type": "string", "enum": ["planner", "critic"]}},
                "rounds": {"type": "integer"},
                "plan": plan,
            })),
            "summary": object(json!({
                "key_agreements": strings,
                "resolved_concerns": strings,
                "remaining_uncertainties": strings,
            })),
        }),
        AgentRole::Host | AgentRole::Other(_) => return None,
    };
    if closing {
        metadata["remaining_uncertainties"] = strings.clone();
        metadata["worst_cases"] = strings;
    }
    Some(object(json!({
        "agent_id": {"type": "string", "enum": [role.as_str()]},
        "round": {"type": "integer", "enum": [round]},
        "output_type": {"type": "string", "enum": [output_type_of(role)]},
        "content": {"type": "string"},
        "metadata": object(metadata),
    })))
}
