//! Tests of the eval readers.
use super::*;
use crate::features::eval::record::{insert_eval, put_attempt, put_verdict, AttemptRow, CheckRow};
use crate::features::eval::score::{check_marks, sample_verdict};

fn attempt(sample: &str, epoch: u32, checks: &[(&str, Option<bool>)]) -> AttemptRow {
    AttemptRow {
        sample_id: sample.into(),
        epoch,
        run_id: "R".into(),
        status: if checks.iter().any(|c| c.1.is_none()) {
            "error"
        } else if checks.iter().all(|c| c.1 == Some(true)) {
            "passed"
        } else {
            "failed"
        }
        .into(),
        score: 0.0,
        tokens: 1,
        latency_ms: 1,
        cost_usd: None,
        error: None,
        judge_tokens: 0,
        judge_cost_usd: None,
        checks: checks
            .iter()
            .map(|(n, p)| CheckRow {
                name: (*n).into(),
                passed: *p,
                score: p.map(|p| if p { 1.0 } else { 0.0 }),
                result: None,
            })
            .collect(),
    }
}

/// The marks kept with each verdict say what the check rows say, over several epochs
/// with a reducer, an error, and checks stored in another order than the spec's.
#[test]
fn marks_read_the_same_results_as_the_check_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = crate::data::store::open_connection(&dir.path().join("e.db")).expect("db");
    let scoring: Scoring = serde_json::from_value(serde_json::json!({
        "checks": [{"name": "z_last", "kind": "json_valid"}, {"name": "a_first", "kind": "json_valid"}],
        "epochs": 2, "reducer": "all", "plan_tasks": ["t"], "output_task": "t"}))
    .expect("scoring");
    let row = EvalRow {
        eval_id: "E1".into(),
        name: "n".into(),
        eval_key: "k".into(),
        kind: "run".into(),
        run_id: Some("R".into()),
        parent_id: None,
        iteration: 1,
        spec_path: "s".into(),
        spec_json: serde_json::to_string(&scoring).expect("json"),
        dataset_path: "d".into(),
        out_dir: None,
        status: "finished".into(),
        created_at: "t".into(),
        finished_at: None,
        sample_count: 3,
    };
    let sample = |id: &str| SampleRow {
        sample_id: id.into(),
        ord: 0,
        file_id: id.into(),
        hash: "h".into(),
        line: 1,
        content: "{}".into(),
        status: "pending".into(),
        score: None,
        inherited_from: None,
        marks: None,
    };
    let tx = conn.unchecked_transaction().expect("tx");
    insert_eval(&tx, &row, &[sample("a"), sample("b"), sample("c")]).expect("insert");
    let by_sample = [
        (
            "a",
            vec![
                attempt("a", 1, &[("a_first", Some(true)), ("z_last", Some(true))]),
                attempt("a", 2, &[("a_first", Some(false)), ("z_last", Some(true))]),
            ],
        ),
        (
            "b",
            vec![
                attempt("b", 1, &[("a_first", Some(true)), ("z_last", Some(true))]),
                attempt("b", 2, &[("a_first", Some(true)), ("z_last", Some(true))]),
            ],
        ),
        (
            "c",
            vec![
                attempt("c", 1, &[("a_first", None), ("z_last", None)]),
                attempt("c", 2, &[("a_first", Some(true)), ("z_last", Some(false))]),
            ],
        ),
    ];
    for (id, attempts) in &by_sample {
        for a in attempts {
            put_attempt(&tx, "E1", a).expect("attempt");
        }
        let refs: Vec<&AttemptRow> = attempts.iter().collect();
        let per: Vec<(String, f64)> = attempts.iter().map(|a| (a.status.clone(), 0.0)).collect();
        let marks = check_marks(&scoring, &refs);
        put_verdict(
            &tx,
            "E1",
            id,
            sample_verdict(scoring.reducer(), &per),
            &marks,
        )
        .expect("verdict");
    }
    tx.commit().expect("commit");
    let from_marks = sample_results(&conn, &row).expect("marks");
    let from_rows = results_from_checks(&conn, &row).expect("rows");
    assert_eq!(from_marks, from_rows);
    let marks: Vec<String> = samples(&conn, "E1")
        .expect("samples")
        .into_iter()
        .filter_map(|s| s.marks)
        .collect();
    // In the spec's order (z_last, a_first): `all` fails a's a_first; c's error.
    assert_eq!(marks, ["pf", "pp", "ee"]);
}

/// The pages of pending samples: every one once, in id order, the empty id too,
/// none that was scored.
#[test]
fn pending_samples_are_read_a_page_at_a_time_each_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = crate::data::store::open_connection(&dir.path().join("p.db")).expect("db");
    let row = EvalRow {
        eval_id: "E1".into(),
        name: "n".into(),
        eval_key: "k".into(),
        kind: "run".into(),
        run_id: None,
        parent_id: None,
        iteration: 1,
        spec_path: "s".into(),
        spec_json: "{}".into(),
        dataset_path: "d".into(),
        out_dir: None,
        status: "running".into(),
        created_at: "t".into(),
        finished_at: None,
        sample_count: 0,
    };
    let ids = ["s10", "", "s2", "b", "s1", "a/b", "中"];
    let rows: Vec<SampleRow> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| SampleRow {
            sample_id: (*id).into(),
            ord: i as u64,
            file_id: format!("f{i}"),
            hash: "h".into(),
            line: 1,
            content: "{}".into(),
            status: "pending".into(),
            score: None,
            inherited_from: None,
            marks: None,
        })
        .collect();
    let tx = conn.unchecked_transaction().expect("tx");
    insert_eval(&tx, &row, &rows).expect("insert");
    put_verdict(&tx, "E1", "s2", ("passed", 1.0), "").expect("scored");
    tx.commit().expect("commit");
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = pending_after(&conn, "E1", after.as_deref(), 2).expect("page");
        if page.is_empty() {
            break;
        }
        after = page.last().map(|r| r.sample_id.clone());
        seen.extend(page.into_iter().map(|r| r.sample_id));
    }
    assert_eq!(seen, ["", "a/b", "b", "s1", "s10", "中"]);
}
