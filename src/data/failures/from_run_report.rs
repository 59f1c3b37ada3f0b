//! How plexus's own failures are attributed when written as a tree: each failed,
//! timed-out or partial invocation (retried or not) gets a cause from its first error code (or
//! its status), a failure type and a priority; the problems report groups the samples
//! by cause, with counts, a typical case and a suggested fix.

use std::collections::BTreeMap;

use super::from_run_text::{cause_text, description, impact, no_message, Lang};
use crate::base::protocol::handoff::{
    FailurePriority, Layer1Problem, Layer1ProblemsReport, ModificationPriority, ProblemSeverity,
    SuggestedFix,
};
use crate::data::store::FailedInvocation;

/// A cause of failure; its title and fix come from [`cause_text`] in the report's
/// language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cause {
    /// `problem_type`, e.g. `Output_Parse_Error`.
    pub(crate) key: &'static str,
    /// The index's `failure_type`.
    pub(crate) failure_type: &'static str,
}

/// The cause of a failure row whose stored response is `response`: an E001 the provider
/// returned (an HTTP error, a refused connection: the response keeps its
/// `provider_error`) is the provider's problem, not a missing data source.
pub(crate) fn cause_of(row: &FailedInvocation, response: Option<&serde_json::Value>) -> Cause {
    let c = |key, failure_type| Cause { key, failure_type };
    let from_provider = response.is_some_and(|r| r.get("provider_error").is_some());
    match row.error_code() {
        Some("E001") if from_provider => c("Provider_Error", "Layer3_Provider"),
        Some("E001") => c("Source_Not_Found", "Layer3_Source"),
        Some("E002") => c("Output_Parse_Error", "Layer2_OutputFormat"),
        Some("E003") => c("Output_Validation", "Layer2_OutputFormat"),
        Some("E004") => c("Timeout", "Layer3_Timeout"),
        Some("E005") => c("Quality_Below_Threshold", "Layer1_QualityGate"),
        Some("E006") => c("Dependency_Failed", "Layer3_Dependency"),
        Some("E007") => c("Hallucination", "Layer2_Hallucination"),
        Some("E008") => c("System_Error", "Layer3_System"),
        _ => match row.status.as_str() {
            "timeout" => c("Timeout", "Layer3_Timeout"),
            "partial" => c("Partial_Output", "Layer2_Quality"),
            "lost" => c("Lost_In_Crash", "Layer3_System"),
            _ => c("Failed_Without_Code", "Layer3_Unknown"),
        },
    }
}

/// The priority of a failure row: a final failure is high, a partial result medium, a
/// failure that a later attempt replaced low.
pub(crate) fn priority_of(row: &FailedInvocation) -> FailurePriority {
    if row.retried {
        return FailurePriority::Low;
    }
    match row.status.as_str() {
        "failed" | "timeout" => FailurePriority::High,
        "partial" => FailurePriority::Medium,
        _ => FailurePriority::Low,
    }
}

/// One sample as the report sees it.
pub(crate) struct Attributed<'a> {
    pub(crate) row: &'a FailedInvocation,
    /// Its id in the tree (task and attempt).
    pub(crate) sample_id: String,
    pub(crate) cause: Cause,
}

/// The problems report in `lang`: one problem per cause (most samples first), severity
/// from how many are final failures, and the modification priority in the same order.
pub(crate) fn problems_report(
    samples: &[Attributed],
    total: u32,
    iteration: u32,
    now: &str,
    lang: Lang,
) -> Layer1ProblemsReport {
    let mut groups: BTreeMap<&'static str, Vec<&Attributed>> = BTreeMap::new();
    for s in samples {
        groups.entry(s.cause.key).or_default().push(s);
    }
    let mut groups: Vec<(&'static str, Vec<&Attributed>)> = groups.into_iter().collect();
    groups.sort_by_key(|(k, v)| (std::cmp::Reverse(v.len()), *k));
    let failed = samples.len() as u32;
    let mut problems = Vec::new();
    let mut priority = Vec::new();
    for (i, (_, group)) in groups.iter().enumerate() {
        let Some(first) = group.first() else { continue };
        let cause = first.cause;
        let text = cause_text(cause.key, lang);
        let finals = group
            .iter()
            .filter(|s| priority_of(s.row) == FailurePriority::High)
            .count() as f64;
        let n = group.len() as u32;
        let severity = if total > 0 && finals / total as f64 >= 0.3 {
            ProblemSeverity::Critical
        } else if finals > 0.0 {
            ProblemSeverity::High
        } else if group
            .iter()
            .any(|s| priority_of(s.row) == FailurePriority::Medium)
        {
            ProblemSeverity::Medium
        } else {
            ProblemSeverity::Low
        };
        let typical = group
            .iter()
            .find(|s| priority_of(s.row) == FailurePriority::High)
            .unwrap_or(first);
        let tasks: std::collections::BTreeSet<&str> =
            group.iter().map(|s| s.row.task_id.as_str()).collect();
        let id = format!("L1P_{:03}", i + 1);
        problems.push(Layer1Problem {
            problem_id: id.clone(),
            problem_type: cause.key.into(),
            severity,
            title: text.title.into(),
            description: description(lang, n, tasks.len(), finals as u32),
            affected_samples: group.iter().map(|s| s.sample_id.clone()).collect(),
            affected_count: n,
            evidence_summary: typical
                .row
                .message
                .clone()
                .unwrap_or_else(|| no_message(lang, &typical.sample_id, &typical.row.status)),
            typical_case_id: typical.sample_id.clone(),
            suggested_fix: SuggestedFix {
                target: text.fix.0.into(),
                section: cause.key.into(),
                modification: text.fix.1.into(),
                rationale: text.fix.2.into(),
                extra: Default::default(),
            },
            extra: Default::default(),
        });
        priority.push(ModificationPriority {
            priority: i as u32 + 1,
            problem_id: id,
            impact: impact(lang, n),
            estimated_improvement: format!("+{:.0}%", 100.0 * n as f64 / total.max(1) as f64),
            extra: Default::default(),
        });
    }
    Layer1ProblemsReport {
        report_version: "1.0".into(),
        generated_at: now.into(),
        iteration,
        total_samples: total.max(failed),
        failed_samples: failed,
        failure_rate: super::summary::rounded_failure_rate(failed, total),
        layer1_problems: problems,
        modification_priority: priority,
        extra: Default::default(),
    }
}
