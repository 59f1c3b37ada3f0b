//! An `ExecuteToInitContext` (seed 002 handoff 2) for chosen samples: paths and index
//! entries only, the trigger reason, the iteration summary and 3–5 suggestions; its
//! size checked against the seed's expectation of 2K–5K tokens; written atomically.
//! Every figure is one the index or the documents give; what they do not is `null`.

use std::path::Path;

use crate::base::protocol::handoff::{
    ExecuteToInitContext, FailureSampleIndexEntry, HandoffType, IterationSummary, ProblemSeverity,
};
use crate::base::tokens::TokenCounter;

use super::doc::DocKind;
use super::facts::{count_iteration, sample_facts};
use super::index::{IndexSource, Sample, Tree};
use super::layout;
use super::report::ProblemsReport;
use super::size::size_of_tokens;
pub use super::size::{SizeCheck, SizeVerdict, EXPECTED_MAX_TOKENS, EXPECTED_MIN_TOKENS};
use super::write::{write_json_atomic, WriteError};

/// Suggestions taken from the report when none are given (the seed: 3–5).
pub const DEFAULT_SUGGESTIONS: usize = 5;

/// What goes into a context besides the samples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HandoffSpec {
    /// `execution_output_dir` as written into the context.
    pub execution_output_dir: String,
    /// `trigger_reason`: why the Execute agent hands back (what the person typed, or
    /// the rule that fired); `None` is written as `null`.
    pub trigger_reason: Option<String>,
    /// `iteration_summary`.
    pub iteration_summary: IterationSummary,
    /// `layer1_problems_report_path`, relative to the output directory.
    pub report_path: String,
    /// `modification_suggestions_summary`.
    pub suggestions: Vec<String>,
    /// `timestamp` (RFC 3339); now when empty.
    pub timestamp: String,
    /// Why a figure of the summary is unknown (for the person writing the handoff).
    pub notes: Vec<String>,
}

impl HandoffSpec {
    /// A spec for the current iteration of `tree`, for a context file to be written at
    /// `context_path` (the output directory is written relative to the file's
    /// directory). The sample counts come together from the index when it gives them
    /// (`failure_summary.json`, a context file), else from the iteration's own files
    /// (see [`count_iteration`]); a pair where more failed than were evaluated is
    /// dropped. `final_quality` is the mean evaluation score when every counted sample
    /// has one. Suggestions come from the report; the trigger reason is `reason` when
    /// it is not blank.
    pub fn for_tree(
        tree: &Tree,
        report: Option<&ProblemsReport>,
        context_path: &Path,
        reason: Option<&str>,
    ) -> HandoffSpec {
        let it = tree.current();
        let dir = it
            .map(|i| i.dir.clone())
            .unwrap_or_else(|| tree.root.clone());
        let from = context_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let report_path = it
            .and_then(|i| i.report_path.strip_prefix(&i.dir).ok())
            .map(layout::slash)
            .unwrap_or_else(|| layout::REPORT_FILE.into());
        let r = report.filter(|r| r.readable());
        let counted = count_iteration(&dir, &tree.options);
        let mut notes = counted.notes.clone();
        let indexed = it.filter(|i| {
            matches!(
                i.source,
                Some(IndexSource::Summary) | Some(IndexSource::Context(_))
            ) && i.total_samples.is_some()
        });
        let (mut total, mut failed) = match indexed {
            Some(i) => (i.total_samples, i.failed_samples),
            None => (counted.total, counted.failed),
        };
        if let (Some(t), Some(f)) = (total, failed) {
            if f > t {
                notes.push(format!(
                    "the index says {f} of {t} samples failed: more than there are, so neither is written"
                ));
                (total, failed) = (None, None);
            }
        }
        let every_sample = total.is_some() && total == counted.total;
        if counted.mean_score.is_some() && !every_sample {
            notes.push(
                "the evaluations here are not those of every sample counted: final_quality unknown"
                    .into(),
            );
        }
        // A tree read from a context file hands back the figures that file gives, where
        // the iteration's own files give none.
        let given = it
            .and_then(|i| i.context_summary.clone())
            .unwrap_or_default();
        let quality = counted
            .mean_score
            .filter(|_| every_sample)
            .or(given.final_quality);
        HandoffSpec {
            execution_output_dir: layout::slash(&layout::relative_to(from, &dir)),
            trigger_reason: reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_string),
            iteration_summary: IterationSummary {
                total_iterations: it
                    .map(|i| i.number)
                    .filter(|&n| n > 0)
                    .or(given.total_iterations),
                final_quality: quality,
                layer2_iterations: given.layer2_iterations,
                layer3_iterations: given.layer3_iterations,
                total_samples: total,
                failed_samples: failed,
                ..IterationSummary::default()
            },
            report_path,
            suggestions: r
                .map(|r| r.suggestions(DEFAULT_SUGGESTIONS))
                .unwrap_or_default(),
            timestamp: String::new(),
            notes,
        }
    }
}

/// Share of the samples the report's critical problems may affect before the handoff's
/// rule fires (the protocol's example: "超过30%阈值").
pub const CRITICAL_SHARE_THRESHOLD: f64 = 0.30;

/// The rule that fired, as a trigger reason: the report's critical problems affect
/// more than [`CRITICAL_SHARE_THRESHOLD`] of the `total` samples. The samples counted
/// are the distinct ids the critical problems list, or the sum of their
/// `affected_count` when a list is cut short (`"..."`, or fewer ids than the count).
/// `None` when the rule does not fire or a figure is missing.
pub fn fired_rule(report: &ProblemsReport, total: Option<u32>) -> Option<String> {
    let total = total.filter(|&t| t > 0)?;
    let critical: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.severity == Some(ProblemSeverity::Critical))
        .collect();
    if critical.is_empty() {
        return None;
    }
    let whole = critical.iter().all(|p| {
        !p.affected_samples.iter().any(|s| s == "...")
            && p.affected_samples.len() as u32 >= p.affected_count
    });
    let affected = if whole {
        let ids: std::collections::BTreeSet<&str> = critical
            .iter()
            .flat_map(|p| p.affected_samples.iter().map(String::as_str))
            .collect();
        ids.len() as u32
    } else {
        critical.iter().map(|p| p.affected_count).sum::<u32>()
    }
    .min(total);
    let share = affected as f64 / total as f64;
    (share > CRITICAL_SHARE_THRESHOLD).then(|| {
        format!(
            "critical problems affect {:.0}% of the samples ({affected} of {total}), over the {:.0}% threshold",
            share * 100.0,
            CRITICAL_SHARE_THRESHOLD * 100.0
        )
    })
}

/// The index entry of `s` as its index gives it: a field the index does not give is
/// `None` (written `null`), never a default.
pub fn index_entry(s: &Sample) -> FailureSampleIndexEntry {
    FailureSampleIndexEntry {
        sample_id: s.id.to_string(),
        sample_path: s.rel_path(DocKind::Sample),
        trace_path: s.rel_path(DocKind::Trace),
        evaluation_path: s.rel_path(DocKind::Evaluation),
        attribution_path: s.rel_path(DocKind::Attribution),
        failure_type: s.failure_type.as_deref().map(str::to_string),
        conversation_turns: s.conversation_turns,
        checkers_failed: (!s.checkers_failed.is_empty())
            .then(|| s.checkers_failed.iter().map(|c| c.to_string()).collect()),
        priority: s.priority,
        extra: Default::default(),
    }
}

/// [`index_entry`] with what the index leaves out filled from the sample's own
/// documents (see [`sample_facts`]); still `None` where they say nothing either.
pub fn index_entry_read(tree: &Tree, s: &Sample) -> FailureSampleIndexEntry {
    let mut e = index_entry(s);
    let complete = e.failure_type.is_some()
        && e.conversation_turns.is_some()
        && e.checkers_failed.is_some()
        && e.priority.is_some();
    if complete {
        return e;
    }
    let f = sample_facts(tree, s);
    e.failure_type = e.failure_type.or(f.failure_type);
    e.conversation_turns = e.conversation_turns.or(f.conversation_turns);
    e.checkers_failed = e.checkers_failed.or(f.checkers_failed);
    e.priority = e.priority.or(f.priority);
    e
}

/// The context for the samples at `rows` of `tree` (rows out of range are skipped).
pub fn build_handoff(tree: &Tree, rows: &[u32], spec: &HandoffSpec) -> ExecuteToInitContext {
    let timestamp = if spec.timestamp.is_empty() {
        chrono::Local::now().format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        spec.timestamp.clone()
    };
    ExecuteToInitContext {
        version: "2.0".into(),
        handoff_type: HandoffType::ExecuteToInit,
        timestamp,
        metadata: Default::default(),
        execution_output_dir: spec.execution_output_dir.clone(),
        trigger_reason: spec.trigger_reason.clone(),
        iteration_summary: spec.iteration_summary.clone(),
        failure_samples_index: rows
            .iter()
            .filter_map(|&r| tree.samples.get(r as usize))
            .map(|s| index_entry_read(tree, s))
            .collect(),
        layer1_problems_report_path: spec.report_path.clone(),
        modification_suggestions_summary: spec.suggestions.clone(),
        extra: Default::default(),
    }
}

/// Checks the size of `ctx` as it would be written.
pub fn check_size(ctx: &ExecuteToInitContext, counter: &TokenCounter) -> SizeCheck {
    let text = serde_json::to_string_pretty(ctx).unwrap_or_default();
    size_of_tokens(counter.count(&text), ctx.failure_samples_index.len())
}

/// Writes `ctx` to `path` atomically (pretty JSON) and returns its size check.
pub fn write_handoff(
    path: &Path,
    ctx: &ExecuteToInitContext,
    counter: &TokenCounter,
) -> Result<SizeCheck, WriteError> {
    write_json_atomic(path, ctx)?;
    Ok(check_size(ctx, counter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(size_of_tokens(1999, 1).verdict, SizeVerdict::Under);
        assert!(size_of_tokens(1999, 1).warning.is_some());
        assert_eq!(size_of_tokens(2000, 5).verdict, SizeVerdict::Ok);
        assert_eq!(size_of_tokens(5000, 5).warning, None);
        assert_eq!(size_of_tokens(5001, 40).verdict, SizeVerdict::Over);
    }
}
