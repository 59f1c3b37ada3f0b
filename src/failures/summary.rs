//! `failure_summary.json`: the protocol names the file ("失败样本汇总") but not its
//! fields, so plexus writes the iteration's counts beside the same
//! `failure_samples_index` entries an `ExecuteToInitContext` carries — one reader for
//! both.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::handoff::FailureSampleIndexEntry;

/// `failed / total` rounded to two decimals, as the problems report writes it (0 with no
/// samples).
pub fn rounded_failure_rate(failed: u32, total: u32) -> f64 {
    if total == 0 {
        0.0
    } else {
        ((failed as f64 / total as f64) * 100.0).round() / 100.0
    }
}

/// The summary file's contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureSummary {
    /// Iteration summarised.
    pub iteration: u32,
    /// When it was written (RFC 3339).
    pub generated_at: String,
    /// Samples evaluated.
    pub total_samples: u32,
    /// Samples that failed.
    pub failed_samples: u32,
    /// `failed_samples / total_samples` (0 when there are none).
    pub failure_rate: f64,
    /// Failed samples per failure type.
    #[serde(default)]
    pub by_failure_type: BTreeMap<String, u32>,
    /// Failed samples per failed checker.
    #[serde(default)]
    pub by_checker: BTreeMap<String, u32>,
    /// One entry per failed sample.
    pub failure_samples_index: Vec<FailureSampleIndexEntry>,
}

impl FailureSummary {
    /// A summary of `entries` (the failed samples) out of `total_samples`, with the
    /// counts computed.
    pub fn new(
        iteration: u32,
        generated_at: String,
        total_samples: u32,
        entries: Vec<FailureSampleIndexEntry>,
    ) -> FailureSummary {
        let mut by_failure_type: BTreeMap<String, u32> = BTreeMap::new();
        let mut by_checker: BTreeMap<String, u32> = BTreeMap::new();
        for e in &entries {
            if let Some(t) = &e.failure_type {
                *by_failure_type.entry(t.clone()).or_default() += 1;
            }
            for c in e.checkers_failed.iter().flatten() {
                *by_checker.entry(c.clone()).or_default() += 1;
            }
        }
        let failed = entries.len() as u32;
        let total = total_samples.max(failed);
        FailureSummary {
            iteration,
            generated_at,
            total_samples: total,
            failed_samples: failed,
            failure_rate: if total == 0 {
                0.0
            } else {
                failed as f64 / total as f64
            },
            by_failure_type,
            by_checker,
            failure_samples_index: entries,
        }
    }
}
