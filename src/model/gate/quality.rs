//! The quality gate (SPEC §3.5): scores and grades every atom, lists issues, and computes
//! the invocation's `quality_check` — never trusting the model's own.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::known::KnowsAssets;
use crate::base::protocol::{Atom, Grade, GradeCounts, IssueSeverity, QualityCheck, QualityIssue};

/// Gate settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QualityConfig {
    /// Lowest score for grade A.
    pub grade_a: f64,
    /// Lowest score for grade B.
    pub grade_b: f64,
    /// Lowest score for grade C.
    pub grade_c: f64,
    /// Fewest characters of content text for an atom not to count as trivially short.
    pub min_content_chars: usize,
    /// Fabricated asset references in one invocation that make it E007.
    pub hallucination_refs: u32,
}

impl Default for QualityConfig {
    fn default() -> Self {
        QualityConfig {
            grade_a: 0.85,
            grade_b: 0.7,
            grade_c: 0.5,
            min_content_chars: 40,
            hallucination_refs: 1,
        }
    }
}

impl QualityConfig {
    /// Grade of a score.
    pub fn grade(&self, score: f64) -> Grade {
        if score >= self.grade_a {
            Grade::A
        } else if score >= self.grade_b {
            Grade::B
        } else if score >= self.grade_c {
            Grade::C
        } else {
            Grade::D
        }
    }
}

/// How the message of an `unknown_asset` issue begins; the ids of the assets that do not
/// exist follow, separated by `, `.
pub const UNKNOWN_ASSET_NOTE: &str = "refers to asset(s) not in the store: ";

/// The asset ids an `unknown_asset` issue names as not existing (none for another issue).
pub fn fabricated_refs(issue: &QualityIssue) -> Vec<String> {
    if issue.issue_type != "unknown_asset" {
        return Vec::new();
    }
    issue
        .message
        .strip_prefix(UNKNOWN_ASSET_NOTE)
        .map(|ids| {
            ids.split(", ")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Penalties subtracted from 1.0 per failed check.
mod penalty {
    pub const MISSING_REQUIRED: f64 = 0.2;
    pub const NO_PROVENANCE: f64 = 0.25;
    pub const BAD_CONFIDENCE: f64 = 0.1;
    pub const LOW_CONFIDENCE: f64 = 0.05;
    pub const SHORT_CONTENT: f64 = 0.3;
    pub const UNKNOWN_ASSET: f64 = 0.3;
    pub const NO_INCREMENTAL_VALUE: f64 = 0.1;
}

/// Result of grading one atom.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomVerdict {
    /// Score in [0, 1].
    pub score: f64,
    /// Grade.
    pub grade: Grade,
    /// Issues found.
    pub issues: Vec<QualityIssue>,
    /// Referenced assets that do not exist.
    pub fabricated_refs: Vec<String>,
}

/// Result of grading an invocation's atoms.
#[derive(Debug, Clone, PartialEq)]
pub struct GateResult {
    /// Per atom, in order.
    pub verdicts: Vec<AtomVerdict>,
    /// The computed quality_check.
    pub quality_check: QualityCheck,
    /// Fabricated references over all atoms.
    pub fabricated_refs: u32,
}

fn non_empty(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(_) => true,
    }
}

/// Reads a required field: dotted paths from the atom root (`content.x`,
/// `provenance.paper_location`); a bare name is looked up in `content` first.
fn required_value<'a>(atom: &'a Value, path: &str) -> Option<&'a Value> {
    let from_root = crate::base::protocol::invocation::value_at_path(atom, path);
    if from_root.is_some() || path.contains('.') && path.starts_with("content.") {
        return from_root;
    }
    atom.get("content")
        .and_then(|c| crate::base::protocol::invocation::value_at_path(c, path))
        .or(from_root)
}

/// Whether a required field is present and non-empty. The common paths (`content.…`,
/// the provenance anchors, bare names inside `content`) are read from the typed atom;
/// anything else from its JSON form, built once and only when needed.
fn required_present(atom: &Atom, path: &str, raw: &mut Option<Value>) -> bool {
    const TOP: &[&str] = &[
        "asset_id",
        "category",
        "data_status",
        "metadata",
        "content",
        "provenance",
        "delta_audit",
    ];
    if let Some(rest) = path.strip_prefix("content.") {
        return non_empty(crate::base::protocol::invocation::value_at_path(
            &atom.content,
            rest,
        ));
    }
    let typed = match path {
        "provenance.paper_id" => atom.provenance.paper_id.as_deref(),
        "provenance.paper_location" => atom.provenance.paper_location.as_deref(),
        "provenance.code_link" => atom.provenance.code_link.as_deref(),
        "provenance.atom_path" => atom.provenance.atom_path.as_deref(),
        _ => None,
    };
    if typed.is_some_and(|t| !t.trim().is_empty()) {
        return true;
    }
    if !path.contains('.') && !TOP.contains(&path) && !atom.extra.contains_key(path) {
        return non_empty(atom.content.get(path));
    }
    let raw = raw.get_or_insert_with(|| serde_json::to_value(atom).unwrap_or(Value::Null));
    non_empty(required_value(raw, path))
}

fn text_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.iter().map(text_len).sum(),
        Value::Object(o) => o.values().map(text_len).sum(),
        Value::Number(_) | Value::Bool(_) => 1,
        Value::Null => 0,
    }
}

/// Grades one atom against the required fields and the known assets.
pub fn grade_atom<K: KnowsAssets + ?Sized>(
    atom: &Atom,
    required_fields: &[String],
    known_assets: &K,
    cfg: &QualityConfig,
) -> AtomVerdict {
    let mut g = Grading {
        atom_id: atom.asset_id.clone(),
        issues: Vec::new(),
        score: 1.0,
    };
    let mut raw = None;
    for f in required_fields {
        if !required_present(atom, f, &mut raw) {
            g.flag(
                penalty::MISSING_REQUIRED,
                ("missing_field", f, IssueSeverity::Error),
                format!("required field `{f}` is missing or empty"),
            );
        }
    }
    let anchored = non_empty_text(&atom.provenance.paper_location)
        || non_empty_text(&atom.provenance.code_link);
    if !anchored {
        g.flag(
            penalty::NO_PROVENANCE,
            (
                "unanchored",
                "provenance.paper_location",
                IssueSeverity::Error,
            ),
            "no paper location or code link anchors this atom to its source".into(),
        );
    }
    grade_confidence(atom, &mut g);
    let content_len = text_len(&atom.content);
    if content_len < cfg.min_content_chars {
        g.flag(
            penalty::SHORT_CONTENT,
            ("content_too_short", "content", IssueSeverity::Error),
            format!(
                "content has {content_len} characters of text, fewer than {}",
                cfg.min_content_chars
            ),
        );
    }
    let fabricated = grade_assets(atom, known_assets, &mut g);
    let score = (g.score.clamp(0.0, 1.0) * 1000.0).round() / 1000.0;
    AtomVerdict {
        score,
        grade: cfg.grade(score),
        issues: g.issues,
        fabricated_refs: fabricated,
    }
}

/// An atom being graded: its score so far and the issues found.
struct Grading {
    /// The atom's id, for its issues.
    atom_id: String,
    /// Issues found so far.
    issues: Vec<QualityIssue>,
    /// 1.0 less the penalties so far.
    score: f64,
}

impl Grading {
    /// Subtracts `penalty` and files an issue (type, field, severity) saying `message`.
    fn flag(
        &mut self,
        penalty: f64,
        (issue_type, field, severity): (&str, &str, IssueSeverity),
        message: String,
    ) {
        self.score -= penalty;
        self.issues.push(QualityIssue {
            atom_id: self.atom_id.clone(),
            issue_type: issue_type.to_string(),
            field: field.to_string(),
            severity,
            message,
        });
    }
}

/// Whether an optional text is present and not blank.
fn non_empty_text(text: &Option<String>) -> bool {
    non_empty(text.as_ref().map(|s| Value::String(s.clone())).as_ref())
}

/// The atom's `confidence`, when it gives one: a number in [0, 1], at least 0.5.
fn grade_confidence(atom: &Atom, g: &mut Grading) {
    let confidence = atom
        .extra
        .get("confidence")
        .or_else(|| atom.metadata.extra.get("confidence"));
    let invalid = ("invalid_confidence", "confidence", IssueSeverity::Error);
    match confidence {
        None => {}
        Some(Value::Number(n)) => {
            let c = n.as_f64().unwrap_or(f64::NAN);
            if !(0.0..=1.0).contains(&c) {
                g.flag(
                    penalty::BAD_CONFIDENCE,
                    invalid,
                    format!("confidence {c} is outside [0, 1]"),
                );
            } else if c < 0.5 {
                g.flag(
                    penalty::LOW_CONFIDENCE,
                    ("low_confidence", "confidence", IssueSeverity::Warning),
                    format!("confidence {c} is below 0.5"),
                );
            }
        }
        Some(_) => g.flag(
            penalty::BAD_CONFIDENCE,
            invalid,
            "confidence is not a number".into(),
        ),
    }
}

/// The atom's references to existing assets: each must be known, and the atom must say
/// what it adds to them. Returns the references to assets that do not exist.
fn grade_assets<K: KnowsAssets + ?Sized>(
    atom: &Atom,
    known_assets: &K,
    g: &mut Grading,
) -> Vec<String> {
    let refs = atom.delta_audit.existing_assets.clone().unwrap_or_default();
    let fabricated: Vec<String> = refs
        .iter()
        .filter(|r| !known_assets.knows(r))
        .cloned()
        .collect();
    if !fabricated.is_empty() {
        g.flag(
            penalty::UNKNOWN_ASSET,
            (
                "unknown_asset",
                "delta_audit.existing_assets",
                IssueSeverity::Error,
            ),
            format!("{UNKNOWN_ASSET_NOTE}{}", fabricated.join(", ")),
        );
    }
    if !refs.is_empty() && !non_empty_text(&atom.delta_audit.incremental_value) {
        g.flag(
            penalty::NO_INCREMENTAL_VALUE,
            (
                "missing_field",
                "delta_audit.incremental_value",
                IssueSeverity::Warning,
            ),
            "relates to existing assets without saying what it adds".into(),
        );
    }
    fabricated
}

/// Grades all atoms and computes the quality_check.
pub fn run_gate<K: KnowsAssets + ?Sized>(
    atoms: &[Atom],
    required_fields: &[String],
    known_assets: &K,
    cfg: &QualityConfig,
) -> GateResult {
    let verdicts: Vec<AtomVerdict> = atoms
        .iter()
        .map(|a| grade_atom(a, required_fields, known_assets, cfg))
        .collect();
    let mut grades = GradeCounts::default();
    let mut issues = Vec::new();
    let mut total = 0.0;
    let mut fabricated = 0;
    for v in &verdicts {
        grades.add(v.grade);
        total += v.score;
        issues.extend(v.issues.iter().cloned());
        fabricated += v.fabricated_refs.len() as u32;
    }
    let avg = if verdicts.is_empty() {
        0.0
    } else {
        ((total / verdicts.len() as f64) * 1000.0).round() / 1000.0
    };
    GateResult {
        quality_check: QualityCheck {
            atoms_generated: atoms.len() as u32,
            avg_quality_score: avg,
            grades,
            issues,
        },
        verdicts,
        fabricated_refs: fabricated,
    }
}
