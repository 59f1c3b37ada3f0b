//! Tests of the Eval screen's model read from a database.
use super::*;
use crate::features::eval::record::{insert_eval, put_verdict, SampleRow};

fn eval_row(id: &str, parent: Option<&str>, status: &str) -> EvalRow {
    let checks = serde_json::json!([
        {"name": "a", "kind": "json_valid"},
        {"name": "b", "kind": "json_valid"}
    ]);
    EvalRow {
        eval_id: id.into(),
        name: "merge".into(),
        eval_key: id.into(),
        kind: "run".into(),
        run_id: None,
        parent_id: parent.map(str::to_string),
        iteration: 1,
        spec_path: "spec".into(),
        spec_json: serde_json::json!({"checks": checks, "epochs": 1, "reducer": "mean",
            "plan_tasks": ["t"], "output_task": "t"})
        .to_string(),
        dataset_path: "data".into(),
        out_dir: None,
        status: status.into(),
        created_at: "2026-11-28T00:00:00Z".into(),
        finished_at: None,
        sample_count: 0,
    }
}

/// Stores eval `row` with samples `(id, hash, status, marks)` in dataset order.
fn store(conn: &Connection, row: &EvalRow, samples: &[(&str, &str, &str, &str)]) {
    let rows: Vec<SampleRow> = samples
        .iter()
        .enumerate()
        .map(|(i, (id, hash, _, _))| SampleRow {
            sample_id: id.to_string(),
            ord: i as u64,
            file_id: id.to_string(),
            hash: hash.to_string(),
            line: i as u64 + 1,
            content: "{}".into(),
            status: "pending".into(),
            score: None,
            inherited_from: None,
            marks: None,
        })
        .collect();
    let tx = conn.unchecked_transaction().expect("tx");
    insert_eval(&tx, row, &rows).expect("insert");
    for (id, _, status, marks) in samples {
        if *status != "pending" {
            put_verdict(&tx, &row.eval_id, id, (status, 0.0), marks).expect("verdict");
        }
    }
    tx.commit().expect("commit");
}

/// Ids in another order than the dataset's, samples on one side only, a changed
/// content and a pending sample: each sample meets its own parent sample.
#[test]
fn each_sample_is_compared_with_the_parent_sample_of_its_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = crate::data::store::open_connection(&dir.path().join("m.db")).expect("db");
    let parent = eval_row("P", None, "finished");
    store(
        &conn,
        &parent,
        &[
            ("zeta", "h1", "passed", "pp"),
            ("alpha", "h2", "failed", "fp"),
            ("only-there", "h3", "passed", "pp"),
            ("mid", "h4", "passed", "pp"),
            ("changed", "h5", "passed", "pp"),
            ("waits", "h6", "failed", "ff"),
        ],
    );
    let child = eval_row("C", Some("P"), "running");
    store(
        &conn,
        &child,
        &[
            ("mid", "h4", "failed", "pf"),
            ("only-here", "h9", "failed", "ff"),
            ("alpha", "h2", "passed", "pp"),
            ("changed", "h5-new", "failed", "ff"),
            ("zeta", "h1", "passed", "pp"),
            ("waits", "h6", "pending", ""),
        ],
    );
    let m = EvalModel::load(&conn, read::find_eval(&conn, "C").expect("C")).expect("load");
    let ids: Vec<&str> = m.samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["mid", "only-here", "alpha", "changed", "zeta", "waits"]
    );
    let flips: Vec<Flip> = m.samples.iter().map(|s| s.flip).collect();
    assert_eq!(
        flips,
        [
            Flip::Regressed,
            Flip::None,
            Flip::Improved,
            Flip::None,
            Flip::None,
            Flip::None
        ]
    );
    let checked: Vec<bool> = m.samples.iter().map(|s| s.check_flipped).collect();
    assert_eq!(checked, [true, false, true, false, false, false]);
    // Paired over mid, alpha and zeta (same content, scored on both sides).
    let a = m.checks[0].parent.as_ref().expect("a has a parent side");
    assert_eq!((a.regressed, a.improved), (0, 1));
    let b = m.checks[1].parent.as_ref().expect("b has a parent side");
    assert_eq!((b.regressed, b.improved), (1, 0));
    // The parent's rates over its six scored samples.
    assert!(
        (a.parent_rate - 4.0 / 6.0).abs() < 1e-9,
        "{}",
        a.parent_rate
    );
    assert!(
        (b.parent_rate - 5.0 / 6.0).abs() < 1e-9,
        "{}",
        b.parent_rate
    );
    // A second reading reuses the parent's side and finds the same.
    let again = EvalModel::read_again(&conn, "C", m.parent_side.clone()).expect("read again");
    let flips2: Vec<Flip> = again.samples.iter().map(|s| s.flip).collect();
    assert_eq!(flips, flips2);
}

/// The marks file's ids come back as marks; a line naming no sample is said, not marked.
#[test]
fn marks_are_taken_back_from_the_file_and_a_stranger_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = crate::data::store::open_connection(&dir.path().join("m.db")).expect("db");
    let row = eval_row("E", None, "finished");
    store(
        &conn,
        &row,
        &[("q1", "h1", "passed", "p"), ("q2", "h2", "failed", "f")],
    );
    let m = EvalModel::load(&conn, read::find_eval(&conn, "E").expect("E")).expect("load");
    let mut s = crate::tui::eval_ui::EvalScreen::new(m);
    s.restore_marks(Ok(vec![(1, "q2".into()), (3, "gone".into())]));
    assert_eq!(s.marked.iter().collect::<Vec<_>>(), ["q2"]);
    let (said, warn) = s.flash.clone().expect("said");
    assert!(warn && said.contains("line 3 names no sample"), "{said}");
    let mut quiet = crate::tui::eval_ui::EvalScreen::new(
        EvalModel::load(&conn, read::find_eval(&conn, "E").expect("E")).expect("load"),
    );
    quiet.restore_marks(Err("rerun_E.txt: denied".into()));
    assert!(quiet.marked.is_empty());
    assert!(quiet.flash.expect("said").0.contains("denied"));
}
