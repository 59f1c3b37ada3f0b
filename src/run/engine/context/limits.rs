//! Context-window limits per agent (seed 000 §6.1): what is left for data once the
//! system prompt and the instructions have their reserve, times a safety margin.

use crate::base::protocol::context::ContextLimits;

/// Reserve for the system prompt (seed 000 §6.1).
pub const RESERVED_SYSTEM_PROMPT: u64 = 5_000;
/// Reserve for the task instructions (seed 000 §6.1).
pub const RESERVED_INSTRUCTIONS: u64 = 3_000;
/// Safety margin on the data area (seed 000 §6.1).
pub const SAFETY_MARGIN: f64 = 0.9;

/// The limits of an agent with `max_input_tokens`, `max_output_tokens` and, when the
/// agent table of §6.1 gives one, a data area that caps what data may take.
pub fn limits(
    max_input_tokens: u64,
    max_output_tokens: u64,
    data_area: Option<u64>,
) -> ContextLimits {
    let after_reserves = max_input_tokens
        .saturating_sub(RESERVED_SYSTEM_PROMPT)
        .saturating_sub(RESERVED_INSTRUCTIONS);
    let available = match data_area {
        Some(area) => after_reserves.min(area),
        None => after_reserves,
    };
    ContextLimits {
        max_input_tokens,
        max_output_tokens,
        reserved_for_system_prompt: RESERVED_SYSTEM_PROMPT,
        reserved_for_instructions: RESERVED_INSTRUCTIONS,
        available_for_data: available,
        safety_margin: SAFETY_MARGIN,
        effective_data_limit: (available as f64 * SAFETY_MARGIN).floor() as u64,
    }
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
        let l = limits(100_000, 16_000, None);
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
        let l = limits(100_000, 8_000, data_area_of("Strategic_Critic"));
        assert_eq!(l.available_for_data, 60_000);
        assert_eq!(l.effective_data_limit, 54_000);
        // A small model: the reserves take what they need first.
        assert_eq!(limits(7_000, 1_000, None).effective_data_limit, 0);
    }
}
