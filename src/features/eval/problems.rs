//! The end of an eval's iteration: the problems report (failed samples grouped by the
//! check that failed them, samples the model could not be reached for, and numeric
//! near-misses listed as a problem of the check's design) and the handoff to the next
//! iteration, whose `final_quality` is the sample pass rate and whose trigger reason
//! comes from a stated rule.

use std::collections::BTreeMap;

use serde_json::Value;

use super::checks::CheckKind;
use super::spec::Scoring;
use crate::base::protocol::handoff::{
    ExecuteToInitContext, FailureSampleIndexEntry, HandoffType, IterationSummary, Layer1Problem,
    Layer1ProblemsReport, ModificationPriority, ProblemSeverity, SuggestedFix,
};

/// Share of the samples a problem must reach to be critical (the handoff's rule fires
/// on a critical problem).
pub const CRITICAL_SHARE: f64 = 0.30;

/// Most samples the handoff lists (its typical cases; the summary lists them all).
pub const HANDOFF_SAMPLES: usize = 10;

/// A failed (or errored) sample as the report sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    /// Its name in the tree.
    pub file_id: String,
    /// `failed` or `error`.
    pub status: String,
    /// Its attribution document.
    pub attribution: Value,
}

fn severity(share: f64) -> ProblemSeverity {
    if share >= CRITICAL_SHARE {
        ProblemSeverity::Critical
    } else if share >= 0.10 {
        ProblemSeverity::High
    } else if share >= 0.03 {
        ProblemSeverity::Medium
    } else {
        ProblemSeverity::Low
    }
}

/// Whether a failed numeric result is a near-miss: off by at most twice what the check
/// allows, or by 1% of the expected number.
fn near_miss(kind: &CheckKind, evidence: &Value) -> Option<f64> {
    let CheckKind::Numeric {
        abs_tol, rel_tol, ..
    } = kind
    else {
        return None;
    };
    let expected = evidence.get("expected")?.as_f64()?;
    let found = evidence.get("found")?.as_f64()?;
    let off = (found - expected).abs();
    let allowed = abs_tol.max(rel_tol * expected.abs());
    (off <= (2.0 * allowed).max(0.01 * expected.abs())).then_some((off * 1e9).round() / 1e9)
}

struct Group {
    problem_type: String,
    title: String,
    description: String,
    samples: Vec<String>,
    evidence: String,
    fix: SuggestedFix,
}

/// The failed samples on which the checks and an LLM judge disagree (the judge failed
/// them and every check passed, or the other way round): one of the two is wrong,
/// which is a problem of the checks' design.
fn disagreements(scoring: &Scoring, failed: &[Failed]) -> Option<Group> {
    let judges = scoring.judge_names();
    if judges.is_empty() {
        return None;
    }
    let (mut judge_only, mut checks_only) = (Vec::new(), Vec::new());
    for f in failed.iter().filter(|f| f.status == "failed") {
        let failing: Vec<&str> = f.attribution["failing_checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let by_judge = failing.iter().any(|c| judges.contains(c));
        let by_check = failing.iter().any(|c| !judges.contains(c));
        match (by_judge, by_check) {
            (true, false) => judge_only.push(f.file_id.clone()),
            (false, true) => checks_only.push(f.file_id.clone()),
            _ => {}
        }
    }
    if judge_only.is_empty() && checks_only.is_empty() {
        return None;
    }
    let n = judge_only.len() + checks_only.len();
    Some(Group {
        problem_type: "Checker_Design".into(),
        title: "the checks and the judge disagree".into(),
        description: format!(
            "{n} sample(s): {} failed by the judge though every check passed, {} failed by a check though the judge passed them; one of the two is wrong",
            judge_only.len(),
            checks_only.len()
        ),
        evidence: format!("judge: {}", judges.join(", ")),
        samples: [judge_only, checks_only].concat(),
        fix: SuggestedFix {
            target: "the eval spec".into(),
            section: "checks and the judge's rubric".into(),
            modification: "read the typical cases: loosen the check or make the rubric's criteria say what the check checks".into(),
            rationale: "a check and a judge that disagree measure different things".into(),
            extra: Default::default(),
        },
    })
}

/// The problems report of an iteration: `failed` out of `total` samples.
pub fn report(
    scoring: &Scoring,
    failed: &[Failed],
    total: u64,
    iteration: u32,
    generated_at: &str,
) -> Layer1ProblemsReport {
    let sorted = sort_failed(scoring, failed);
    let mut groups: Vec<Group> = check_groups(scoring, &sorted.by_check);
    groups.extend(near_miss_groups(&sorted.near));
    if let Some(g) = disagreements(scoring, failed) {
        groups.push(g);
    }
    groups.extend(error_groups(sorted.unreached));
    groups.sort_by_key(|g| std::cmp::Reverse(g.samples.len()));
    let (problems, priority) = numbered(groups, total);
    let failed_n = failed.len() as u32;
    let total32 = u32::try_from(total).unwrap_or(u32::MAX).max(failed_n);
    Layer1ProblemsReport {
        report_version: "1.0".into(),
        generated_at: generated_at.into(),
        iteration,
        total_samples: total32,
        failed_samples: failed_n,
        failure_rate: crate::data::failures::summary::rounded_failure_rate(failed_n, total32),
        layer1_problems: problems,
        modification_priority: priority,
        extra: Default::default(),
    }
}

/// The failed samples sorted for the report.
struct Sorted<'a> {
    /// The failed samples by the check that failed them.
    by_check: BTreeMap<String, Vec<&'a Failed>>,
    /// The samples that errored (not scored).
    unreached: Vec<&'a Failed>,
    /// Numeric near-misses by check: the sample and how far off it was.
    near: BTreeMap<String, Vec<(String, f64)>>,
}

/// Sorts `failed` by the checks that failed them, errors apart, near-misses noted.
fn sort_failed<'a>(scoring: &Scoring, failed: &'a [Failed]) -> Sorted<'a> {
    let mut sorted = Sorted {
        by_check: BTreeMap::new(),
        unreached: Vec::new(),
        near: BTreeMap::new(),
    };
    for f in failed {
        if f.status == "error" {
            sorted.unreached.push(f);
            continue;
        }
        let checks = f.attribution["failing_checks"].as_array();
        for c in checks.into_iter().flatten().filter_map(Value::as_str) {
            sorted.by_check.entry(c.to_string()).or_default().push(f);
        }
        for e in f.attribution["evidence"].as_array().into_iter().flatten() {
            let Some(name) = e["check"].as_str() else {
                continue;
            };
            let Some(c) = scoring.checks.iter().find(|c| c.name == name) else {
                continue;
            };
            if let Some(off) = near_miss(&c.kind, e) {
                sorted
                    .near
                    .entry(name.to_string())
                    .or_default()
                    .push((f.file_id.clone(), off));
            }
        }
    }
    sorted
}

/// One problem per failing check: the samples it fails.
fn check_groups(scoring: &Scoring, by_check: &BTreeMap<String, Vec<&Failed>>) -> Vec<Group> {
    let mut groups = Vec::new();
    for (check, samples) in by_check {
        let c = scoring.checks.iter().find(|c| &c.name == check);
        let ft = c
            .and_then(|c| c.failure_type.clone())
            .unwrap_or_else(|| check.clone());
        let first = samples[0];
        let why = first.attribution["evidence"]
            .as_array()
            .and_then(|e| e.iter().find(|e| e["check"] == check.as_str()))
            .and_then(|e| e["why"].as_str())
            .unwrap_or("")
            .to_string();
        groups.push(Group {
            problem_type: ft,
            title: format!("check `{check}` fails"),
            description: format!(
                "{} sample(s) fail the check `{check}`; open the typical case to see what was expected and what was found",
                samples.len()
            ),
            samples: samples.iter().map(|f| f.file_id.clone()).collect(),
            evidence: why,
            fix: SuggestedFix {
                target: "the plan's instructions".into(),
                section: format!("checks.{check}"),
                modification: format!(
                    "make the instruction say what `{check}` expects, or correct the check if the answers are right"
                ),
                rationale: "the samples that fail it fail the same way".into(),
                extra: Default::default(),
            },
        });
    }
    groups
}

/// One problem per numeric check its failures miss by little: maybe too strict.
fn near_miss_groups(near: &BTreeMap<String, Vec<(String, f64)>>) -> Vec<Group> {
    let mut groups = Vec::new();
    for (check, misses) in near {
        let worst = misses.iter().map(|(_, off)| *off).fold(0.0, f64::max);
        groups.push(Group {
            problem_type: "Checker_Design".into(),
            title: format!("check `{check}` may be too strict"),
            description: format!(
                "{} sample(s) miss `{check}` by little (at most {worst}); the answers may be right and the tolerance too tight",
                misses.len()
            ),
            samples: misses.iter().map(|(s, _)| s.clone()).collect(),
            evidence: format!("off by at most {worst}"),
            fix: SuggestedFix {
                target: "the eval spec".into(),
                section: format!("checks.{check}"),
                modification: "widen abs_tol or rel_tol, or check the expected values".into(),
                rationale: "near-misses are more often a checker's design than the model's error"
                    .into(),
                extra: Default::default(),
            },
        });
    }
    groups
}

/// The problems of the samples that errored: a judge that could not judge, and a model
/// that could not be reached.
fn error_groups(errored: Vec<&Failed>) -> Vec<Group> {
    let mut groups = Vec::new();
    // Errors of a judge are apart from those of the plan's model.
    let (unjudged, unreached): (Vec<&Failed>, Vec<&Failed>) = errored
        .into_iter()
        .partition(|f| f.attribution["failure_type"] == "judge_unscored");
    if !unjudged.is_empty() {
        groups.push(Group {
            problem_type: "Judge_Unscored".into(),
            title: "a judge could not judge".into(),
            description: format!(
                "{} sample(s) were not scored: no answer of a judge judged every criterion (calls that failed, answers that did not read); they count as errors",
                unjudged.len()
            ),
            samples: unjudged.iter().map(|f| f.file_id.clone()).collect(),
            evidence: first_error(&unjudged),
            fix: SuggestedFix {
                target: "the judges".into(),
                section: "the judge check's rubric and judges".into(),
                modification: "check the judges' profiles, or the rubric's criteria, then `plexus eval rerun EVAL --errors`".into(),
                rationale: "an output no judge judged says nothing about the output".into(),
                extra: Default::default(),
            },
        });
    }
    if !unreached.is_empty() {
        groups.push(Group {
            problem_type: "Model_Unreachable".into(),
            title: "the model could not be reached".into(),
            description: format!(
                "{} sample(s) were not scored: their calls timed out or failed; they count as errors, not failures",
                unreached.len()
            ),
            samples: unreached.iter().map(|f| f.file_id.clone()).collect(),
            evidence: first_error(&unreached),
            fix: SuggestedFix {
                target: "the provider".into(),
                section: "concurrency and timeouts".into(),
                modification: "lower --concurrency or raise the timeouts, then `plexus eval rerun EVAL --errors`".into(),
                rationale: "an error says nothing about the answer".into(),
                extra: Default::default(),
            },
        });
    }
    groups
}

/// The error of the first of `samples` (which is not empty).
fn first_error(samples: &[&Failed]) -> String {
    samples[0].attribution["error"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The groups (largest first) as numbered problems, and the order to fix them in.
fn numbered(groups: Vec<Group>, total: u64) -> (Vec<Layer1Problem>, Vec<ModificationPriority>) {
    let total_n = total.max(1) as f64;
    let mut problems = Vec::new();
    let mut priority = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        let id = format!("L1P_{:03}", i + 1);
        let n = g.samples.len();
        priority.push(ModificationPriority {
            priority: i as u32 + 1,
            problem_id: id.clone(),
            impact: format!("{n} failing sample(s)"),
            estimated_improvement: format!("+{:.0}%", 100.0 * n as f64 / total_n),
            extra: Default::default(),
        });
        problems.push(Layer1Problem {
            problem_id: id,
            problem_type: g.problem_type,
            severity: severity(n as f64 / total_n),
            title: g.title,
            description: g.description,
            typical_case_id: g.samples.first().cloned().unwrap_or_default(),
            affected_count: n as u32,
            affected_samples: g.samples,
            evidence_summary: g.evidence,
            suggested_fix: g.fix,
            extra: Default::default(),
        });
    }
    (problems, priority)
}

/// The rule that fires a handoff, in words, or `None`: a critical problem (one that
/// reaches 30% of the samples), else a pass-rate gate of the spec that is missed.
pub fn trigger_reason(
    report: &Layer1ProblemsReport,
    gates_missed: &[(String, f64, f64)],
) -> Option<String> {
    if let Some(p) = report
        .layer1_problems
        .iter()
        .find(|p| p.severity == ProblemSeverity::Critical)
    {
        return Some(format!(
            "rule: a critical problem ({}, {} of {} samples) reaches {:.0}% of the samples",
            p.problem_id,
            p.affected_count,
            report.total_samples,
            CRITICAL_SHARE * 100.0
        ));
    }
    gates_missed.first().map(|(check, rate, gate)| {
        format!("rule: check `{check}` passes {rate:.3}, under its gate {gate}")
    })
}

/// The handoff of the iteration in `execution_output_dir` (relative to the handoff's
/// folder): the report's typical cases, the pass rate as `final_quality`.
#[allow(clippy::too_many_arguments)]
pub fn handoff(
    report: &Layer1ProblemsReport,
    entries: &[FailureSampleIndexEntry],
    execution_output_dir: String,
    iteration: u32,
    passed: u64,
    total: u64,
    trigger: Option<String>,
    timestamp: &str,
    incomplete: bool,
) -> ExecuteToInitContext {
    let typical: Vec<&str> = report
        .layer1_problems
        .iter()
        .map(|p| p.typical_case_id.as_str())
        .collect();
    let mut chosen: Vec<FailureSampleIndexEntry> = entries
        .iter()
        .filter(|e| typical.contains(&e.sample_id.as_str()))
        .cloned()
        .collect();
    for e in entries {
        if chosen.len() >= HANDOFF_SAMPLES {
            break;
        }
        if !chosen.iter().any(|c| c.sample_id == e.sample_id) {
            chosen.push(e.clone());
        }
    }
    chosen.truncate(HANDOFF_SAMPLES);
    let mut metadata = crate::base::protocol::Extra::default();
    if incomplete {
        metadata.insert("incomplete".into(), Value::Bool(true));
    }
    ExecuteToInitContext {
        version: "2.0".into(),
        handoff_type: HandoffType::ExecuteToInit,
        timestamp: timestamp.into(),
        metadata,
        execution_output_dir,
        trigger_reason: trigger,
        iteration_summary: IterationSummary {
            total_iterations: Some(iteration),
            final_quality: (total > 0).then(|| passed as f64 / total as f64),
            total_samples: u32::try_from(total).ok(),
            failed_samples: u32::try_from(total - passed.min(total)).ok(),
            ..IterationSummary::default()
        },
        failure_samples_index: chosen,
        layer1_problems_report_path: crate::data::failures::layout::REPORT_FILE.into(),
        modification_suggestions_summary: report
            .layer1_problems
            .iter()
            .take(5)
            .map(|p| format!("{}: {}", p.title, p.suggested_fix.modification))
            .collect(),
        extra: Default::default(),
    }
}
