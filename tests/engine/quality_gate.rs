//! The quality gate: atoms built to land on each grade A–D exactly, the issues each
//! check raises, `run_gate`'s aggregate `quality_check`, fabricated references, custom
//! thresholds, and that a model-supplied `quality_check` is never trusted.
//!
//! Default config: A ≥ 0.85, B ≥ 0.7, C ≥ 0.5, else D; min content 40 chars.
//! Penalties from 1.0: missing required field 0.2, unanchored 0.25, invalid confidence
//! 0.1, low confidence (< 0.5) 0.05, short content 0.3, unknown asset 0.3, existing
//! assets without incremental value 0.1.

use std::collections::HashSet;

use plexus::base::protocol::{Atom, Grade, GradeCounts, IssueSeverity};
use plexus::model::gate::quality::{grade_atom, run_gate, AtomVerdict, QualityConfig};
use plexus::run::engine::parse::parse_response;
use serde_json::{json, Value};

const LONG_EXPR: &str = "x_{t-1} = (x_t - sqrt(1 - a_t) * eps_theta(x_t, t)) / sqrt(a_t)";
const LONG_INTUITION: &str = "each step removes a little of the predicted noise from the plan";

fn required() -> Vec<String> {
    [
        "content.mathematical_expression",
        "content.physical_intuition",
        "provenance.paper_location",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn known() -> HashSet<String> {
    ["MATH_KNOWN_01", "MATH_KNOWN_02"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn atom(v: Value) -> Atom {
    serde_json::from_value(v).expect("test atom deserializes")
}

fn grade(a: &Atom) -> AtomVerdict {
    grade_atom(a, &required(), &known(), &QualityConfig::default())
}

/// `(issue_type, field)` of each issue, in order.
fn kinds(v: &AtomVerdict) -> Vec<(String, String)> {
    v.issues
        .iter()
        .map(|i| (i.issue_type.clone(), i.field.clone()))
        .collect()
}

fn pair(t: &str, f: &str) -> (String, String) {
    (t.to_string(), f.to_string())
}

fn assert_score(v: &AtomVerdict, expected: f64) {
    assert!(
        (v.score - expected).abs() < 1e-9,
        "score {} != expected {expected}; issues: {:?}",
        v.score,
        v.issues
    );
}

/// Every check passes: 1.0, grade A.
fn atom_a() -> Atom {
    atom(json!({
        "asset_id": "MATH_A_01",
        "category": "Math_Ops",
        "confidence": 0.9,
        "content": {
            "mathematical_expression": LONG_EXPR,
            "physical_intuition": LONG_INTUITION
        },
        "provenance": {"paper_id": "ArXiv:2406.01234", "paper_location": "p.4, Eq.(7)"},
        "delta_audit": {
            "existing_assets": ["MATH_KNOWN_01"],
            "incremental_value": "adds the guidance term"
        }
    }))
}

/// Missing `content.physical_intuition` (−0.2) and confidence 1.5 (−0.1): 0.7, grade B
/// (exactly at the B threshold).
fn atom_b() -> Atom {
    atom(json!({
        "asset_id": "MATH_B_01",
        "confidence": 1.5,
        "content": {"mathematical_expression": LONG_EXPR},
        "provenance": {"paper_location": "p.5, Eq.(9)"}
    }))
}

/// No provenance anchor: missing `provenance.paper_location` (−0.2) and unanchored
/// (−0.25): 0.55, grade C.
fn atom_c() -> Atom {
    atom(json!({
        "asset_id": "MATH_C_01",
        "content": {
            "mathematical_expression": LONG_EXPR,
            "physical_intuition": LONG_INTUITION
        },
        "provenance": {"paper_id": "ArXiv:2406.01234"}
    }))
}

/// Content too short (−0.3) and a fabricated asset reference (−0.3): 0.4, grade D.
fn atom_d() -> Atom {
    atom(json!({
        "asset_id": "MATH_D_01",
        "content": {"mathematical_expression": "x=1", "physical_intuition": "y"},
        "provenance": {"paper_location": "p.1"},
        "delta_audit": {
            "existing_assets": ["MATH_KNOWN_02", "MATH_FABRICATED_99"],
            "incremental_value": "claims to extend a made-up asset"
        }
    }))
}

#[test]
fn grade_a_when_every_check_passes() {
    let v = grade(&atom_a());
    assert_score(&v, 1.0);
    assert_eq!(v.grade, Grade::A);
    assert!(v.issues.is_empty(), "{:?}", v.issues);
    assert!(v.fabricated_refs.is_empty());
}

#[test]
fn grade_b_missing_field_and_invalid_confidence() {
    let v = grade(&atom_b());
    assert_score(&v, 0.7);
    assert_eq!(v.grade, Grade::B);
    assert_eq!(
        kinds(&v),
        vec![
            pair("missing_field", "content.physical_intuition"),
            pair("invalid_confidence", "confidence"),
        ]
    );
    assert_eq!(v.issues[0].severity, IssueSeverity::Error);
    assert!(v.issues[0].message.contains("content.physical_intuition"));
    assert!(
        v.issues[1].message.contains("1.5"),
        "{}",
        v.issues[1].message
    );
    assert!(v.issues.iter().all(|i| i.atom_id == "MATH_B_01"));
}

#[test]
fn grade_c_unanchored_atom() {
    let v = grade(&atom_c());
    assert_score(&v, 0.55);
    assert_eq!(v.grade, Grade::C);
    assert_eq!(
        kinds(&v),
        vec![
            pair("missing_field", "provenance.paper_location"),
            pair("unanchored", "provenance.paper_location"),
        ]
    );
}

#[test]
fn grade_d_short_content_and_unknown_asset() {
    let v = grade(&atom_d());
    assert_score(&v, 0.4);
    assert_eq!(v.grade, Grade::D);
    assert_eq!(
        kinds(&v),
        vec![
            pair("content_too_short", "content"),
            pair("unknown_asset", "delta_audit.existing_assets"),
        ]
    );
    assert_eq!(v.fabricated_refs, vec!["MATH_FABRICATED_99".to_string()]);
    let unknown = &v.issues[1];
    assert!(
        unknown.message.contains("MATH_FABRICATED_99"),
        "{}",
        unknown.message
    );
    assert!(
        !unknown.message.contains("MATH_KNOWN_02"),
        "{}",
        unknown.message
    );
}

#[test]
fn grade_boundaries_are_inclusive() {
    // low confidence (−0.05) + existing assets without incremental value (−0.1) = 0.85: A
    let a = atom(json!({
        "asset_id": "EDGE_A",
        "metadata": {"confidence": 0.3},
        "content": {"mathematical_expression": LONG_EXPR, "physical_intuition": LONG_INTUITION},
        "provenance": {"code_link": "src/model.py#L10", "paper_location": "p.2"},
        "delta_audit": {"existing_assets": ["MATH_KNOWN_01"]}
    }));
    let v = grade(&a);
    assert_score(&v, 0.85);
    assert_eq!(v.grade, Grade::A);
    assert_eq!(
        kinds(&v),
        vec![
            pair("low_confidence", "confidence"),
            pair("missing_field", "delta_audit.incremental_value"),
        ]
    );
    assert_eq!(v.issues[0].severity, IssueSeverity::Warning);
    assert_eq!(v.issues[1].severity, IssueSeverity::Warning);

    // missing required (−0.2) + unknown asset (−0.3) = 0.5: C
    let c = atom(json!({
        "asset_id": "EDGE_C",
        "content": {"mathematical_expression": LONG_EXPR},
        "provenance": {"paper_location": "p.2"},
        "delta_audit": {"existing_assets": ["NOPE"], "incremental_value": "something"}
    }));
    let v = grade(&c);
    assert_score(&v, 0.5);
    assert_eq!(v.grade, Grade::C);

    // one more low-confidence warning (−0.05) drops it to 0.45: D
    let d = atom(json!({
        "asset_id": "EDGE_D",
        "confidence": 0.1,
        "content": {"mathematical_expression": LONG_EXPR},
        "provenance": {"paper_location": "p.2"},
        "delta_audit": {"existing_assets": ["NOPE"], "incremental_value": "something"}
    }));
    let v = grade(&d);
    assert_score(&v, 0.45);
    assert_eq!(v.grade, Grade::D);
}

#[test]
fn a_code_link_anchors_an_atom_without_a_paper_location() {
    let a = atom(json!({
        "asset_id": "CODE_01",
        "content": {"mathematical_expression": LONG_EXPR, "physical_intuition": LONG_INTUITION},
        "provenance": {"code_link": "https://github.com/x/y/blob/main/a.py#L3"}
    }));
    let v = grade(&a);
    // still missing the required provenance.paper_location, but not unanchored
    assert_eq!(
        kinds(&v),
        vec![pair("missing_field", "provenance.paper_location")]
    );
    assert_score(&v, 0.8);
    assert_eq!(v.grade, Grade::B);
}

#[test]
fn empty_values_count_as_missing() {
    let a = atom(json!({
        "asset_id": "EMPTY_01",
        "content": {
            "mathematical_expression": "   ",
            "physical_intuition": [],
            "notes": "padding so that the content is long enough to pass"
        },
        "provenance": {"paper_location": ""}
    }));
    let v = grade(&a);
    assert_eq!(
        kinds(&v),
        vec![
            pair("missing_field", "content.mathematical_expression"),
            pair("missing_field", "content.physical_intuition"),
            pair("missing_field", "provenance.paper_location"),
            pair("unanchored", "provenance.paper_location"),
        ]
    );
    // 1 − 3×0.2 − 0.25 = 0.15
    assert_score(&v, 0.15);
    assert_eq!(v.grade, Grade::D);
}

#[test]
fn non_numeric_confidence_is_invalid() {
    let a = atom(json!({
        "asset_id": "CONF_STR",
        "confidence": "high",
        "content": {"mathematical_expression": LONG_EXPR, "physical_intuition": LONG_INTUITION},
        "provenance": {"paper_location": "p.3"}
    }));
    let v = grade(&a);
    assert_eq!(kinds(&v), vec![pair("invalid_confidence", "confidence")]);
    assert!(v.issues[0].message.contains("not a number"));
    assert_score(&v, 0.9);

    let neg = atom(json!({
        "asset_id": "CONF_NEG",
        "confidence": -0.2,
        "content": {"mathematical_expression": LONG_EXPR, "physical_intuition": LONG_INTUITION},
        "provenance": {"paper_location": "p.3"}
    }));
    let v = grade(&neg);
    assert_eq!(kinds(&v), vec![pair("invalid_confidence", "confidence")]);
}

#[test]
fn bare_required_field_names_are_looked_up_in_content() {
    let req: Vec<String> = vec![
        "physical_intuition".into(),
        "mathematical_expression".into(),
    ];
    let good = grade_atom(&atom_a(), &req, &known(), &QualityConfig::default());
    assert!(good.issues.is_empty(), "{:?}", good.issues);

    let v = grade_atom(&atom_b(), &req, &known(), &QualityConfig::default());
    assert_eq!(
        kinds(&v),
        vec![
            pair("missing_field", "physical_intuition"),
            pair("invalid_confidence", "confidence"),
        ]
    );
    // a bare name that only exists at the atom root is still found there
    let v = grade_atom(
        &atom_a(),
        &["category".to_string()],
        &known(),
        &QualityConfig::default(),
    );
    assert!(v.issues.is_empty(), "{:?}", v.issues);
}

#[test]
fn run_gate_aggregates_counts_average_and_issues() {
    let atoms = vec![atom_a(), atom_b(), atom_c(), atom_d()];
    let g = run_gate(&atoms, &required(), &known(), &QualityConfig::default());
    let qc = &g.quality_check;
    assert_eq!(qc.atoms_generated, 4);
    assert_eq!(
        qc.grades,
        GradeCounts {
            a: 1,
            b: 1,
            c: 1,
            d: 1
        }
    );
    // (1.0 + 0.7 + 0.55 + 0.4) / 4 = 0.6625 → 3 decimals
    assert!(
        (qc.avg_quality_score - 0.6625).abs() <= 0.0005 + 1e-12,
        "{}",
        qc.avg_quality_score
    );
    assert_eq!(
        (qc.avg_quality_score * 1000.0).round() / 1000.0,
        qc.avg_quality_score,
        "avg is rounded to 3 decimals"
    );
    // all issues of all atoms, in atom order
    let all: Vec<(String, String, String)> = qc
        .issues
        .iter()
        .map(|i| (i.atom_id.clone(), i.issue_type.clone(), i.field.clone()))
        .collect();
    let t = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(
        all,
        vec![
            t("MATH_B_01", "missing_field", "content.physical_intuition"),
            t("MATH_B_01", "invalid_confidence", "confidence"),
            t("MATH_C_01", "missing_field", "provenance.paper_location"),
            t("MATH_C_01", "unanchored", "provenance.paper_location"),
            t("MATH_D_01", "content_too_short", "content"),
            t("MATH_D_01", "unknown_asset", "delta_audit.existing_assets"),
        ]
    );
    assert_eq!(g.verdicts.len(), 4);
    assert_eq!(g.fabricated_refs, 1);
    assert_eq!(
        g.verdicts[3].fabricated_refs,
        vec!["MATH_FABRICATED_99".to_string()]
    );
}

#[test]
fn run_gate_rounds_the_average_to_three_decimals() {
    // 1.0, 0.95 (low confidence), 0.8 (one missing field): 2.75 / 3 = 0.91666… → 0.917
    let low_conf = atom(json!({
        "asset_id": "R2",
        "confidence": 0.2,
        "content": {"mathematical_expression": LONG_EXPR, "physical_intuition": LONG_INTUITION},
        "provenance": {"paper_location": "p.9"}
    }));
    let missing = atom(json!({
        "asset_id": "R3",
        "content": {"mathematical_expression": LONG_EXPR},
        "provenance": {"paper_location": "p.9"}
    }));
    let g = run_gate(
        &[atom_a(), low_conf, missing],
        &required(),
        &known(),
        &QualityConfig::default(),
    );
    assert_eq!(g.quality_check.avg_quality_score, 0.917);
    assert_eq!(
        g.quality_check.grades,
        GradeCounts {
            a: 2,
            b: 1,
            c: 0,
            d: 0
        }
    );
    assert_eq!(g.fabricated_refs, 0);
}

#[test]
fn run_gate_with_no_atoms() {
    let g = run_gate(&[], &required(), &known(), &QualityConfig::default());
    assert_eq!(g.quality_check.atoms_generated, 0);
    assert_eq!(g.quality_check.avg_quality_score, 0.0);
    assert_eq!(g.quality_check.grades, GradeCounts::default());
    assert!(g.quality_check.issues.is_empty());
    assert!(g.verdicts.is_empty());
}

#[test]
fn fabricated_references_are_counted_per_reference() {
    let a = atom(json!({
        "asset_id": "FAB_01",
        "content": {"mathematical_expression": LONG_EXPR, "physical_intuition": LONG_INTUITION},
        "provenance": {"paper_location": "p.2"},
        "delta_audit": {
            "existing_assets": ["GHOST_1", "MATH_KNOWN_01", "GHOST_2"],
            "incremental_value": "x"
        }
    }));
    let g = run_gate(
        &[a, atom_d()],
        &required(),
        &known(),
        &QualityConfig::default(),
    );
    assert_eq!(
        g.verdicts[0].fabricated_refs,
        vec!["GHOST_1".to_string(), "GHOST_2".to_string()]
    );
    // one unknown_asset issue (−0.3) per atom, however many refs are fabricated
    assert_score(&g.verdicts[0], 0.7);
    assert_eq!(g.fabricated_refs, 3);
    // with no known assets at all, even a real-looking reference is fabricated
    let v = grade_atom(
        &atom_a(),
        &required(),
        &HashSet::new(),
        &QualityConfig::default(),
    );
    assert_eq!(v.fabricated_refs, vec!["MATH_KNOWN_01".to_string()]);
    assert_eq!(
        kinds(&v),
        vec![pair("unknown_asset", "delta_audit.existing_assets")]
    );
}

#[test]
fn model_supplied_quality_check_is_ignored() {
    // The model claims a perfect quality_check (and puts grades on its atoms); the gate
    // must compute its own from the atoms.
    let text = format!(
        r#"Here is my output.
```json
{{
  "invocation_id": "INV_20260203_143052_SCHOLAR_001",
  "status": "success",
  "output": {{
    "atoms": [
      {{"asset_id": "M1", "grade": "A", "quality_score": 0.99,
        "content": {{"mathematical_expression": "{LONG_EXPR}"}},
        "provenance": {{}}}},
      {{"asset_id": "M2", "grade": "A",
        "content": {{"mathematical_expression": "e", "physical_intuition": "i"}},
        "provenance": {{"paper_location": "p.1"}},
        "delta_audit": {{"existing_assets": ["NOT_IN_STORE"], "incremental_value": "v"}}}}
    ],
    "summary": "two atoms"
  }},
  "quality_check": {{
    "atoms_generated": 2,
    "avg_quality_score": 0.99,
    "grades": {{"A": 2, "B": 0, "C": 0, "D": 0}},
    "issues": []
  }},
  "errors": []
}}
```"#
    );
    let parsed = parse_response(&text, None).expect("response parses");
    assert_eq!(parsed.atoms.len(), 2);
    assert_eq!(parsed.summary, "two atoms");
    let g = run_gate(
        &parsed.atoms,
        &required(),
        &known(),
        &QualityConfig::default(),
    );
    let qc = &g.quality_check;
    assert_eq!(qc.atoms_generated, 2);
    // M1: missing physical_intuition and paper_location (−0.4), unanchored (−0.25) = 0.35
    // M2: short content (−0.3), unknown asset (−0.3) = 0.4
    assert_score(&g.verdicts[0], 0.35);
    assert_score(&g.verdicts[1], 0.4);
    assert_eq!(qc.avg_quality_score, 0.375);
    assert_ne!(qc.avg_quality_score, 0.99);
    assert_eq!(
        qc.grades,
        GradeCounts {
            a: 0,
            b: 0,
            c: 0,
            d: 2
        }
    );
    assert!(!qc.issues.is_empty());
    assert_eq!(g.fabricated_refs, 1);
}

#[test]
fn custom_thresholds_change_the_grade() {
    let strict = QualityConfig {
        grade_a: 0.95,
        grade_b: 0.9,
        grade_c: 0.8,
        ..QualityConfig::default()
    };
    let lenient = QualityConfig {
        grade_a: 0.5,
        grade_b: 0.4,
        grade_c: 0.1,
        ..QualityConfig::default()
    };
    // atom_b scores 0.7: B by default, D when strict, A when lenient
    let b = atom_b();
    assert_eq!(grade(&b).grade, Grade::B);
    let v = grade_atom(&b, &required(), &known(), &strict);
    assert_score(&v, 0.7);
    assert_eq!(v.grade, Grade::D);
    assert_eq!(
        grade_atom(&b, &required(), &known(), &lenient).grade,
        Grade::A
    );
    // atom_d scores 0.4: D by default, B when lenient
    assert_eq!(
        grade_atom(&atom_d(), &required(), &known(), &lenient).grade,
        Grade::B
    );
    // the grade counts of run_gate follow the config
    let g = run_gate(
        &[atom_a(), atom_b(), atom_c(), atom_d()],
        &required(),
        &known(),
        &strict,
    );
    assert_eq!(
        g.quality_check.grades,
        GradeCounts {
            a: 1,
            b: 0,
            c: 0,
            d: 3
        }
    );
    // QualityConfig::grade itself
    assert_eq!(strict.grade(0.95), Grade::A);
    assert_eq!(strict.grade(0.949), Grade::B);
    assert_eq!(QualityConfig::default().grade(0.85), Grade::A);
    assert_eq!(QualityConfig::default().grade(0.849), Grade::B);
    assert_eq!(QualityConfig::default().grade(0.7), Grade::B);
    assert_eq!(QualityConfig::default().grade(0.699), Grade::C);
    assert_eq!(QualityConfig::default().grade(0.5), Grade::C);
    assert_eq!(QualityConfig::default().grade(0.499), Grade::D);
}

#[test]
fn custom_min_content_chars_changes_the_short_content_check() {
    let cfg = QualityConfig {
        min_content_chars: 2,
        ..QualityConfig::default()
    };
    // atom_d's content is 4 characters: too short by default, fine at 2
    let v = grade_atom(&atom_d(), &required(), &known(), &cfg);
    assert_eq!(
        kinds(&v),
        vec![pair("unknown_asset", "delta_audit.existing_assets")]
    );
    assert_score(&v, 0.7);
    let cfg = QualityConfig {
        min_content_chars: 10_000,
        ..QualityConfig::default()
    };
    let v = grade_atom(&atom_a(), &required(), &known(), &cfg);
    assert_eq!(kinds(&v), vec![pair("content_too_short", "content")]);
    assert_eq!(v.grade, Grade::B);
}
