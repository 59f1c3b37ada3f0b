//! Seed 000 §4–§7: transfer modes and configs, batching, priorities, context limits and
//! the `context_management` report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{is_empty_map, DataReference, Extra, FallbackConfig};

/// Transfer mode of one input (seed 000 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransferMode {
    /// Passed whole.
    Full,
    /// Summarised.
    Summary,
    /// Only a reference with a preview.
    Reference,
}

/// `transfer_config` of a task's input (seed 000 §7.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TransferConfig {
    /// Forced mode; chosen by size, agent and data type when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<TransferMode>,
    /// Token cap for the transferred data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Only inputs of these priority levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_filter: Option<Vec<u8>>,
    /// Preview items in reference mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_preview_count: Option<u32>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `summary_config` (seed 000 §4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryConfig {
    /// Most characters of the summary.
    pub max_length: u64,
    /// Fields kept verbatim.
    #[serde(default)]
    pub preserve_fields: Vec<String>,
    /// Fields summarised.
    #[serde(default)]
    pub summarize_fields: Vec<String>,
    /// Target compression ratio.
    pub summary_ratio: f64,
}

/// A transferred payload (seed 000 §4.1–§4.3), tagged by `transfer_mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "transfer_mode", rename_all = "snake_case")]
pub enum TransferPayload {
    /// Full transfer.
    Full {
        /// The data.
        data: Value,
    },
    /// Summary transfer.
    Summary {
        /// How it was summarised.
        summary_config: SummaryConfig,
        /// The summary.
        data: Value,
    },
    /// Reference transfer.
    Reference {
        /// Where the data can be fetched.
        reference: TransferReference,
        /// Preview.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inline_preview: Option<Value>,
    },
}

/// The `reference` of a reference transfer (seed 000 §4.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferReference {
    /// Kind of reference.
    pub ref_type: String,
    /// Referenced task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Paths the receiver may fetch.
    #[serde(default)]
    pub available_paths: Vec<String>,
    /// Size statistics.
    #[serde(default)]
    pub data_stats: BTreeMap<String, Value>,
}

/// `batch_config` (seed 000 §6.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchConfig {
    /// Whether batching is on.
    pub enabled: bool,
    /// Tokens per batch.
    pub batch_size_tokens: u64,
    /// Tokens repeated between consecutive batches.
    pub overlap_tokens: u64,
    /// Most batches.
    pub max_batches: u32,
    /// `merge`, `vote`, `latest` or `weighted`.
    pub aggregation_strategy: String,
    /// `chronological`, `importance` or `random`.
    pub batch_priority: String,
}

/// Wrapper `{"batch_config": {...}}` of the seed's example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchConfigDoc {
    /// The config.
    pub batch_config: BatchConfig,
}

/// `priority_config` (seed 000 §6.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityConfig {
    /// The four levels.
    pub levels: Vec<PriorityLevel>,
}

/// One priority level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityLevel {
    /// 1 (critical) … 4 (optional).
    pub level: u8,
    /// Level name.
    pub name: String,
    /// What it means.
    pub description: String,
    /// Example data.
    #[serde(default)]
    pub examples: Vec<String>,
}

/// Wrapper `{"priority_config": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityConfigDoc {
    /// The config.
    pub priority_config: PriorityConfig,
}

/// `context_limits` (seed 000 §6.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextLimits {
    /// Most input tokens.
    pub max_input_tokens: u64,
    /// Most output tokens.
    pub max_output_tokens: u64,
    /// Reserved for the system prompt.
    pub reserved_for_system_prompt: u64,
    /// Reserved for the instructions.
    pub reserved_for_instructions: u64,
    /// Input minus reservations.
    pub available_for_data: u64,
    /// Fraction of the available area actually used.
    pub safety_margin: f64,
    /// `available_for_data × safety_margin`.
    pub effective_data_limit: u64,
}

/// Wrapper `{"context_limits": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextLimitsDoc {
    /// The limits.
    pub context_limits: ContextLimits,
}

/// The `context_management` report of one invocation (seed 000 §7.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextManagement {
    /// Task the report is about.
    pub task_id: String,
    /// Tokens and priority of each input.
    pub total_input_data: BTreeMap<String, InputSize>,
    /// Sum of all inputs.
    pub total_tokens: u64,
    /// Effective data limit.
    pub context_limit: u64,
    /// Tokens over the limit (0 when within).
    pub overflow: u64,
    /// What was done about it.
    pub resolution: Resolution,
}

/// Size and priority of one input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputSize {
    /// Token count.
    pub tokens: u64,
    /// Priority level 1–4.
    pub priority: u8,
}

/// `resolution` of a context report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    /// E.g. `priority_based_trimming`.
    pub strategy: String,
    /// Actions taken, in order.
    pub actions: Vec<TrimAction>,
    /// Tokens after the actions.
    pub final_tokens: u64,
    /// Whether the result fits.
    pub within_limit: bool,
}

/// One trimming action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrimAction {
    /// Input acted on.
    pub data: String,
    /// `summarize`, `filter_by_priority`, `drop`, `batch`, …
    pub action: String,
    /// Filter applied, for filtering actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// Tokens before.
    pub original_tokens: u64,
    /// Tokens after.
    pub reduced_tokens: u64,
}

/// Wrapper `{"context_management": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextManagementDoc {
    /// The report.
    pub context_management: ContextManagement,
}

/// The task chain of seed 000 §7.1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskChainDoc {
    /// Tasks in order.
    pub task_chain: Vec<ChainTask>,
}

/// One task of a seed 000 task chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainTask {
    /// Task id.
    pub task_id: String,
    /// Agent (short or full name).
    pub agent: String,
    /// Inputs.
    pub input: ChainInput,
    /// Output schema name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<String>,
}

/// `input` of a chain task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainInput {
    /// References to resolve.
    #[serde(default)]
    pub data_references: Vec<DataReference>,
    /// How to transfer them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_config: Option<TransferConfig>,
    /// What to do on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_config: Option<FallbackConfig>,
}

/// The rule a choice came from, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The reference's or task's transfer_config named the mode.
    Configured,
    /// §5.1 size band.
    Size,
    /// §5.2 receiving agent.
    Agent,
    /// §5.3 data type.
    DataType,
    /// §4.1: under a fifth of the receiving agent's window, passed whole.
    Window,
    /// A part of the prompt itself (the context's dependencies and existing assets):
    /// passed in place, changed only by trimming.
    PromptPart,
}

/// How one input was passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputPlan {
    /// Name.
    pub name: String,
    /// Tokens of the data as resolved.
    pub tokens: u64,
    /// Mode chosen.
    pub mode: TransferMode,
    /// Whether it is passed in batches (> 50K tokens).
    pub batched: bool,
    /// The rule that chose the mode.
    pub rule: Rule,
    /// Priority.
    pub priority: u8,
    /// What trimming did (`keep`, `summarize`, `filter_by_priority`, `omit`).
    pub action: String,
    /// Tokens sent.
    pub tokens_after: u64,
}
