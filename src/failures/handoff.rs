//! An `ExecuteToInitContext` (seed 002 handoff 2) for chosen samples: paths and index
//! entries only, the trigger reason, the iteration summary and 3–5 suggestions; its
//! size checked against the seed's expectation of 2K–5K tokens; written atomically.

use std::path::Path;

use crate::protocol::handoff::{
    ExecuteToInitContext, FailurePriority, FailureSampleIndexEntry, HandoffType, IterationSummary,
};
use crate::tokens::TokenCounter;

use super::doc::DocKind;
use super::index::{Sample, Tree};
use super::layout;
use super::report::ProblemsReport;
use super::write::{write_json_atomic, WriteError};

/// The seed's lower expectation for a context's size, tokens.
pub const EXPECTED_MIN_TOKENS: u64 = 2_000;
/// The seed's upper expectation for a context's size, tokens.
pub const EXPECTED_MAX_TOKENS: u64 = 5_000;
/// Suggestions taken from the report when none are given (the seed: 3–5).
pub const DEFAULT_SUGGESTIONS: usize = 5;

/// What goes into a context besides the samples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HandoffSpec {
    /// `execution_output_dir` as written into the context.
    pub execution_output_dir: String,
    /// `trigger_reason`: why the Execute agent hands back.
    pub trigger_reason: String,
    /// `iteration_summary`.
    pub iteration_summary: IterationSummary,
    /// `layer1_problems_report_path`, relative to the output directory.
    pub report_path: String,
    /// `modification_suggestions_summary`.
    pub suggestions: Vec<String>,
    /// `timestamp` (RFC 3339); now when empty.
    pub timestamp: String,
}

impl HandoffSpec {
    /// A spec for the current iteration of `tree`, for a context file to be written at
    /// `context_path` (the output directory is written relative to the file's
    /// directory): counts from the index and the report, suggestions from the report.
    pub fn for_tree(
        tree: &Tree,
        report: Option<&ProblemsReport>,
        context_path: &Path,
        trigger_reason: &str,
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
        let total = it
            .and_then(|i| i.total_samples)
            .or_else(|| r.and_then(|r| r.total_samples));
        let failed = it
            .and_then(|i| i.failed_samples)
            .or_else(|| r.and_then(|r| r.failed_samples));
        let quality = match (total, failed) {
            (Some(t), Some(f)) if t > 0 => Some(round2(1.0 - f as f64 / t as f64)),
            _ => None,
        };
        HandoffSpec {
            execution_output_dir: layout::slash(&layout::relative_to(from, &dir)),
            trigger_reason: trigger_reason.to_string(),
            iteration_summary: IterationSummary {
                total_iterations: it.map(|i| i.number).filter(|&n| n > 0),
                final_quality: quality,
                total_samples: total,
                failed_samples: failed,
                ..IterationSummary::default()
            },
            report_path,
            suggestions: r
                .map(|r| r.suggestions(DEFAULT_SUGGESTIONS))
                .unwrap_or_default(),
            timestamp: String::new(),
        }
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The index entry of `s` (unknown fields: failure type `Unknown`, 0 turns, priority
/// medium).
pub fn index_entry(s: &Sample) -> FailureSampleIndexEntry {
    FailureSampleIndexEntry {
        sample_id: s.id.to_string(),
        sample_path: s.rel_path(DocKind::Sample),
        trace_path: s.rel_path(DocKind::Trace),
        evaluation_path: s.rel_path(DocKind::Evaluation),
        attribution_path: s.rel_path(DocKind::Attribution),
        failure_type: s.failure_type.as_deref().unwrap_or("Unknown").to_string(),
        conversation_turns: s.conversation_turns.unwrap_or(0),
        checkers_failed: s.checkers_failed.iter().map(|c| c.to_string()).collect(),
        priority: s.priority.unwrap_or(FailurePriority::Medium),
        extra: Default::default(),
    }
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
            .map(index_entry)
            .collect(),
        layer1_problems_report_path: spec.report_path.clone(),
        modification_suggestions_summary: spec.suggestions.clone(),
        extra: Default::default(),
    }
}

/// How a context's size compares with the seed's 2K–5K expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeVerdict {
    /// Below 2K: fine, but little to go on.
    Under,
    /// 2K–5K.
    Ok,
    /// Above 5K: the context is meant to stay light.
    Over,
}

/// A context's size and what to say about it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SizeCheck {
    /// Tokens of the context as written (pretty JSON).
    pub tokens: u64,
    /// Compared with 2K–5K.
    pub verdict: SizeVerdict,
    /// A warning for a person when not [`SizeVerdict::Ok`].
    pub warning: Option<String>,
}

/// Checks the size of `ctx` as it would be written.
pub fn check_size(ctx: &ExecuteToInitContext, counter: &TokenCounter) -> SizeCheck {
    let text = serde_json::to_string_pretty(ctx).unwrap_or_default();
    size_of_tokens(counter.count(&text), ctx.failure_samples_index.len())
}

/// The verdict for a context of `tokens` with `samples` index entries.
pub fn size_of_tokens(tokens: u64, samples: usize) -> SizeCheck {
    let (verdict, warning) = if tokens < EXPECTED_MIN_TOKENS {
        (
            SizeVerdict::Under,
            Some(format!(
                "the context is {tokens} tokens, under the {EXPECTED_MIN_TOKENS}–{EXPECTED_MAX_TOKENS} the protocol expects: {samples} sample(s) may be too few to show the problem"
            )),
        )
    } else if tokens > EXPECTED_MAX_TOKENS {
        (
            SizeVerdict::Over,
            Some(format!(
                "the context is {tokens} tokens, over the {EXPECTED_MIN_TOKENS}–{EXPECTED_MAX_TOKENS} the protocol expects: choose fewer than {samples} samples (typical cases) and let the Init agent load the rest from the report"
            )),
        )
    } else {
        (SizeVerdict::Ok, None)
    };
    SizeCheck {
        tokens,
        verdict,
        warning,
    }
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
