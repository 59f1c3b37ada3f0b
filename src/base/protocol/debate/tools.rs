//! The debate tools: calls and their outputs.

use serde::{Deserialize, Serialize};

use crate::base::protocol::{is_empty_map, Extra};

/// A call of one of the debate tools (§3), tagged by `tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum DebateToolCall {
    /// `compare_positions`: embed the positions and compare them.
    ComparePositions(ComparePositionsInput),
    /// `get_now`: current time.
    GetNow,
    /// `calculate_date`: a date plus an offset.
    CalculateDate(CalculateDateInput),
}

/// Input of `compare_positions` (§3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparePositionsInput {
    /// One text per agent: conclusion plus key reasons.
    pub texts: Vec<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Input of `calculate_date` (§3.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalculateDateInput {
    /// Start date (`YYYY-MM-DD`).
    pub base_date: String,
    /// Offset added.
    pub offset: DateOffset,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `offset` of a `calculate_date` call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DateOffset {
    /// Weeks (may be negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weeks: Option<i64>,
    /// Days (may be negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<i64>,
    /// Other units (e.g. months), kept as written.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// The envelope of every debate tool result: `success` and the tool's `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput<T> {
    /// Whether the tool succeeded.
    pub success: bool,
    /// The result, on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<T>,
    /// Fields not modelled here (e.g. an error message on failure).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// Result of `compare_positions`.
pub type ComparePositionsOutput = ToolOutput<ComparePositionsData>;
/// Result of `get_now`.
pub type GetNowOutput = ToolOutput<GetNowData>;
/// Result of `calculate_date`.
pub type CalculateDateOutput = ToolOutput<CalculateDateData>;

/// `data` of a `compare_positions` result (§3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparePositionsData {
    /// One embedding per text (768 dimensions).
    #[serde(default)]
    pub embeddings: Vec<Vec<f64>>,
    /// Pairwise cosine similarity.
    pub similarity_matrix: Vec<Vec<f64>>,
    /// Mean of the off-diagonal similarities.
    pub mean_similarity: f64,
    /// Indices of the least similar pair.
    pub most_different_pair: [usize; 2],
    /// Similarity of that pair.
    pub most_different_similarity: f64,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `data` of a `get_now` result (§3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetNowData {
    /// Local time, `YYYY-MM-DDTHH:MM:SS`.
    pub now: String,
    /// IANA time zone, e.g. `Asia/Shanghai`.
    pub timezone: String,
    /// English weekday name.
    pub weekday: String,
    /// Local date, `YYYY-MM-DD`.
    pub date: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `data` of a `calculate_date` result (§3.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalculateDateData {
    /// Resulting date, `YYYY-MM-DD`.
    pub result_date: String,
    /// English weekday name of that date.
    pub weekday: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}
