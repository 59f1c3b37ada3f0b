//! The Eval screen keeps answering keys while it reads a large running eval again:
//! the reading is done off the screen's loop, so a key typed during it is on screen
//! before the reading ends. Measured here: the longest gap between a key and the frame
//! that shows it (printed; the figures are in docs/performance.md).

#![cfg(unix)]

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use plexus::features::eval::record::{self, AttemptRow, CheckRow, EvalRow, SampleRow};
use plexus::features::eval::score::{check_marks, sample_verdict};
use serde_json::json;

use crate::common::pty::Session;

const SAMPLES: usize = 100_000;
const EVAL: &str = "E-large-running";

/// A running eval of `n` samples with one check, written straight into `db`: the first
/// half scored, the rest pending.
fn write_running_eval(db: &Path, n: usize) {
    let conn = plexus::data::store::open_connection(db).expect("open db");
    let scoring = json!({"checks": [{"name": "valid", "kind": "json_valid"}], "epochs": 1,
                         "reducer": "mean", "plan_tasks": ["answer"], "output_task": "answer"});
    let scoring_of: plexus::features::eval::spec::Scoring =
        serde_json::from_value(scoring.clone()).expect("scoring");
    let row = EvalRow {
        eval_id: EVAL.into(),
        name: "large".into(),
        eval_key: EVAL.into(),
        kind: "run".into(),
        run_id: Some("R-large".into()),
        parent_id: None,
        iteration: 1,
        spec_path: "large.eval.json".into(),
        spec_json: scoring.to_string(),
        dataset_path: "large.jsonl".into(),
        out_dir: None,
        status: "running".into(),
        created_at: "2026-12-01T00:00:00Z".into(),
        finished_at: None,
        sample_count: n as u64,
    };
    let samples: Vec<SampleRow> = (0..n)
        .map(|i| SampleRow {
            sample_id: format!("s{i}"),
            ord: i as u64,
            file_id: format!("s{i}"),
            hash: format!("{i:064x}"),
            line: i as u64 + 1,
            content: json!({"input": format!("q{i}")}).to_string(),
            status: "pending".into(),
            score: None,
            inherited_from: None,
            marks: None,
        })
        .collect();
    let tx = conn.unchecked_transaction().expect("tx");
    record::insert_eval(&tx, &row, &samples).expect("insert eval");
    for i in 0..n / 2 {
        let passed = i % 5 != 0;
        let attempt = AttemptRow {
            sample_id: format!("s{i}"),
            epoch: 1,
            run_id: "R-large".into(),
            status: if passed { "passed" } else { "failed" }.into(),
            score: if passed { 1.0 } else { 0.0 },
            tokens: 100,
            latency_ms: 1,
            cost_usd: None,
            error: None,
            judge_tokens: 0,
            judge_cost_usd: None,
            checks: vec![CheckRow {
                name: "valid".into(),
                passed: Some(passed),
                score: Some(if passed { 1.0 } else { 0.0 }),
                result: None,
            }],
        };
        record::put_attempt(&tx, EVAL, &attempt).expect("attempt");
        let marks = check_marks(&scoring_of, &[&attempt]);
        let verdict = sample_verdict(scoring_of.reducer(), &[(attempt.status.clone(), 1.0)]);
        record::put_verdict(&tx, EVAL, &attempt.sample_id, verdict, &marks).expect("verdict");
    }
    tx.commit().expect("commit");
}

/// How many `z`s the search line shows (the input line reads `/zzz▏ …`).
fn typed(screen: &str) -> usize {
    screen
        .lines()
        .find_map(|l| l.trim_start().strip_prefix('/'))
        .map_or(0, |rest| rest.chars().take_while(|c| *c == 'z').count())
}

/// Waits until the screen says the eval is being read; the screen then.
fn wait_reading(s: &Session, secs: u64) -> Option<String> {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        let screen = s.screen();
        if screen.contains("(reading…)") {
            return Some(screen);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

#[test]
fn keys_typed_while_a_100k_sample_running_eval_is_read_again_are_shown_before_the_reading_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_running_eval(&dir.path().join("e.db"), SAMPLES);
    // Every reading is shown (not only those past a quarter second): how long one takes
    // depends on the machine, and the test must see each one.
    let mut s = Session::start_with_env(
        &["--db", "e.db", "eval", "open", EVAL],
        dir.path(),
        100,
        30,
        &[("PLEXUS_EVAL_READING_SHOWN_MS", "0")],
    );
    let first = s.wait_for("50000/100000", 120);
    assert!(first.contains("running"), "{first}");
    s.send("/");
    s.wait_for("/▏", 10);
    let mut gaps = Vec::new();
    let mut during_reading = 0;
    for _ in 0..4 {
        let Some(_) = wait_reading(&s, 60) else {
            panic!("the eval was never read again; screen:\n{}", s.screen());
        };
        let before = typed(&s.screen());
        let sent = Instant::now();
        s.writer.write_all(b"z").expect("write");
        s.writer.flush().expect("flush");
        let shown = loop {
            let screen = s.screen();
            if typed(&screen) > before {
                break screen;
            }
            assert!(
                sent.elapsed() < Duration::from_secs(60),
                "the key never showed; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(2));
        };
        gaps.push(sent.elapsed());
        if shown.contains("(reading…)") {
            during_reading += 1;
        }
    }
    eprintln!(
        "eval screen, {SAMPLES} samples: key-to-frame gaps during readings {:?} (longest {:?}); {during_reading} of {} keys shown while the reading went on",
        gaps,
        gaps.iter().max(),
        gaps.len()
    );
    assert!(
        during_reading > 0,
        "no key was shown before the reading it was typed in ended: keys wait on reads ({gaps:?})"
    );
    s.send("\x1b");
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}
