//! Plans: a DAG of tasks handed to agents (SPEC §2), loaded and fully validated before
//! anything runs, plus a generator of large plans for benchmarks.

mod error;
pub mod react;
mod validate;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::base::agents::AgentDef;
use crate::base::protocol::context::TransferConfig;
use crate::base::protocol::{DataReference, FallbackConfig, OutputRequirements, RequestContext};

pub use error::{PlanError, PlanErrorKind, PlanErrors};
pub use validate::{load_plan_file, parse_plan, parse_plan_owned, plan_schema};

/// Execution mode of a plan (seed 001 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecutionMode {
    /// Base temperature, max_tokens ×1.5, timeout ×2.
    #[serde(rename = "Deep_Internalization")]
    DeepInternalization,
    /// Temperature +0.1, max_tokens ×0.5, timeout ×0.5.
    #[serde(rename = "Quick_Assessment")]
    QuickAssessment,
    /// Temperature −0.1, max_tokens ×1.2, timeout ×1.5.
    #[serde(rename = "Engineering_Reproduction")]
    EngineeringReproduction,
}

impl ExecutionMode {
    /// Every mode's name, as written in plans.
    pub const NAMES: [&'static str; 3] = [
        "Deep_Internalization",
        "Quick_Assessment",
        "Engineering_Reproduction",
    ];

    /// Parses a mode name.
    pub fn parse(s: &str) -> Option<ExecutionMode> {
        match s {
            "Deep_Internalization" => Some(ExecutionMode::DeepInternalization),
            "Quick_Assessment" => Some(ExecutionMode::QuickAssessment),
            "Engineering_Reproduction" => Some(ExecutionMode::EngineeringReproduction),
            _ => None,
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionMode::DeepInternalization => "Deep_Internalization",
            ExecutionMode::QuickAssessment => "Quick_Assessment",
            ExecutionMode::EngineeringReproduction => "Engineering_Reproduction",
        }
    }
}

/// Per-task overrides of the computed constraints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintOverrides {
    /// Timeout in seconds.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Max output tokens.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
}

/// One validated task.
///
/// A large plan holds many of these for a run's whole life, so the settings few tasks
/// give sit apart, boxed ([`Task::options`]): a task that gives none of them holds none.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Unique id within the plan.
    pub task_id: String,
    /// Full agent name (a key of [`Plan::agents`]; shared by the tasks of one agent).
    pub agent: Arc<str>,
    /// Instruction (seed 001 §6.1 template).
    pub instruction: String,
    /// Paper / code info and existing assets (shared: most tasks of a large plan give
    /// none, and hold one empty context between them).
    pub context: Arc<RequestContext>,
    /// Upstream task ids (held at their exact number and length).
    pub depends_on: Box<[Box<str>]>,
    /// Atom type, required fields, threshold, max atoms (shared between the tasks that
    /// ask for the same).
    pub output_requirements: Arc<OutputRequirements>,
    /// The optional settings; `None` when the task gives none of them.
    options: Option<Box<TaskOptions>>,
}

/// The settings of a task that most tasks leave out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskOptions {
    /// Technical focus.
    pub focus: Option<String>,
    /// Data references (seed 000 §2).
    pub data_references: Vec<DataReference>,
    /// Transfer config (seed 000 §7.1).
    pub transfer_config: Option<TransferConfig>,
    /// What to do when references or dependencies fail.
    pub fallback_config: Option<FallbackConfig>,
    /// Constraint overrides.
    pub constraints: ConstraintOverrides,
    /// The tool-using fields (`tools`, `skills`, `max_steps`, `token_budget`).
    pub react: react::TaskReact,
    /// `output_format: text`: the model's plain answer is the task's output (one text
    /// atom), with no JSON asked for.
    pub text_output: bool,
}

/// The options of a task that gives none.
static NO_OPTIONS: TaskOptions = TaskOptions {
    focus: None,
    data_references: Vec::new(),
    transfer_config: None,
    fallback_config: None,
    constraints: ConstraintOverrides {
        timeout_seconds: None,
        max_tokens: None,
        temperature: None,
    },
    react: react::TaskReact {
        tools: None,
        skills: None,
        max_steps: None,
        token_budget: None,
    },
    text_output: false,
};

impl Task {
    /// The task's optional settings (all absent when it gives none).
    pub fn options(&self) -> &TaskOptions {
        self.options.as_deref().unwrap_or(&NO_OPTIONS)
    }
}

impl TaskOptions {
    /// The options as a task holds them: boxed, or nothing when none is given.
    fn boxed(self) -> Option<Box<TaskOptions>> {
        (self != NO_OPTIONS).then(|| Box::new(self))
    }
}

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Plan id.
    pub plan_id: String,
    /// Execution mode.
    pub execution_mode: ExecutionMode,
    /// Free text.
    pub description: Option<String>,
    /// Definitions of every agent the tasks use, by full name.
    pub agents: BTreeMap<String, AgentDef>,
    /// Tasks in file order.
    pub tasks: Vec<Task>,
    /// Where the plan came from (file path or a label).
    pub source: String,
    /// The plan's JSON text as loaded (the snapshot stored with a run).
    pub json: String,
    /// Task index by id (24 bytes an entry: ids at their length, indexes in 32 bits).
    pub(crate) index: rustc_hash::FxHashMap<Box<str>, u32>,
}

impl Plan {
    /// Index of a task by id.
    pub fn task_index(&self, task_id: &str) -> Option<usize> {
        self.index.get(task_id).map(|&i| i as usize)
    }

    /// Dependency layers: layer 0 has no dependencies, layer n depends on layers < n.
    pub fn layers(&self) -> Vec<Vec<usize>> {
        let index: BTreeMap<&str, usize> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.task_id.as_str(), i))
            .collect();
        let mut depth = vec![usize::MAX; self.tasks.len()];
        fn visit(
            i: usize,
            plan: &Plan,
            index: &BTreeMap<&str, usize>,
            depth: &mut [usize],
        ) -> usize {
            if depth[i] != usize::MAX {
                return depth[i];
            }
            depth[i] = 0; // guards against cycles, which validation already rejected
            let d = plan.tasks[i]
                .depends_on
                .iter()
                .filter_map(|d| index.get(&**d))
                .map(|&j| visit(j, plan, index, depth) + 1)
                .max()
                .unwrap_or(0);
            depth[i] = d;
            d
        }
        let mut layers: Vec<Vec<usize>> = Vec::new();
        for i in 0..self.tasks.len() {
            let d = visit(i, self, &index, &mut depth);
            if layers.len() <= d {
                layers.resize(d + 1, Vec::new());
            }
            layers[d].push(i);
        }
        layers
    }
}

/// The task ids of a plan snapshot (the plan's JSON text, as stored with a run) with
/// their places in its `tasks` array; empty when the text does not decode.
pub fn task_order(plan_json: &str) -> std::collections::HashMap<String, usize> {
    let v: serde_json::Value = serde_json::from_str(plan_json).unwrap_or_default();
    v.get("tasks")
        .and_then(|t| t.as_array())
        .map(|tasks| {
            tasks
                .iter()
                .filter_map(|t| t.get("task_id").and_then(|id| id.as_str()))
                .enumerate()
                .map(|(i, id)| (id.to_string(), i))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large plan holds one task per entry for the run's whole life.
    #[test]
    fn a_task_holds_only_the_options_it_gives_and_shares_its_agent_name() {
        assert!(
            std::mem::size_of::<Task>() <= 104,
            "{}",
            std::mem::size_of::<Task>()
        );
        let plan = parse_plan(
            r#"{"plan_id": "P", "execution_mode": "Quick_Assessment", "tasks": [
                {"task_id": "A", "agent": "Code_Architect", "instruction": "x"},
                {"task_id": "B", "agent": "Code_Architect", "instruction": "y",
                 "depends_on": ["A"], "constraints": {"max_tokens": 900}}]}"#,
            "p.json",
        )
        .expect("valid");
        let (a, b) = (&plan.tasks[0], &plan.tasks[1]);
        assert!(a.options.is_none());
        assert_eq!(a.options(), &TaskOptions::default());
        assert!(b.options.is_some());
        assert_eq!(b.options().constraints.max_tokens, Some(900));
        assert!(Arc::ptr_eq(&a.agent, &b.agent));
    }
}
