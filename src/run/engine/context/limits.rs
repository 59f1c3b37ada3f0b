//! Context-window limits per agent (seed 000 §6.1): what is left for data once the
//! prompt's own parts have their room, times a safety margin.
//!
//! The protocol's example reserves a fixed 5,000 tokens for the system prompt and 3,000
//! for the instructions. On a window of 8,000 (a common local model) that leaves nothing
//! for data, whatever the prompt really holds; so the reserves here are what the task's
//! prompt counts: its system prompt, its instruction (with the answer format and the
//! plan's context) and its tool schemas. The 10% safety margin stays: the room the
//! counts' error and the answer's framing need.

use crate::base::protocol::context::ContextLimits;

/// Reserve for the system prompt in the protocol's own example (§6.1).
pub const RESERVED_SYSTEM_PROMPT: u64 = 5_000;
/// Reserve for the task instructions in the protocol's own example (§6.1).
pub const RESERVED_INSTRUCTIONS: u64 = 3_000;
/// Safety margin on the data area (seed 000 §6.1).
pub const SAFETY_MARGIN: f64 = 0.9;
/// Data under this share of the window goes whole (seed 000 §4.1: "数据量小于上下文窗口
/// 限制的20%").
pub const FULL_SHARE_OF_WINDOW: f64 = 0.2;

/// The parts of a prompt that are not data, in tokens as counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixedParts {
    /// The agent's system prompt.
    pub system: u64,
    /// The task's instruction as the template completes it (the answer format and the
    /// plan's context included).
    pub instruction: u64,
    /// The schemas of the tools the task is offered.
    pub tools: u64,
}

impl FixedParts {
    /// The protocol's fixed reserves (§6.1), for a prompt not counted.
    pub fn protocol_example() -> FixedParts {
        FixedParts {
            system: RESERVED_SYSTEM_PROMPT,
            instruction: RESERVED_INSTRUCTIONS,
            tools: 0,
        }
    }
}

/// The limits of an agent with `max_input_tokens`, `max_output_tokens` and, when it has
/// one, a data area that caps what data may take, for a prompt whose other parts are
/// `fixed`.
pub fn limits(
    max_input_tokens: u64,
    max_output_tokens: u64,
    data_area: Option<u64>,
    fixed: FixedParts,
) -> ContextLimits {
    let instructions = fixed.instruction.saturating_add(fixed.tools);
    let after_reserves = max_input_tokens
        .saturating_sub(fixed.system)
        .saturating_sub(instructions);
    let available = match data_area {
        Some(area) => after_reserves.min(area),
        None => after_reserves,
    };
    ContextLimits {
        max_input_tokens,
        max_output_tokens,
        reserved_for_system_prompt: fixed.system,
        reserved_for_instructions: instructions,
        available_for_data: available,
        safety_margin: SAFETY_MARGIN,
        effective_data_limit: (available as f64 * SAFETY_MARGIN).floor() as u64,
    }
}

/// Tokens under which an input goes whole on a window of `max_input_tokens` (§4.1).
pub fn full_share(max_input_tokens: u64) -> u64 {
    (max_input_tokens as f64 * FULL_SHARE_OF_WINDOW).floor() as u64
}

/// The data area of an agent by the §6.1 table (matched on the role in its name).
pub fn data_area_of(agent: &str) -> Option<u64> {
    let a = agent.to_ascii_lowercase();
    let table: [(&str, u64); 6] = [
        ("orchestrator", 85_000),
        ("scholar", 80_000),
        ("code", 75_000),
        ("validator", 70_000),
        ("vault", 85_000),
        ("critic", 60_000),
    ];
    table.iter().find(|(k, _)| a.contains(k)).map(|&(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_example_gives_82800() {
        let l = limits(100_000, 16_000, None, FixedParts::protocol_example());
        assert_eq!(l.available_for_data, 92_000);
        assert_eq!(l.effective_data_limit, 82_800);
        assert_eq!(l.reserved_for_system_prompt, 5_000);
        assert_eq!(l.reserved_for_instructions, 3_000);
    }

    #[test]
    fn agent_data_areas_cap_the_data() {
        assert_eq!(data_area_of("Scholar_Internalizer"), Some(80_000));
        assert_eq!(data_area_of("Code_Architect"), Some(75_000));
        assert_eq!(data_area_of("Scenario_Validator"), Some(70_000));
        assert_eq!(data_area_of("Knowledge_Vault"), Some(85_000));
        assert_eq!(data_area_of("Strategic_Critic"), Some(60_000));
        assert_eq!(data_area_of("Orchestrator"), Some(85_000));
        assert_eq!(data_area_of("Someone_Else"), None);
        let example = FixedParts::protocol_example();
        let l = limits(100_000, 8_000, data_area_of("Strategic_Critic"), example);
        assert_eq!(l.available_for_data, 60_000);
        assert_eq!(l.effective_data_limit, 54_000);
        // The fixed reserves leave a small model nothing.
        assert_eq!(limits(7_000, 1_000, None, example).effective_data_limit, 0);
    }

    #[test]
    fn an_8k_window_leaves_data_what_the_prompt_does_not_take() {
        // A 28-token system prompt, a 61-token instruction, 120 tokens of tool schemas.
        let fixed = FixedParts {
            system: 28,
            instruction: 61,
            tools: 120,
        };
        let l = limits(8_000, 1_000, None, fixed);
        assert_eq!(l.reserved_for_system_prompt, 28);
        assert_eq!(l.reserved_for_instructions, 181);
        assert_eq!(l.available_for_data, 8_000 - 209);
        assert_eq!(l.effective_data_limit, 7_011);
        assert!(l.effective_data_limit > 633);
    }

    #[test]
    fn a_fifth_of_the_window_goes_whole() {
        assert_eq!(full_share(100_000), 20_000);
        assert_eq!(full_share(8_000), 1_600);
    }
}
