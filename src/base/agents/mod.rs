//! Agent definitions: the built-in seed agents (seed 001 §1.2, §5.1; seed 000 §5.2,
//! §6.1) and user-defined agents declared in a plan.

use serde::{Deserialize, Serialize};

use crate::base::protocol::context::TransferMode;

/// Everything plexus needs to know to call one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentDef {
    /// Full name, e.g. `Scholar_Internalizer`.
    pub name: String,
    /// Short name used in invocation ids, e.g. `SCHOLAR`.
    pub short_name: String,
    /// Whole system prompt (markdown).
    pub system_prompt: String,
    /// Base temperature before execution-mode adjustment.
    pub temperature: f64,
    /// Base max output tokens.
    pub max_tokens: u32,
    /// Base timeout in seconds.
    pub timeout_seconds: f64,
    /// Most input tokens (seed 000 §6.1).
    pub max_input_tokens: u64,
    /// Data area in tokens (seed 000 §6.1 table).
    pub data_area_tokens: u64,
    /// Transfer mode preferred for its inputs (seed 000 §5.2).
    pub preferred_transfer: TransferMode,
    /// Atom type it produces.
    pub atom_type: String,
    /// Tools it may call by default (a task's own list overrides it).
    pub tools: Vec<String>,
    /// Skills offered to it by default (a task's own list overrides it).
    pub skills: Vec<String>,
}

struct Builtin {
    name: &'static str,
    short: &'static str,
    aliases: &'static [&'static str],
    prompt: &'static str,
    temperature: f64,
    max_tokens: u32,
    data_area: u64,
    transfer: TransferMode,
    atom_type: &'static str,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "Scholar_Internalizer",
        short: "SCHOLAR",
        aliases: &["scholar"],
        prompt: include_str!("scholar_internalizer.md"),
        temperature: 0.25,
        max_tokens: 8000,
        data_area: 80_000,
        transfer: TransferMode::Full,
        atom_type: "Math_Atom",
    },
    Builtin {
        name: "Code_Architect",
        short: "CODE",
        aliases: &["code"],
        prompt: include_str!("code_architect.md"),
        temperature: 0.15,
        max_tokens: 10000,
        data_area: 75_000,
        transfer: TransferMode::Full,
        atom_type: "Code_Atom",
    },
    Builtin {
        name: "Scenario_Validator",
        short: "VALIDATOR",
        aliases: &["validator"],
        prompt: include_str!("scenario_validator.md"),
        temperature: 0.35,
        max_tokens: 6000,
        data_area: 70_000,
        transfer: TransferMode::Summary,
        atom_type: "Scenario_Atom",
    },
    Builtin {
        name: "Knowledge_Vault",
        short: "VAULT",
        aliases: &["vault"],
        prompt: include_str!("knowledge_vault.md"),
        temperature: 0.1,
        max_tokens: 4000,
        data_area: 85_000,
        transfer: TransferMode::Reference,
        atom_type: "Asset_Index",
    },
    Builtin {
        name: "Strategic_Critic",
        short: "CRITIC",
        aliases: &["critic"],
        prompt: include_str!("strategic_critic.md"),
        temperature: 0.4,
        max_tokens: 8000,
        data_area: 60_000,
        transfer: TransferMode::Summary,
        atom_type: "Strategic_Decision",
    },
    Builtin {
        name: "Orchestrator",
        short: "ORCH",
        aliases: &["orchestrator"],
        prompt: include_str!("orchestrator.md"),
        temperature: 0.3,
        max_tokens: 8000,
        data_area: 85_000,
        transfer: TransferMode::Summary,
        atom_type: "Plan_Update",
    },
];

/// Seed 001 §2.2.3 default timeout, the base for every agent.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 300.0;
/// Seed 000 §6.1 max input tokens of every seed agent.
pub const DEFAULT_MAX_INPUT_TOKENS: u64 = 100_000;

fn from_builtin(b: &Builtin) -> AgentDef {
    AgentDef {
        name: b.name.to_string(),
        short_name: b.short.to_string(),
        system_prompt: b.prompt.to_string(),
        temperature: b.temperature,
        max_tokens: b.max_tokens,
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        max_input_tokens: DEFAULT_MAX_INPUT_TOKENS,
        data_area_tokens: b.data_area,
        preferred_transfer: b.transfer,
        atom_type: b.atom_type.to_string(),
        tools: Vec::new(),
        skills: Vec::new(),
    }
}

/// The key agent names are compared by: the name in lower case. This is the one rule
/// of agent names, for a task's `agent` and for the keys of a plan's `agents` alike: a
/// built-in agent is named by its full name (`Scholar_Internalizer`), its alias
/// (`scholar`) or its short name (`SCHOLAR`), a user-defined agent by its name as
/// written in `agents`, each in any case.
pub fn name_key(name: &str) -> String {
    name.to_lowercase()
}

/// The full name of the built-in agent that `name` spells (see [`name_key`]).
pub fn builtin_name(name: &str) -> Option<&'static str> {
    // The built-in names are ASCII, so for an ASCII name the ASCII comparison is the
    // same rule without a lower-cased copy per name.
    let key = (!name.is_ascii()).then(|| name_key(name));
    let same = |builtin: &str| match &key {
        None => builtin.eq_ignore_ascii_case(name),
        Some(key) => name_key(builtin) == *key,
    };
    BUILTINS
        .iter()
        .find(|b| same(b.name) || same(b.short) || b.aliases.iter().any(|a| same(a)))
        .map(|b| b.name)
}

/// Looks up a built-in agent by full name, short name or alias, in any case.
pub fn builtin(name: &str) -> Option<AgentDef> {
    let full = builtin_name(name)?;
    BUILTINS.iter().find(|b| b.name == full).map(from_builtin)
}

/// Names of all built-in agents.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|b| b.name).collect()
}

/// Short name for a user-defined agent: its letters and digits, upper-cased, at most 12.
pub fn derive_short_name(name: &str) -> String {
    let s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .take(12)
        .collect();
    if s.is_empty() {
        "AGENT".to_string()
    } else {
        s
    }
}

/// A user-defined agent (or an override of a built-in) as written in a plan's `agents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Short name for ids.
    #[serde(default)]
    pub short_name: Option<String>,
    /// System prompt text.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Base temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Base max tokens.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Base timeout in seconds.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Max input tokens.
    #[serde(default)]
    pub max_input_tokens: Option<u64>,
    /// Data area in tokens.
    #[serde(default)]
    pub data_area_tokens: Option<u64>,
    /// Preferred transfer mode.
    #[serde(default)]
    pub preferred_transfer: Option<TransferMode>,
    /// Atom type produced.
    #[serde(default)]
    pub atom_type: Option<String>,
    /// Tools it may call by default.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Skills offered to it by default.
    #[serde(default)]
    pub skills: Option<Vec<String>>,
}

impl AgentSpec {
    /// Applies this spec over `base` (a built-in) or over generic defaults.
    pub fn build(&self, name: &str, base: Option<AgentDef>) -> AgentDef {
        let mut def = base.unwrap_or_else(|| AgentDef {
            name: name.to_string(),
            short_name: derive_short_name(name),
            system_prompt: format!("# Role: {name}\n\nAnswer with one JSON object: {{\"output\": {{\"atoms\": [...], \"summary\": \"...\"}}}}."),
            temperature: 0.3,
            max_tokens: 8000,
            timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
            max_input_tokens: DEFAULT_MAX_INPUT_TOKENS,
            data_area_tokens: 80_000,
            preferred_transfer: TransferMode::Full,
            atom_type: "Atom".to_string(),
            tools: Vec::new(),
            skills: Vec::new(),
        });
        if let Some(v) = &self.short_name {
            def.short_name = v.clone();
        }
        if let Some(v) = &self.system_prompt {
            def.system_prompt = v.clone();
        }
        if let Some(v) = self.temperature {
            def.temperature = v;
        }
        if let Some(v) = self.max_tokens {
            def.max_tokens = v;
        }
        if let Some(v) = self.timeout_seconds {
            def.timeout_seconds = v;
        }
        if let Some(v) = self.max_input_tokens {
            def.max_input_tokens = v;
        }
        if let Some(v) = self.data_area_tokens {
            def.data_area_tokens = v;
        }
        if let Some(v) = self.preferred_transfer {
            def.preferred_transfer = v;
        }
        if let Some(v) = &self.tools {
            def.tools = v.clone();
        }
        if let Some(v) = &self.skills {
            def.skills = v.clone();
        }
        if let Some(v) = &self.atom_type {
            def.atom_type = v.clone();
        }
        def
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_resolve_by_any_name() {
        for n in ["Scholar_Internalizer", "SCHOLAR", "Scholar", "scholar"] {
            assert_eq!(
                builtin(n).map(|a| a.short_name),
                Some("SCHOLAR".to_string()),
                "{n}"
            );
        }
        assert_eq!(
            builtin("Validator").map(|a| a.name),
            Some("Scenario_Validator".into())
        );
        assert!(builtin("Nobody").is_none());
        for n in ["orch", "ORCHESTRATOR", "Orchestrator", "ORCH"] {
            assert_eq!(builtin_name(n), Some("Orchestrator"), "{n}");
        }
        // The Kelvin sign lower-cases to `k`: the same rule for names that are not ASCII.
        assert_eq!(
            builtin_name("\u{212A}nowledge_vault"),
            Some("Knowledge_Vault")
        );
    }

    #[test]
    fn seed_001_5_1_defaults() {
        let code = builtin("Code_Architect").expect("builtin");
        assert_eq!((code.max_tokens, code.timeout_seconds), (10000, 300.0));
        assert_eq!(builtin("Knowledge_Vault").map(|a| a.max_tokens), Some(4000));
        assert_eq!(
            builtin("Scenario_Validator").map(|a| a.max_tokens),
            Some(6000)
        );
    }
}
