//! The tools an agent may call, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::atom_query::AtomQuery;
use super::error::{ToolError, ToolErrorCode};
use super::file_reader::FileReader;
use super::file_search::FileSearch;
use super::level::with_level_arg;
use super::time::{CalculateDate, GetNow};
use super::tool::{Tool, ToolDefinition};

/// Tools by name, listed in name order.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// A registry with no tools.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The built-in tools: `atom_query`, `calculate_date`, `file_reader`, `file_search`,
    /// `get_now`.
    pub fn with_builtins() -> Self {
        let mut r = Self::empty();
        r.register(Arc::new(AtomQuery));
        r.register(Arc::new(CalculateDate));
        r.register(Arc::new(FileReader));
        r.register(Arc::new(FileSearch));
        r.register(Arc::new(GetNow));
        r
    }

    /// Adds `tool`, replacing one of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_string(), tool);
    }

    /// The tool called `name`, or an `UNKNOWN_TOOL` error naming the tools there are.
    pub fn get(&self, name: &str) -> Result<Arc<dyn Tool>, ToolError> {
        self.tools.get(name).cloned().ok_or_else(|| {
            let known: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            ToolError::invalid(
                ToolErrorCode::UnknownTool,
                format!(
                    "no tool named `{}`; the tools are: {}",
                    crate::base::text::cut::cut_chars(name, 100),
                    known.join(", ")
                ),
            )
        })
    }

    /// Names of the tools, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// What the model is told: each tool's name, description and input schema.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        // Each with the `output_level` argument every tool takes.
        self.tools
            .values()
            .map(|t| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: with_level_arg(t.input_schema()),
            })
            .collect()
    }
}
