//! `failure_summary.json`: the protocol names the file ("失败样本汇总") but not its
//! fields, so plexus writes the iteration's counts beside the same
//! `failure_samples_index` entries an `ExecuteToInitContext` carries — one reader for
//! both.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::protocol::handoff::FailureSampleIndexEntry;

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

/// The counts of a summary of `entries` out of `total_samples`: samples (at least the
/// failed ones), failed samples, and the failed samples per failure type and per checker.
type Counts = (u32, u32, BTreeMap<String, u32>, BTreeMap<String, u32>);

fn counts<'a>(
    total_samples: u32,
    entries: impl Iterator<Item = &'a FailureSampleIndexEntry>,
) -> Counts {
    let mut by_failure_type: BTreeMap<String, u32> = BTreeMap::new();
    let mut by_checker: BTreeMap<String, u32> = BTreeMap::new();
    let mut failed = 0u32;
    for e in entries {
        failed = failed.saturating_add(1);
        if let Some(t) = &e.failure_type {
            *by_failure_type.entry(t.clone()).or_default() += 1;
        }
        for c in e.checkers_failed.iter().flatten() {
            *by_checker.entry(c.clone()).or_default() += 1;
        }
    }
    (
        total_samples.max(failed),
        failed,
        by_failure_type,
        by_checker,
    )
}

fn rate(failed: u32, total: u32) -> f64 {
    if total == 0 {
        0.0
    } else {
        failed as f64 / total as f64
    }
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
        let (total, failed, by_failure_type, by_checker) = counts(total_samples, entries.iter());
        FailureSummary {
            iteration,
            generated_at,
            total_samples: total,
            failed_samples: failed,
            failure_rate: rate(failed, total),
            by_failure_type,
            by_checker,
            failure_samples_index: entries,
        }
    }
}

/// A [`FailureSummary`] of entries it borrows, written as the same JSON: a summary
/// rewritten while an eval runs is not copied whole first.
#[derive(Serialize)]
#[serde(bound(serialize = "Entries<I>: Serialize"))]
pub struct SummaryOf<'a, I> {
    iteration: u32,
    generated_at: &'a str,
    total_samples: u32,
    failed_samples: u32,
    failure_rate: f64,
    by_failure_type: BTreeMap<String, u32>,
    by_checker: BTreeMap<String, u32>,
    failure_samples_index: Entries<I>,
}

/// Entries serialized as a sequence from an iterator that can be walked again.
pub struct Entries<I>(I);

impl<'a, I> Serialize for Entries<I>
where
    I: Iterator<Item = &'a FailureSampleIndexEntry> + Clone,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.clone())
    }
}

impl<'a, I> SummaryOf<'a, I>
where
    I: Iterator<Item = &'a FailureSampleIndexEntry> + Clone,
{
    /// The summary of `entries` (the failed samples) out of `total_samples`.
    pub fn new(iteration: u32, generated_at: &'a str, total_samples: u32, entries: I) -> Self {
        let (total, failed, by_failure_type, by_checker) = counts(total_samples, entries.clone());
        SummaryOf {
            iteration,
            generated_at,
            total_samples: total,
            failed_samples: failed,
            failure_rate: rate(failed, total),
            by_failure_type,
            by_checker,
            failure_samples_index: Entries(entries),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, kind: Option<&str>, checkers: &[&str]) -> FailureSampleIndexEntry {
        FailureSampleIndexEntry {
            sample_id: id.into(),
            sample_path: format!("samples/{id}.json"),
            trace_path: format!("execution_traces/{id}_trace.json"),
            evaluation_path: format!("evaluation_results/{id}_eval.json"),
            attribution_path: format!("attribution_analysis/{id}_attribution.json"),
            failure_type: kind.map(str::to_string),
            conversation_turns: None,
            checkers_failed: Some(checkers.iter().map(|c| c.to_string()).collect()),
            priority: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn a_summary_of_borrowed_entries_is_written_as_the_owned_one() {
        let entries = vec![
            entry("a", Some("confidence"), &["confidence"]),
            entry("b", None, &["format", "grade"]),
            entry("c", Some("format"), &[]),
        ];
        let owned = FailureSummary::new(2, "2026-11-28T00:00:00Z".into(), 10, entries.clone());
        let borrowed = SummaryOf::new(2, "2026-11-28T00:00:00Z", 10, entries.iter());
        assert_eq!(
            serde_json::to_string_pretty(&owned).expect("owned"),
            serde_json::to_string_pretty(&borrowed).expect("borrowed")
        );
        // More failures than samples counted: the total is raised to them.
        let few = SummaryOf::new(1, "t", 1, entries.iter());
        assert_eq!((few.total_samples, few.failed_samples), (3, 3));
    }
}
