//! Choosing a transfer mode (seed 000 §5): by size (§5.1), by the receiving agent
//! (§5.2) and by the data type (§5.3), combined as the decision tree of §5.4.

use serde::{Deserialize, Serialize};

pub use crate::base::protocol::context::Rule;
use crate::base::protocol::context::TransferMode;

/// Below this many tokens data is passed whole (§5.1).
pub const FULL_BELOW: u64 = 2_000;
/// From here data is passed by reference with a preview (§5.1).
pub const REFERENCE_FROM: u64 = 10_000;
/// Above this data is passed by reference in batches (§5.1).
pub const BATCH_ABOVE: u64 = 50_000;

/// What the data is (§5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    /// Prose.
    Text,
    /// Source code.
    Code,
    /// Mathematical formulas.
    Formula,
    /// Tables.
    Table,
    /// Descriptions of figures.
    Figure,
    /// Metadata.
    Metadata,
    /// A graph of relations.
    Relations,
    /// Knowledge atoms (a mix; treated as text unless all atoms are code or math).
    Atoms,
}

/// A transfer decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// Mode.
    pub mode: TransferMode,
    /// Whether the data goes in batches (> 50K tokens).
    pub batched: bool,
    /// Why.
    pub rule: Rule,
}

/// §5.2: the mode an agent wants, when its role is in the table.
pub fn agent_mode(agent: &str) -> Option<TransferMode> {
    let a = agent.to_ascii_lowercase();
    if a.contains("scholar") || a.contains("code") {
        Some(TransferMode::Full)
    } else if a.contains("vault") {
        Some(TransferMode::Reference)
    } else if a.contains("validator") || a.contains("critic") || a.contains("orchestrator") {
        Some(TransferMode::Summary)
    } else {
        None
    }
}

/// §5.3: the mode a data type wants.
pub fn data_type_mode(t: DataType) -> TransferMode {
    match t {
        DataType::Code | DataType::Formula | DataType::Metadata => TransferMode::Full,
        DataType::Relations => TransferMode::Reference,
        DataType::Text | DataType::Table | DataType::Figure | DataType::Atoms => {
            TransferMode::Summary
        }
    }
}

/// §5.1 alone.
pub fn size_mode(tokens: u64) -> Choice {
    let (mode, batched) = if tokens < FULL_BELOW {
        (TransferMode::Full, false)
    } else if tokens < REFERENCE_FROM {
        (TransferMode::Summary, false)
    } else if tokens <= BATCH_ABOVE {
        (TransferMode::Reference, false)
    } else {
        (TransferMode::Reference, true)
    };
    Choice {
        mode,
        batched,
        rule: Rule::Size,
    }
}

/// The decision tree of §5.4: a configured mode wins; under 2K tokens the data goes whole;
/// over 50K by reference in batches; in between, incompressible data types (code,
/// formulas, metadata) and relation graphs decide, then the receiving agent, then data
/// under `full_under` tokens (a fifth of the window, §4.1) goes whole, then the §5.1 band.
pub fn choose(
    tokens: u64,
    agent: &str,
    data: DataType,
    configured: Option<TransferMode>,
    full_under: u64,
) -> Choice {
    if let Some(mode) = configured {
        return Choice {
            mode,
            batched: tokens > BATCH_ABOVE && mode != TransferMode::Summary,
            rule: Rule::Configured,
        };
    }
    if !(FULL_BELOW..=BATCH_ABOVE).contains(&tokens) {
        return size_mode(tokens);
    }
    match data {
        DataType::Code | DataType::Formula | DataType::Metadata | DataType::Relations => {
            return Choice {
                mode: data_type_mode(data),
                batched: false,
                rule: Rule::DataType,
            }
        }
        _ => {}
    }
    if let Some(mode) = agent_mode(agent) {
        return Choice {
            mode,
            batched: false,
            rule: Rule::Agent,
        };
    }
    if tokens < full_under {
        return Choice {
            mode: TransferMode::Full,
            batched: false,
            rule: Rule::Window,
        };
    }
    if matches!(data, DataType::Table | DataType::Figure | DataType::Text)
        && tokens < REFERENCE_FROM
    {
        return Choice {
            mode: TransferMode::Summary,
            batched: false,
            rule: Rule::DataType,
        };
    }
    size_mode(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TransferMode::*;

    #[test]
    fn size_bands_at_their_boundaries() {
        let m = |t| {
            let c = size_mode(t);
            (c.mode, c.batched)
        };
        assert_eq!(m(0), (Full, false));
        assert_eq!(m(1_999), (Full, false));
        assert_eq!(m(2_000), (Summary, false));
        assert_eq!(m(9_999), (Summary, false));
        assert_eq!(m(10_000), (Reference, false));
        assert_eq!(m(50_000), (Reference, false));
        assert_eq!(m(50_001), (Reference, true));
    }

    #[test]
    fn agents_of_the_5_2_table() {
        assert_eq!(agent_mode("Scholar_Internalizer"), Some(Full));
        assert_eq!(agent_mode("Code_Architect"), Some(Full));
        assert_eq!(agent_mode("Scenario_Validator"), Some(Summary));
        assert_eq!(agent_mode("Knowledge_Vault"), Some(Reference));
        assert_eq!(agent_mode("Strategic_Critic"), Some(Summary));
        assert_eq!(agent_mode("Orchestrator"), Some(Summary));
        assert_eq!(agent_mode("Translator"), None);
        for (agent, want) in [
            ("Scholar_Internalizer", Full),
            ("Code_Architect", Full),
            ("Scenario_Validator", Summary),
            ("Knowledge_Vault", Reference),
            ("Strategic_Critic", Summary),
            ("Orchestrator", Summary),
        ] {
            let c = choose(5_000, agent, DataType::Atoms, None, 0);
            assert_eq!((c.mode, c.rule), (want, Rule::Agent), "{agent}");
        }
    }

    #[test]
    fn data_types_of_the_5_3_table() {
        assert_eq!(data_type_mode(DataType::Text), Summary);
        assert_eq!(data_type_mode(DataType::Code), Full);
        assert_eq!(data_type_mode(DataType::Formula), Full);
        assert_eq!(data_type_mode(DataType::Table), Summary);
        assert_eq!(data_type_mode(DataType::Figure), Summary);
        assert_eq!(data_type_mode(DataType::Metadata), Full);
        assert_eq!(data_type_mode(DataType::Relations), Reference);
        // Incompressible data stays whole even for an agent that prefers summaries.
        let c = choose(8_000, "Strategic_Critic", DataType::Code, None, 0);
        assert_eq!((c.mode, c.rule), (Full, Rule::DataType));
        let c = choose(8_000, "Scholar_Internalizer", DataType::Relations, None, 0);
        assert_eq!((c.mode, c.rule), (Reference, Rule::DataType));
        // No agent rule: tables are summarised, large text goes by reference.
        assert_eq!(
            choose(8_000, "Other", DataType::Table, None, 0).mode,
            Summary
        );
        assert_eq!(
            choose(20_000, "Other", DataType::Text, None, 0).mode,
            Reference
        );
    }

    #[test]
    fn the_decision_tree() {
        // < 2K: whole, whatever the agent.
        assert_eq!(
            choose(1_999, "Knowledge_Vault", DataType::Text, None, 0).mode,
            Full
        );
        // > 50K: batched reference, whatever the agent.
        let c = choose(50_001, "Scholar_Internalizer", DataType::Code, None, 0);
        assert_eq!((c.mode, c.batched, c.rule), (Reference, true, Rule::Size));
        // A configured mode wins.
        let c = choose(
            1_000,
            "Scholar_Internalizer",
            DataType::Code,
            Some(Summary),
            0,
        );
        assert_eq!((c.mode, c.rule), (Summary, Rule::Configured));
    }

    #[test]
    fn under_a_fifth_of_the_window_data_goes_whole() {
        // 19% of a 100K window: whole, where the size band alone sends a reference.
        let c = choose(18_900, "Other", DataType::Text, None, 20_000);
        assert_eq!((c.mode, c.rule), (Full, Rule::Window));
        assert_eq!(
            choose(18_900, "Other", DataType::Text, None, 0).mode,
            Reference
        );
        // From a fifth on, the band again; an agent's own rule still comes first.
        assert_eq!(
            choose(20_000, "Other", DataType::Text, None, 20_000).mode,
            Reference
        );
        let c = choose(5_000, "Strategic_Critic", DataType::Text, None, 20_000);
        assert_eq!((c.mode, c.rule), (Summary, Rule::Agent));
    }
}
