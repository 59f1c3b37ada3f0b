//! Seed 002: the handoff context packages between the Init and Execute agents, the
//! failure-sample index and the `layer1_problems_report.json` file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{is_empty_map, Extra};

/// Direction of a handoff (`handoff_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffType {
    /// Init agent → Execute agent.
    InitToExecute,
    /// Execute agent → Init agent.
    ExecuteToInit,
}

/// The fields every handoff context carries (seed 002 `ContextPackage`); any other field
/// is kept in `extra`, so either concrete context also parses as this base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextPackage {
    /// Context schema version, `2.0`.
    pub version: String,
    /// Direction of the handoff.
    pub handoff_type: HandoffType,
    /// When the context was made.
    pub timestamp: String,
    /// Extension point.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub metadata: Extra,
    /// Fields not modelled here (`extra = "allow"`).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Context the Init agent hands the Execute agent (seed 002 handoff 1); paths only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitToExecuteContext {
    /// Context schema version, `2.0`.
    pub version: String,
    /// Always `init_to_execute`.
    pub handoff_type: HandoffType,
    /// When the context was made.
    pub timestamp: String,
    /// Extension point.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub metadata: Extra,
    /// The user's original requirement.
    pub user_requirement: String,
    /// Design files by role, e.g. `unified_scenario_design_path`, `business_rules_path`,
    /// `format_specifications_path`.
    pub design_artifacts: BTreeMap<String, String>,
    /// Layer 1 design intent and trade-offs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_rationale: Option<String>,
    /// Modification history of HITL-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_iterations: Option<Vec<Extra>>,
    /// Known constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_constraints: Option<Vec<String>>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Context the Execute agent returns to the Init agent (seed 002 handoff 2): the output
/// directory, statistics, an index of failed samples and the report path, never contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecuteToInitContext {
    /// Context schema version, `2.0`.
    pub version: String,
    /// Always `execute_to_init`.
    pub handoff_type: HandoffType,
    /// When the context was made.
    pub timestamp: String,
    /// Extension point.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub metadata: Extra,
    /// Directory of this iteration's outputs, e.g. `…/execution_outputs/iteration_12`.
    pub execution_output_dir: String,
    /// Why control returns to the Init agent: what the person typed or the rule that
    /// fired; `null` when neither says.
    #[serde(default)]
    pub trigger_reason: Option<String>,
    /// Iteration statistics.
    pub iteration_summary: IterationSummary,
    /// Failed samples: ids, paths and key figures.
    pub failure_samples_index: Vec<FailureSampleIndexEntry>,
    /// Path of `layer1_problems_report.json`, relative to the output directory.
    pub layer1_problems_report_path: String,
    /// The 3–5 most important suggestions, briefly.
    pub modification_suggestions_summary: Vec<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `iteration_summary` of an [`ExecuteToInitContext`] (a free-form dict in the seed).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IterationSummary {
    /// Iterations run in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_iterations: Option<u32>,
    /// Quality reached at the end, in [0, 1]; `null` when not known.
    #[serde(default)]
    pub final_quality: Option<f64>,
    /// Layer 2 iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer2_iterations: Option<u32>,
    /// Layer 3 iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer3_iterations: Option<u32>,
    /// Samples evaluated; `null` when not known.
    #[serde(default)]
    pub total_samples: Option<u32>,
    /// Samples that failed; `null` when not known.
    #[serde(default)]
    pub failed_samples: Option<u32>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One entry of `failure_samples_index`: where a failed sample's files are and why it failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureSampleIndexEntry {
    /// Sample id, e.g. `BS_MT_001`.
    pub sample_id: String,
    /// `samples/<id>.json`.
    pub sample_path: String,
    /// `execution_traces/<id>_trace.json` (conversation history, tool calls, states).
    pub trace_path: String,
    /// `evaluation_results/<id>_eval.json` (checker results and LLM verdict).
    pub evaluation_path: String,
    /// `attribution_analysis/<id>_attribution.json`.
    pub attribution_path: String,
    /// Attributed cause, e.g. `Layer1_BusinessRule`; `null` when not known.
    #[serde(default)]
    pub failure_type: Option<String>,
    /// Turns of the conversation; `null` when not known.
    #[serde(default)]
    pub conversation_turns: Option<u32>,
    /// Checkers that failed; `null` when not known.
    #[serde(default)]
    pub checkers_failed: Option<Vec<String>>,
    /// Priority by scope and severity; `null` when not known.
    #[serde(default)]
    pub priority: Option<FailurePriority>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Priority of a failed sample (`high` / `medium` / `low`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailurePriority {
    /// Wide impact or severe.
    High,
    /// Moderate.
    Medium,
    /// Minor.
    Low,
}

/// Severity of a Layer 1 problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProblemSeverity {
    /// Must be fixed before the next iteration.
    Critical,
    /// Important.
    High,
    /// Moderate.
    Medium,
    /// Minor.
    Low,
}

/// `layer1_problems_report.json`, written by the Execute agent (seed 002).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer1ProblemsReport {
    /// Report format version, `1.0`.
    pub report_version: String,
    /// When the report was written.
    pub generated_at: String,
    /// Iteration reported on.
    pub iteration: u32,
    /// Samples evaluated.
    pub total_samples: u32,
    /// Samples that failed.
    pub failed_samples: u32,
    /// `failed_samples / total_samples`.
    pub failure_rate: f64,
    /// Problems found, with attribution and suggested fix.
    pub layer1_problems: Vec<Layer1Problem>,
    /// The order in which to fix them.
    pub modification_priority: Vec<ModificationPriority>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One entry of `layer1_problems`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer1Problem {
    /// Problem id, e.g. `L1P_001`.
    pub problem_id: String,
    /// Kind, e.g. `BusinessRule_Unclear`, `Checker_Design`.
    pub problem_type: String,
    /// How severe it is.
    pub severity: ProblemSeverity,
    /// One-line title.
    pub title: String,
    /// What is wrong.
    pub description: String,
    /// Samples that show it.
    pub affected_samples: Vec<String>,
    /// How many samples show it.
    pub affected_count: u32,
    /// What the evidence says, briefly.
    pub evidence_summary: String,
    /// A representative sample.
    pub typical_case_id: String,
    /// How to fix it.
    pub suggested_fix: SuggestedFix,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `suggested_fix` of a Layer 1 problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuggestedFix {
    /// File to change, e.g. `BusinessRules.md`.
    pub target: String,
    /// Section of the file, e.g. `## 请假申请流程` or `checkers.leave_balance_deducted`.
    pub section: String,
    /// The change.
    pub modification: String,
    /// Why.
    pub rationale: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One entry of `modification_priority`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModificationPriority {
    /// Rank, 1 first.
    pub priority: u32,
    /// Problem ranked.
    pub problem_id: String,
    /// What fixing it solves, e.g. `解决9个失败case`.
    pub impact: String,
    /// Expected quality gain, e.g. `+33%`.
    pub estimated_improvement: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}
