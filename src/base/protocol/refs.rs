//! Seed 000 §2–§3: data references, filters, resolution failures and fallback configs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{is_empty_map, Extra};

/// A data reference (seed 000 §2), tagged by `ref_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ref_type", rename_all = "snake_case")]
pub enum DataReference {
    /// Output of another task, located by JSONPath.
    TaskOutput(TaskOutputRef),
    /// A file inside the workspace.
    File(FileRef),
    /// A query over a whitelisted table.
    DbQuery(DbQueryRef),
    /// A field of an eval's sample: `plexus eval` puts the value found at `path` in
    /// each copy of the plan (`data`); outside an eval it has nothing to read.
    Sample(SampleRef),
}

/// `sample` reference: a JSONPath into an eval's sample (`{id, input, vars, metadata}`;
/// never its expected value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRef {
    /// JSONPath into the sample, such as `$.input.document` (`$.input` by default).
    #[serde(default = "sample_input")]
    pub path: String,
    /// The value found, put there by `plexus eval` in each copy of the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

fn sample_input() -> String {
    "$.input".into()
}

impl DataReference {
    /// The `ref_type` string of this reference.
    pub fn ref_type(&self) -> &'static str {
        match self {
            DataReference::TaskOutput(_) => "task_output",
            DataReference::File(_) => "file",
            DataReference::DbQuery(_) => "db_query",
            DataReference::Sample(_) => "sample",
        }
    }
}

/// `task_output` reference (seed 000 §2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutputRef {
    /// Referenced task.
    pub task_id: String,
    /// JSONPath into the task's output, e.g. `$.atoms[*].content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Filter over the selected items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<RefFilter>,
    /// `none`, `summary` or `keys_only`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// A filter `{field, operator, value}` (seed 000 §2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefFilter {
    /// Field of each item to test.
    pub field: String,
    /// Comparison.
    pub operator: FilterOp,
    /// Operand.
    pub value: Value,
}

/// Filter and condition operators (seed 000 §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Member of a list.
    In,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Gte,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
    /// Substring (or list element) contained.
    Contains,
}

impl FilterOp {
    /// The operator as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FilterOp::Eq => "eq",
            FilterOp::Ne => "ne",
            FilterOp::In => "in",
            FilterOp::Gt => "gt",
            FilterOp::Gte => "gte",
            FilterOp::Lt => "lt",
            FilterOp::Lte => "lte",
            FilterOp::Contains => "contains",
        }
    }
}

/// Transform applied to a task output (seed 000 §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// Pass as is.
    None,
    /// Summarise.
    Summary,
    /// Keep only the keys.
    KeysOnly,
}

/// `file` reference (seed 000 §2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRef {
    /// Path relative to the workspace root.
    pub path: String,
    /// `pdf`, `md`, `json` or `txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Text encoding, `utf-8` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// Only these sections of a structured document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<String>>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `db_query` reference (seed 000 §2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbQueryRef {
    /// One of the whitelisted tables.
    pub table: String,
    /// Conditions, ANDed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<DbCondition>>,
    /// Columns to return (all by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<Vec<String>>,
    /// Ordering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_by: Option<OrderBy>,
    /// Most rows returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One db_query condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbCondition {
    /// Column.
    pub field: String,
    /// Comparison.
    pub operator: FilterOp,
    /// Operand (always bound as a parameter).
    pub value: Value,
}

/// `order_by` of a db_query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderBy {
    /// Column.
    pub field: String,
    /// `asc` or `desc`.
    #[serde(default = "default_direction")]
    pub direction: String,
}

fn default_direction() -> String {
    "asc".to_string()
}

/// The wrapper `{"data_reference": {...}}` used in the seed's examples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataReferenceDoc {
    /// The reference.
    pub data_reference: DataReference,
}

/// Error codes of reference resolution (seed 000 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RefErrorCode {
    /// Target does not exist.
    RefNotFound,
    /// Resolution timed out.
    RefTimeout,
    /// No permission (e.g. outside the workspace).
    RefPermissionDenied,
    /// Data has the wrong format.
    RefFormatError,
    /// JSONPath is invalid.
    RefPathInvalid,
    /// Filter is wrong.
    RefFilterError,
}

impl RefErrorCode {
    /// The code as the seed writes it (`REF_NOT_FOUND`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RefErrorCode::RefNotFound => "REF_NOT_FOUND",
            RefErrorCode::RefTimeout => "REF_TIMEOUT",
            RefErrorCode::RefPermissionDenied => "REF_PERMISSION_DENIED",
            RefErrorCode::RefFormatError => "REF_FORMAT_ERROR",
            RefErrorCode::RefPathInvalid => "REF_PATH_INVALID",
            RefErrorCode::RefFilterError => "REF_FILTER_ERROR",
        }
    }
}

/// A `resolution_failure` record (seed 000 §3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolutionFailure {
    /// Kind of reference that failed.
    pub ref_type: String,
    /// Referenced task, for task_output references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// What went wrong.
    pub error_code: RefErrorCode,
    /// Human-readable explanation.
    pub error_message: String,
    /// Strategy applied.
    pub fallback_strategy: String,
    /// Value used instead.
    #[serde(default)]
    pub fallback_value: Value,
    /// When it happened (RFC 3339).
    pub timestamp: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Wrapper `{"resolution_failure": {...}}` of the seed's example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolutionFailureDoc {
    /// The failure.
    pub resolution_failure: ResolutionFailure,
}

/// Strategy when a reference (or a dependency) fails (seed 000 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackStrategy {
    /// Use `default_value` instead.
    UseDefault,
    /// Retry `retry_count` times, `retry_delay_ms` apart.
    Retry,
    /// Go on without the data.
    Skip,
    /// Stop the task.
    Abort,
}

/// `fallback_config` (seed 000 §3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FallbackConfig {
    /// Strategy.
    pub strategy: FallbackStrategy,
    /// Value used by `use_default`.
    #[serde(default)]
    pub default_value: Value,
    /// Retries for `retry`.
    #[serde(default = "default_retry_count")]
    pub retry_count: u32,
    /// Delay between retries.
    #[serde(default = "default_retry_delay")]
    pub retry_delay_ms: u64,
    /// What to do when retries are exhausted: `skip` or `abort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_final_failure: Option<FallbackStrategy>,
}

fn default_retry_count() -> u32 {
    3
}

fn default_retry_delay() -> u64 {
    1000
}

/// Wrapper `{"fallback_config": {...}}` of the seed's example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FallbackConfigDoc {
    /// The config.
    pub fallback_config: FallbackConfig,
}

/// The reference of the overview of seed 000 §2.1, whose `ref_type` lists the alternatives
/// (`"task_output | file | db_query"`); concrete references parse as [`DataReference`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataReferenceOverview {
    /// The alternatives, as written.
    pub ref_type: String,
    /// The type-specific fields.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Wrapper `{"data_reference": {...}}` of the seed 000 §2.1 overview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataReferenceOverviewDoc {
    /// The overview.
    pub data_reference: DataReferenceOverview,
}

/// The `fallback_config` template of seed 000 §3.2, whose `strategy` and
/// `on_final_failure` list the alternatives (`"use_default | retry | skip | abort"`);
/// concrete configs parse as [`FallbackConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FallbackConfigTemplate {
    /// Strategy alternatives, as written.
    pub strategy: String,
    /// Value used by `use_default`.
    #[serde(default)]
    pub default_value: Value,
    /// Retries for `retry`.
    pub retry_count: u32,
    /// Delay between retries.
    pub retry_delay_ms: u64,
    /// Alternatives when retries are exhausted, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_final_failure: Option<String>,
}

/// Wrapper `{"fallback_config": {...}}` of the seed 000 §3.2 template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FallbackConfigTemplateDoc {
    /// The template.
    pub fallback_config: FallbackConfigTemplate,
}

/// Tables a `db_query` reference may read, with their columns (seed 000 §2.4).
pub const QUERYABLE: &[(&str, &[&str])] = &[
    (
        "papers",
        &[
            "paper_id",
            "title",
            "authors",
            "year",
            "venue",
            "domain",
            "pdf_path",
            "arxiv_url",
            "abstract",
            "created_at",
        ],
    ),
    (
        "knowledge_atoms",
        &[
            "atom_id",
            "run_id",
            "task_id",
            "invocation_id",
            "agent",
            "atom_type",
            "category",
            "data_status",
            "paper_id",
            "domain",
            "content",
            "confidence",
            "grade",
            "score",
            "provenance",
            "delta_audit",
            "metadata",
            "created_at",
            "reviewed_by",
            "reviewed_at",
        ],
    ),
    (
        "relations",
        &[
            "relation_id",
            "source_atom_id",
            "target_atom_id",
            "relation_type",
            "run_id",
            "invocation_id",
            "note",
            "created_at",
        ],
    ),
    (
        "quality_records",
        &[
            "record_id",
            "run_id",
            "task_id",
            "invocation_id",
            "atom_id",
            "grade",
            "score",
            "issues",
            "created_at",
        ],
    ),
    (
        "execution_logs",
        &[
            "run_id",
            "seq",
            "ts",
            "kind",
            "task_id",
            "invocation_id",
            "agent",
            "payload",
        ],
    ),
];

/// Columns of a whitelisted table, or `None` when the table may not be queried.
pub fn queryable_columns(table: &str) -> Option<&'static [&'static str]> {
    QUERYABLE.iter().find(|(t, _)| *t == table).map(|(_, c)| *c)
}
