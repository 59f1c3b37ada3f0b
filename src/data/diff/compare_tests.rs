//! Unit tests of [`compare`] and the text renderer over hand-built snapshots.

use serde_json::json;

use super::*;
use crate::data::diff::render::{render, summary, WIDTH};
use crate::data::diff::TimingTolerance;

fn call(status: &str, errors: &[&str], grades: &[&str]) -> CallSnapshot {
    CallSnapshot {
        status: Some(status.into()),
        errors: errors.iter().map(|s| s.to_string()).collect(),
        prompt_tokens: 200,
        output_tokens: Some(300),
        grades: grades.iter().map(|s| s.to_string()).collect(),
    }
}

fn atom(id: &str, grade: &str, score: f64) -> AtomSnapshot {
    AtomSnapshot {
        asset_id: id.into(),
        grade: Some(grade.into()),
        score: Some(score),
        content: json!({"mathematical_expression": "x = y"}),
    }
}

fn task(id: &str) -> TaskSnapshot {
    TaskSnapshot {
        task_id: id.into(),
        agent: "Scholar_Internalizer".into(),
        status: "success".into(),
        attempts: 1,
        atoms: 1,
        calls: vec![call("success", &[], &["B"])],
        accepted: vec![atom(&format!("MATH_{id}_01"), "B", 0.8)],
        context: vec!["upstream: full keep, 120 -> 120 tokens".into()],
        wall_ms: Some(40),
        ..TaskSnapshot::default()
    }
}

fn run(id: &str, tasks: Vec<TaskSnapshot>) -> RunSnapshot {
    RunSnapshot {
        run_id: id.into(),
        plan_id: "P".into(),
        status: "succeeded".into(),
        provider: "simulated".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        wall_ms: Some(100),
        tasks,
    }
}

/// `(task, field)` of every difference; run-level ones under `run`.
fn pairs(d: &RunDiff) -> Vec<(String, String)> {
    d.run
        .iter()
        .map(|f| ("run".to_string(), f.field.clone()))
        .chain(d.tasks.iter().flat_map(|t| {
            t.fields
                .iter()
                .map(|f| (t.task_id.clone(), f.field.clone()))
        }))
        .collect()
}

fn p(t: &str, f: &str) -> (String, String) {
    (t.to_string(), f.to_string())
}

#[test]
fn identical_runs_with_other_ids_and_times_do_not_differ() {
    let a = run("R1", vec![task("T1"), task("T2")]);
    let mut b = run("R2", vec![task("T1"), task("T2")]);
    b.created_at = "2027-05-05T00:00:00Z".into();
    b.wall_ms = Some(9000);
    b.tasks[0].wall_ms = Some(5000);
    let d = compare(&a, &b, &DiffOptions::default());
    assert!(d.same, "{:?}", pairs(&d));
    assert_eq!(d.differences, 0);
    assert_eq!(render(&d), vec!["no differences".to_string()]);
    // The times are still there to see.
    assert_eq!(d.timing.run_ms, [Some(100), Some(9000)]);
    assert_eq!(d.timing.tasks[0].b_ms, Some(5000));
    assert!(!d.timing.compared);
}

#[test]
fn timing_counts_only_when_asked_and_beyond_the_tolerance() {
    let a = run("R1", vec![task("T1"), task("T2")]);
    let mut b = run("R2", vec![task("T1"), task("T2")]);
    b.tasks[0].wall_ms = Some(5000);
    b.tasks[1].wall_ms = Some(120); // 80 ms apart: within 100 ms
    b.wall_ms = Some(110);
    let opts = DiffOptions {
        timing: Some(TimingTolerance::default()),
    };
    let d = compare(&a, &b, &opts);
    assert_eq!(pairs(&d), vec![p("T1", "time_ms")]);
    assert!(d.timing.compared);
    let tol = TimingTolerance {
        pct: 25.0,
        min_ms: 0,
    };
    assert!(!tol.exceeded(Some(1000), Some(1250)));
    assert!(tol.exceeded(Some(1000), Some(1400)));
    assert!(tol.exceeded(None, Some(1)));
}

#[test]
fn a_task_that_failed_its_gate_differs_in_exactly_what_follows() {
    let a = run("R1", vec![task("T1"), task("T2")]);
    let mut b = run("R2", vec![task("T1"), task("T2")]);
    b.status = "partial".into();
    let t = &mut b.tasks[0];
    t.status = "partial".into();
    t.attempts = 3;
    t.atoms = 2;
    t.error_code = Some("E005".into());
    t.retries = vec![
        "attempt 2 after E005: x".into(),
        "attempt 3 after E005: x".into(),
    ];
    t.calls = vec![
        call("partial", &["E005"], &["B"]),
        call("partial", &["E005"], &["B", "C"]),
        call("partial", &["E005"], &["B", "B"]),
    ];
    t.accepted.push(atom("MATH_T1_02", "B", 0.8));
    let d = compare(&a, &b, &DiffOptions::default());
    assert_eq!(
        pairs(&d),
        vec![
            p("run", "status"),
            p("T1", "status"),
            p("T1", "attempts"),
            p("T1", "error_code"),
            p("T1", "atoms"),
            p("T1", "retries"),
            p("T1", "attempt[1].status"),
            p("T1", "attempt[1].errors"),
            p("T1", "attempt[2]"),
            p("T1", "attempt[3]"),
            p("T1", "atom[MATH_T1_02]"),
        ]
    );
    assert_eq!(d.differences, 11);
    let f = &d.tasks[0].fields[1];
    assert_eq!((f.a.clone(), f.b.clone()), (json!(1), json!(3)));
    let extra = &d.tasks[0].fields[7];
    assert_eq!(extra.a, serde_json::Value::Null);
    assert_eq!(extra.b["grades"], json!(["B", "C"]));
    assert_eq!(summary(&d), "1 task differs: T1; run: status");
}

#[test]
fn atoms_align_by_asset_id_and_compare_grade_score_and_content() {
    let a = run("R1", vec![task("T1")]);
    let mut b = run("R2", vec![task("T1")]);
    let x = &mut b.tasks[0].accepted[0];
    x.grade = Some("C".into());
    x.score = Some(0.55);
    x.content = json!({"mathematical_expression": "x = z"});
    // The same score written differently is the same score.
    let mut c = run("R3", vec![task("T1")]);
    c.tasks[0].accepted[0].score = Some(0.8 + 1e-12);
    let d = compare(&a, &b, &DiffOptions::default());
    assert_eq!(
        pairs(&d),
        vec![
            p("T1", "atom[MATH_T1_01].grade"),
            p("T1", "atom[MATH_T1_01].score"),
            p("T1", "atom[MATH_T1_01].content"),
        ]
    );
    assert!(compare(&a, &c, &DiffOptions::default()).same);
    // A renamed atom is one gone and one new.
    b.tasks[0].accepted[0] = atom("MATH_T1_09", "B", 0.8);
    let d = compare(&a, &b, &DiffOptions::default());
    assert_eq!(
        pairs(&d),
        vec![p("T1", "atom[MATH_T1_01]"), p("T1", "atom[MATH_T1_09]")]
    );
}

#[test]
fn task_set_plan_id_context_tokens_and_blocking_are_compared() {
    let a = run("R1", vec![task("T1"), task("T2"), task("T3")]);
    let mut b = run("R2", vec![task("T1"), task("T2"), task("T4")]);
    b.plan_id = "Q".into();
    b.tasks[0].context = vec!["upstream: summary summarize, 120 -> 40 tokens".into()];
    b.tasks[0].calls[0].prompt_tokens = 180;
    b.tasks[1].status = "blocked".into();
    b.tasks[1].blocked_by = Some("T1".into());
    b.tasks[1].references = vec!["#0 task_output ref_not_found".into()];
    let d = compare(&a, &b, &DiffOptions::default());
    assert_eq!(
        pairs(&d),
        vec![
            p("run", "plan_id"),
            p("run", "tasks"),
            p("T1", "context"),
            p("T1", "attempt[1].prompt_tokens"),
            p("T2", "status"),
            p("T2", "blocked_by"),
            p("T2", "references"),
        ]
    );
    assert_eq!(d.run[1].a, json!(["T3"]));
    assert_eq!(d.run[1].b, json!(["T4"]));
    // Only tasks of both runs have timing rows.
    assert_eq!(d.timing.tasks.len(), 2);
}

#[test]
fn the_text_report_is_aligned_narrow_clean_and_ends_with_a_summary() {
    let mut a = run("R1", vec![task("T1"), task("任务\u{1b}[2J")]);
    let mut b = a.clone();
    b.run_id = "R2".into();
    a.tasks[0].retries = vec![];
    b.tasks[0].retries = vec![
        "attempt 2 after E005: max_tokens ×1.5, temperature -0.1: retry 1 of 2".into(),
        "attempt 3 after E005: max_tokens ×1.5, temperature -0.1: retry 2 of 2".into(),
    ];
    b.tasks[0].status = "partial".into();
    b.tasks[1].status = "failed".into();
    b.tasks[1].accepted[0].content = json!({"text": "a \u{7} bell ".repeat(30)});
    let d = compare(&a, &b, &DiffOptions::default());
    let lines = render(&d);
    for l in &lines {
        assert!(
            crate::base::text::sanitize::display_width(l) <= WIDTH,
            "too wide: {l:?}"
        );
        assert!(!l.contains('\u{1b}') && !l.contains('\u{7}'), "{l:?}");
    }
    let text = lines.join("\n");
    assert!(
        text.contains("  status                      success                              partial"),
        "{text}"
    );
    assert!(text.contains("    B  attempt 2 after E005"), "{text}");
    assert!(text.contains("       attempt 3 after E005"), "{text}");
    assert!(
        text.contains("time: run A 100 ms / B 100 ms; not compared"),
        "{text}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("2 tasks differ: T1, 任务␛")
    );
}

#[test]
fn the_summary_line_stays_within_the_width_for_many_tasks() {
    let ids: Vec<String> = (0..40)
        .map(|i| format!("TASK_WITH_A_LONG_NAME_{i:02}"))
        .collect();
    let a = run("R1", ids.iter().map(|i| task(i)).collect());
    let mut b = a.clone();
    for t in &mut b.tasks {
        t.attempts = 2;
    }
    let d = compare(&a, &b, &DiffOptions::default());
    let s = summary(&d);
    assert!(
        s.starts_with("40 tasks differ: TASK_WITH_A_LONG_NAME_00, "),
        "{s}"
    );
    assert!(s.ends_with("more)"), "{s}");
    assert!(s.chars().count() <= WIDTH, "{s}");
}
