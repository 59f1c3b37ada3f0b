//! The plan's `agents`: changes to built-in agents and user-defined agents, each keyed by
//! any spelling the name rule allows ([`agents::name_key`]), and the lookup of a task's
//! agent by the same rule. Everything resolved is known by its full name.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::shape::describe;
use super::{check_id, schema, Collector, K};
use crate::base::agents::{self, AgentDef, AgentSpec};

/// One entry of `agents`.
struct Entry {
    /// The key as written.
    written: String,
    /// The agent's full name: a built-in's, or the key for a user-defined agent.
    name: String,
    /// Whether it changes a built-in agent.
    builtin: bool,
    /// The definition; `None` when the entry is malformed (already reported).
    def: Option<AgentDef>,
    /// Whether a task names it.
    used: bool,
}

/// The plan's agents, by name key.
pub(super) struct AgentTable {
    entries: HashMap<String, Entry>,
}

impl AgentTable {
    /// Reads and checks the plan's `agents` (absent: none). Two entries naming the same
    /// agent are an error.
    pub(super) fn parse(c: &mut Collector<'_>, value: Option<&Value>) -> AgentTable {
        let mut table = AgentTable {
            entries: HashMap::new(),
        };
        let map = match value {
            None => return table,
            Some(Value::Object(m)) => m,
            Some(v) => {
                c.push(
                    None,
                    "agents",
                    K::Shape,
                    format!(
                        "must be an object of agent definitions, not {}",
                        describe(v)
                    ),
                );
                return table;
            }
        };
        for (written, spec) in map {
            let field = format!("agents.{written}");
            check_id(c, None, &field, written);
            let full = agents::builtin_name(written);
            let name = full.map_or_else(|| written.clone(), str::to_string);
            let key = agents::name_key(&name);
            if let Some(first) = table.entries.get(&key) {
                c.push(
                    None,
                    &field,
                    K::DuplicateAgent,
                    format!(
                        "names the same agent as `agents.{}` ({name}); give each agent one entry",
                        first.written
                    ),
                );
                continue;
            }
            let def = Self::definition(c, &field, &name, spec, full.is_some());
            table.entries.insert(
                key,
                Entry {
                    written: written.clone(),
                    name,
                    builtin: full.is_some(),
                    def,
                    used: false,
                },
            );
        }
        table
    }

    /// The definition an entry gives: a built-in agent with the entry's fields applied,
    /// or a new agent (every field has a default).
    fn definition(
        c: &mut Collector<'_>,
        field: &str,
        name: &str,
        spec: &Value,
        builtin: bool,
    ) -> Option<AgentDef> {
        let s: AgentSpec = c.read(None, field, spec, &schema::AGENT)?;
        if let Some(short) = &s.short_name {
            check_id(c, None, &format!("{field}.short_name"), short);
        }
        check_react_lists(c, None, field, &s.tools, &s.skills);
        let base = if builtin { agents::builtin(name) } else { None };
        Some(s.build(name, base))
    }

    /// The full name of the agent a task names, by the name rule; `None` when no
    /// built-in agent and no entry of `agents` has that name.
    pub(super) fn resolve(&mut self, written: &str) -> Option<String> {
        let full = agents::builtin_name(written);
        let key = agents::name_key(full.unwrap_or(written));
        if let Some(e) = self.entries.get_mut(&key) {
            e.used = true;
            return Some(e.name.clone());
        }
        full.map(str::to_string)
    }

    /// The names a task may use, for an error message: the built-in agents, then the
    /// user-defined ones.
    pub(super) fn known(&self) -> Vec<String> {
        let mut known: Vec<String> = agents::builtin_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut own: Vec<&str> = self
            .entries
            .values()
            .filter(|e| !e.builtin)
            .map(|e| e.written.as_str())
            .collect();
        own.sort_unstable();
        known.extend(own.into_iter().map(str::to_string));
        known
    }

    /// Refuses every entry that is not a built-in agent and that no task names: it has
    /// no effect on the run, so it can only be a mistake (most often a misspelt
    /// built-in agent, whose change would otherwise be lost without a word).
    pub(super) fn check_unused(&self, c: &mut Collector<'_>) {
        let mut unused: Vec<&Entry> = self
            .entries
            .values()
            .filter(|e| !e.builtin && !e.used)
            .collect();
        unused.sort_unstable_by(|a, b| a.written.cmp(&b.written));
        for e in unused {
            c.push(
                None,
                format!("agents.{}", e.written),
                K::UnknownAgent,
                format!(
                    "`{}` is not a built-in agent and no task uses it; built-in agents: {}",
                    e.written,
                    agents::builtin_names().join(", ")
                ),
            );
        }
    }

    /// The definitions of the agents named by `used` (full names), for the plan.
    pub(super) fn definitions<'a>(
        &self,
        used: impl IntoIterator<Item = &'a str>,
    ) -> BTreeMap<String, AgentDef> {
        let mut out = BTreeMap::new();
        for name in used {
            if out.contains_key(name) {
                continue;
            }
            let def = match self.entries.get(&agents::name_key(name)) {
                Some(e) => e.def.clone(),
                None => agents::builtin(name),
            };
            if let Some(def) = def {
                out.insert(name.to_string(), def);
            }
        }
        out
    }
}

/// Checks `tools` and `skills` lists (of a task, or of an agent under `prefix`).
pub(super) fn check_react_lists(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    prefix: &str,
    tools: &Option<Vec<String>>,
    skills: &Option<Vec<String>>,
) {
    let at = |f: &str, i: usize| {
        if prefix.is_empty() {
            format!("{f}[{i}]")
        } else {
            format!("{prefix}.{f}[{i}]")
        }
    };
    for (i, name) in tools.iter().flatten().enumerate() {
        if let Err(e) = crate::model::plan::react::check_tool(name) {
            c.push(tid, at("tools", i), K::UnknownField, e);
        }
    }
    for (i, name) in skills.iter().flatten().enumerate() {
        if let Err(e) = crate::model::plan::react::check_skill(name) {
            c.push(tid, at("skills", i), K::Shape, e);
        }
    }
}
