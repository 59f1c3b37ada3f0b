//! Engine settings: concurrency, retries, the quality gate, time scaling.

use serde::{Deserialize, Serialize};

use super::retry::RetryPolicy;
use crate::base::tokens::TokenCounter;
use crate::model::gate::quality::QualityConfig;

/// Settings of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineConfig {
    /// Most invocations in flight (SPEC §3.1, default 8).
    pub concurrency: usize,
    /// Retry counts and delays.
    pub retry: RetryPolicy,
    /// Quality gate.
    pub quality: QualityConfig,
    /// Multiplier on every `timeout_seconds` when enforcing it (1.0 in production; the
    /// demo uses a smaller value so that timeouts show within seconds).
    pub timeout_scale: f64,
    /// Lowest temperature after adjustments (seed 001 §5.3 shows 0.1 as the floor).
    pub min_temperature: f64,
    /// Token counting.
    pub tokens: TokenCounter,
    /// Store operations queued before dispatch waits for the writer (backpressure).
    pub backlog_limit: usize,
    /// Seed recorded with the run.
    pub seed: u64,
    /// Most milliseconds of a fast stream gathered into one `chunk` event.
    pub chunk_flush_ms: u64,
    /// Most provider chunks gathered into one `chunk` event (1 = one event per chunk).
    pub chunk_flush_max: usize,
    /// Keep the run open after every task finished, waiting for a retry or a quit (the
    /// TUI sets this; upstream outputs are then kept in memory for retries).
    #[serde(skip)]
    pub hold_open: bool,
    /// Root that `file` references are read from (nothing outside it).
    pub workspace: std::path::PathBuf,
    /// Folder of the skills (`NAME/SKILL.md`); `None`: the workspace's `skills/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills_dir: Option<std::path::PathBuf>,
    /// Longest a `db_query` reference may run, ms (REF_TIMEOUT after).
    pub ref_timeout_ms: u64,
    /// Summaries are written by the provider (abstractive, seed 000 §4.2) instead of
    /// extracted; a task can also ask with `transfer_config.summary_strategy`.
    pub abstractive_summaries: bool,
    /// The run's money budget, US dollars: once its calls cost this much, no new call
    /// starts and the run ends `budget_reached` (resumable with a larger budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// The price of the run's model, from the config's price table when the run starts
    /// or resumes (not stored: a resume prices its calls at the prices of its day).
    #[serde(skip)]
    pub price: Option<crate::base::cost::Price>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            concurrency: 8,
            retry: RetryPolicy::default(),
            quality: QualityConfig::default(),
            timeout_scale: 1.0,
            min_temperature: 0.1,
            tokens: TokenCounter::default(),
            backlog_limit: 16_384,
            seed: 7,
            chunk_flush_ms: 16,
            chunk_flush_max: 2,
            hold_open: false,
            workspace: std::path::PathBuf::from("."),
            skills_dir: None,
            ref_timeout_ms: 5_000,
            abstractive_summaries: false,
            max_cost_usd: None,
            price: None,
        }
    }
}

/// Where a plan's skills are: the workspace's `skills/` folder when it has one (`None`),
/// else the `skills/` folder beside the plan file when that exists, so a plan that
/// ships with its skills runs from anywhere.
pub fn skills_dir_for(
    plan_file: &std::path::Path,
    workspace: &std::path::Path,
) -> Option<std::path::PathBuf> {
    if workspace.join("skills").is_dir() {
        return None;
    }
    let beside = plan_file.parent()?.join("skills");
    if !beside.is_dir() {
        return None;
    }
    Some(std::path::absolute(&beside).unwrap_or(beside))
}
