//! The tool-using fields of a plan: `tools`, `skills`, `max_steps` and `token_budget`
//! on a task, and `tools` and `skills` on an agent definition (that agent's default).

use serde::{Deserialize, Serialize};

use super::{Plan, Task};

/// The tools a plan may name.
pub const TOOL_NAMES: [&str; 5] = [
    "file_search",
    "file_reader",
    "atom_query",
    "get_now",
    "calculate_date",
];

/// Steps of the loop when a task does not say.
pub const DEFAULT_MAX_STEPS: u32 = 12;

/// Most steps a task may ask for.
pub const MAX_STEPS_LIMIT: u32 = 100;

/// A task's tool-using fields as written (each absent when not given).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskReact {
    /// Tools the task's agent may call (overrides the agent's own list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Skills offered to the agent (overrides the agent's own list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// Most model calls of the loop (each step is one call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// Most tokens (prompt and output, over every step) the loop may spend [default:
    /// the agent's window times the step limit].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
}

/// How a task runs its loop: the effective tools and skills (the task's, else its
/// agent's), the step limit and the token budget.
#[derive(Debug, Clone, PartialEq)]
pub struct ReactSetup {
    /// Tools offered.
    pub tools: Vec<String>,
    /// Skills offered.
    pub skills: Vec<String>,
    /// Most steps.
    pub max_steps: u32,
    /// Token budget over the whole loop.
    pub token_budget: u64,
}

/// Why a tool name is refused, if it is.
pub fn check_tool(name: &str) -> Result<(), String> {
    if TOOL_NAMES.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "unknown tool `{}`; the tools are {}",
            crate::base::text::sanitize::sanitize(name),
            TOOL_NAMES.join(", ")
        ))
    }
}

/// Why a skill name is refused, if it is: a skill is a folder of the workspace's
/// `skills/`, so its name is one plain path component.
pub fn check_skill(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name != "."
        && name != "..";
    if plain {
        Ok(())
    } else {
        Err(format!(
            "skill name `{}` must be a plain folder name (letters, digits, - _ .)",
            crate::base::text::sanitize::sanitize(name)
        ))
    }
}

impl Plan {
    /// How `task` runs a tool-using loop; `None` when it offers neither tools nor skills.
    pub fn react_for(&self, task: &Task) -> Option<ReactSetup> {
        let agent = self.agents.get(&*task.agent);
        let tools = task
            .options()
            .react
            .tools
            .clone()
            .or_else(|| agent.map(|a| a.tools.clone()))
            .unwrap_or_default();
        let skills = task
            .options()
            .react
            .skills
            .clone()
            .or_else(|| agent.map(|a| a.skills.clone()))
            .unwrap_or_default();
        if tools.is_empty() && skills.is_empty() {
            return None;
        }
        let window = agent.map_or(crate::base::agents::DEFAULT_MAX_INPUT_TOKENS, |a| {
            a.max_input_tokens
        });
        let max_steps = task.options().react.max_steps.unwrap_or(DEFAULT_MAX_STEPS);
        // By default each step may send up to a whole window.
        Some(ReactSetup {
            tools,
            skills,
            max_steps,
            token_budget: task
                .options()
                .react
                .token_budget
                .unwrap_or(window.saturating_mul(u64::from(max_steps))),
        })
    }
}
