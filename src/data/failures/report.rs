//! `layer1_problems_report.json` as types: problems with their severity, affected
//! samples, typical case and suggested fix, and the modification priority list. Read
//! liberally: a problem lacking fields keeps what it has and lists what it lacks; a
//! broken file is a report with its status and no problems.

use std::path::Path;

use serde_json::Value;

use crate::base::protocol::handoff::{ProblemSeverity, SuggestedFix};

use super::doc::{load_expecting, Doc, DocStatus, LoadOptions};

/// Fields the report is expected to have.
pub const REPORT_FIELDS: &[&[&str]] = &[
    &["report_version"],
    &["iteration"],
    &["total_samples"],
    &["failed_samples"],
    &["layer1_problems"],
    &["modification_priority"],
];

/// Loads the report file (see [`REPORT_FIELDS`]).
pub fn load_report_doc(path: &Path, o: &LoadOptions) -> Doc {
    load_expecting(path, None, REPORT_FIELDS, o)
}

/// One problem of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// e.g. `L1P_001`.
    pub problem_id: String,
    /// e.g. `BusinessRule_Unclear`.
    pub problem_type: String,
    /// Parsed severity (`None` when absent or not one of critical/high/medium/low).
    pub severity: Option<ProblemSeverity>,
    /// The severity as written.
    pub severity_text: String,
    /// One-line title.
    pub title: String,
    /// What is wrong.
    pub description: String,
    /// Samples that show it.
    pub affected_samples: Vec<String>,
    /// How many samples show it (the list's length when absent).
    pub affected_count: u32,
    /// The evidence, briefly.
    pub evidence_summary: String,
    /// A representative sample to open.
    pub typical_case_id: Option<String>,
    /// How to fix it.
    pub suggested_fix: Option<SuggestedFix>,
    /// Expected fields this problem lacks.
    pub missing: Vec<&'static str>,
}

/// One entry of the modification priority list.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorityItem {
    /// Rank, 1 first.
    pub priority: u32,
    /// The problem ranked.
    pub problem_id: String,
    /// What fixing it solves.
    pub impact: String,
    /// Expected gain, e.g. `+33%`.
    pub estimated_improvement: String,
}

/// The parsed report.
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemsReport {
    /// The file as loaded (status, size, tokens; its JSON is moved into the fields).
    pub doc: Doc,
    /// `report_version`.
    pub report_version: Option<String>,
    /// `generated_at`.
    pub generated_at: Option<String>,
    /// `iteration`.
    pub iteration: Option<u32>,
    /// `total_samples`.
    pub total_samples: Option<u32>,
    /// `failed_samples`.
    pub failed_samples: Option<u32>,
    /// `failure_rate`.
    pub failure_rate: Option<f64>,
    /// Problems in file order.
    pub problems: Vec<Problem>,
    /// Modification priority, by rank.
    pub modification_priority: Vec<PriorityItem>,
}

fn text(v: &Value, k: &str) -> Option<String> {
    match v.get(k)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn number(v: &Value, k: &str) -> Option<u32> {
    let x = v.get(k)?;
    x.as_u64()
        .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
        .and_then(|n| u32::try_from(n).ok())
}

/// Parses a severity name (any case).
pub fn parse_severity(s: &str) -> Option<ProblemSeverity> {
    match s.trim().to_ascii_lowercase().as_str() {
        "critical" => Some(ProblemSeverity::Critical),
        "high" => Some(ProblemSeverity::High),
        "medium" => Some(ProblemSeverity::Medium),
        "low" => Some(ProblemSeverity::Low),
        _ => None,
    }
}

fn problem(v: &Value) -> Problem {
    let mut missing = Vec::new();
    let mut need = |k: &'static str, x: Option<String>| {
        if x.is_none() {
            missing.push(k);
        }
        x.unwrap_or_default()
    };
    let problem_id = need("problem_id", text(v, "problem_id"));
    let problem_type = need("problem_type", text(v, "problem_type"));
    let severity_text = need("severity", text(v, "severity"));
    let title = need("title", text(v, "title"));
    let description = need("description", text(v, "description"));
    let evidence_summary = need("evidence_summary", text(v, "evidence_summary"));
    let affected_samples: Vec<String> = match v.get("affected_samples") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => {
            missing.push("affected_samples");
            Vec::new()
        }
    };
    let affected_count = number(v, "affected_count").unwrap_or_else(|| {
        missing.push("affected_count");
        affected_samples
            .iter()
            .filter(|s| s.as_str() != "...")
            .count() as u32
    });
    let typical_case_id = text(v, "typical_case_id");
    if typical_case_id.is_none() {
        missing.push("typical_case_id");
    }
    let suggested_fix = match v.get("suggested_fix") {
        Some(f @ Value::Object(_)) => Some(SuggestedFix {
            target: text(f, "target").unwrap_or_default(),
            section: text(f, "section").unwrap_or_default(),
            modification: text(f, "modification").unwrap_or_default(),
            rationale: text(f, "rationale").unwrap_or_default(),
            extra: Default::default(),
        }),
        Some(Value::String(s)) => Some(SuggestedFix {
            target: String::new(),
            section: String::new(),
            modification: s.clone(),
            rationale: String::new(),
            extra: Default::default(),
        }),
        _ => {
            missing.push("suggested_fix");
            None
        }
    };
    Problem {
        severity: parse_severity(&severity_text),
        problem_id,
        problem_type,
        severity_text,
        title,
        description,
        affected_samples,
        affected_count,
        evidence_summary,
        typical_case_id,
        suggested_fix,
        missing,
    }
}

fn priority_item(v: &Value, at: usize) -> PriorityItem {
    PriorityItem {
        priority: number(v, "priority").unwrap_or(at as u32 + 1),
        problem_id: text(v, "problem_id").unwrap_or_default(),
        impact: text(v, "impact").unwrap_or_default(),
        estimated_improvement: text(v, "estimated_improvement").unwrap_or_default(),
    }
}

/// The report in `doc` as types (no problems when it is not ok or partial).
pub fn parse_report(mut doc: Doc) -> ProblemsReport {
    let v = doc.value.take().unwrap_or(Value::Null);
    let list = |k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let problems: Vec<Problem> = list("layer1_problems").iter().map(problem).collect();
    let mut modification_priority: Vec<PriorityItem> = list("modification_priority")
        .iter()
        .enumerate()
        .map(|(i, p)| priority_item(p, i))
        .collect();
    modification_priority.sort_by_key(|p| p.priority);
    let mut r = ProblemsReport {
        report_version: text(&v, "report_version"),
        generated_at: text(&v, "generated_at"),
        iteration: number(&v, "iteration"),
        total_samples: number(&v, "total_samples"),
        failed_samples: number(&v, "failed_samples"),
        failure_rate: v.get("failure_rate").and_then(Value::as_f64),
        problems,
        modification_priority,
        doc,
    };
    // Kept for a raw view of the file too.
    if r.doc.status.has_json() {
        r.doc.value = Some(v);
    }
    r
}

impl ProblemsReport {
    /// Whether the file could be read as JSON (ok or partial).
    pub fn readable(&self) -> bool {
        self.doc.status.has_json()
    }

    /// The status of the file.
    pub fn status(&self) -> &DocStatus {
        &self.doc.status
    }

    /// Problems by severity (critical first, unknown last), then by affected count
    /// (more first), then file order.
    pub fn by_severity(&self) -> Vec<&Problem> {
        let mut v: Vec<&Problem> = self.problems.iter().collect();
        v.sort_by_key(|p| {
            (
                p.severity.map_or(4, |s| s as u8),
                std::cmp::Reverse(p.affected_count),
            )
        });
        v
    }

    /// The problem with id `id`.
    pub fn problem(&self, id: &str) -> Option<&Problem> {
        self.problems.iter().find(|p| p.problem_id == id)
    }

    /// Up to `n` suggestions in modification priority order (then by severity for
    /// problems the list leaves out), each one line: `target (section): modification`.
    pub fn suggestions(&self, n: usize) -> Vec<String> {
        let mut ids: Vec<&str> = self
            .modification_priority
            .iter()
            .map(|p| p.problem_id.as_str())
            .collect();
        for p in self.by_severity() {
            if !ids.contains(&p.problem_id.as_str()) {
                ids.push(&p.problem_id);
            }
        }
        ids.iter()
            .filter_map(|id| self.problem(id))
            .filter_map(|p| {
                let f = p.suggested_fix.as_ref()?;
                if f.modification.is_empty() {
                    return None;
                }
                let at = match (f.target.is_empty(), f.section.is_empty()) {
                    (true, _) => String::new(),
                    (false, true) => format!("{}: ", f.target),
                    (false, false) => format!("{} ({}): ", f.target, f.section),
                };
                Some(format!("{at}{}", f.modification))
            })
            .take(n)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_example_parses_and_a_sparse_problem_lists_what_it_lacks() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/protocol/seed002_report_layer1_problems_report.json");
        let r = parse_report(load_report_doc(&p, &LoadOptions::default()));
        assert_eq!(r.doc.status, DocStatus::Ok);
        assert_eq!(r.problems.len(), 2);
        assert_eq!(r.problems[0].severity, Some(ProblemSeverity::Critical));
        assert_eq!(r.problems[0].affected_count, 9);
        assert_eq!(r.problems[0].typical_case_id.as_deref(), Some("BS_MT_001"));
        assert_eq!(r.modification_priority[1].problem_id, "L1P_002");
        assert_eq!(r.suggestions(5).len(), 2);
        assert!(r.suggestions(5)[0].starts_with("BusinessRules.md (## 请假申请流程): "));

        let v = serde_json::json!({"layer1_problems": [{"problem_id": "X", "severity": "urgent",
            "affected_samples": ["A", "B"]}]});
        let doc = Doc {
            value: Some(v),
            ..Doc::unread(None, "r.json".into(), DocStatus::Ok)
        };
        let r = parse_report(doc);
        let x = &r.problems[0];
        assert_eq!(x.severity, None);
        assert_eq!(x.affected_count, 2);
        assert!(x.missing.contains(&"typical_case_id") && x.missing.contains(&"title"));
    }
}
