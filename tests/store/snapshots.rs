//! Stored snapshots of a run's state: the process that runs it stores them, they never
//! disagree with the log (for runs that ended every way), and a damaged or missing one
//! is rebuilt from the log without losing anything.

use std::time::{Duration, Instant};

use crate::common;

use common::bin::{gen_plan, output, plexus};
use common::snapshots::{assert_snapshot_matches_log, folded_from_log};
use plexus::data::replay::stored::open_at;
use plexus::data::store::snapshots::delete_snapshots;
use plexus::data::store::Store;
use plexus::model::state::snapshot::{decode, normal_form};

/// Runs a generated plan headless to its end in a fresh database; (dir, db, run id).
fn run_generated(faults: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("s.db");
    let plan = gen_plan(dir.path(), 60, 8);
    let out = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .arg("run")
            .arg(&plan)
            .args(["--headless", "--chunk-ms", "0", "--first-chunk-ms", "0"])
            .args(["--faults", faults, "--timeout-scale", "0.02"]),
    );
    assert!(
        matches!(out.code, Some(0 | 3)),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let run = Store::open(&db).expect("open").list_runs().expect("runs")[0]
        .run_id
        .clone();
    (dir, db, run)
}

#[test]
fn a_run_that_succeeds_stores_its_end_and_it_equals_the_log() {
    let (_dir, db, run) = run_generated("none");
    assert_eq!(
        Store::open(&db).expect("ok").run(&run).expect("ok").status,
        "succeeded"
    );
    assert_snapshot_matches_log(&db, &run, true);
}

#[test]
fn a_run_with_failures_and_retries_stores_its_end_and_it_equals_the_log() {
    let (_dir, db, run) = run_generated("demo");
    let store = Store::open(&db).expect("ok");
    let kinds: Vec<String> = store
        .events(&run, 1, u64::MAX)
        .expect("ok")
        .into_iter()
        .filter_map(|e| e.event.ok().map(|e| e.kind().to_string()))
        .collect();
    assert!(
        kinds.iter().any(|k| k == "retry_scheduled"),
        "faults were injected"
    );
    assert_snapshot_matches_log(&db, &run, true);
}

/// Waits until `run` has a snapshot that decodes at event `seq`.
fn wait_for_snapshot_at(db: &std::path::Path, run: &str, seq: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let store = Store::open(db).expect("open");
        if let Some(s) = store.snapshot_before(run, seq).expect("read") {
            if s.seq == seq && decode(&s.data).is_ok() {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no snapshot at event {seq} was stored again"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_damaged_snapshot_is_refused_the_log_rebuilds_the_state_and_it_is_stored_again() {
    let (_dir, db, run) = run_generated("demo");
    let store = Store::open(&db).expect("ok");
    let (last, _) = store.last_event(&run).expect("ok");
    let want = folded_from_log(&store, &run);
    // Flip a byte in the middle of the stored body.
    let conn = rusqlite::Connection::open(&db).expect("ok");
    let n = conn
        .execute(
            "UPDATE run_snapshots SET data = CAST(substr(data, 1, length(data) / 2)
                 || x'00' || substr(data, length(data) / 2 + 2) AS BLOB) WHERE run_id = ?1",
            [&run],
        )
        .expect("ok");
    assert_eq!(n, 1, "one snapshot, at the end");
    let id: std::sync::Arc<str> = run.as_str().into();
    let opened = open_at(&store, &id, last).expect("ok");
    assert_eq!(opened.refused.len(), 1, "{:?}", opened.refused);
    assert!(
        opened.refused[0].contains("damaged"),
        "{:?}",
        opened.refused
    );
    assert_eq!(opened.snapshot, None, "rebuilt from the log's start");
    let mut state = opened.state;
    normal_form(&mut state);
    assert!(
        state == want,
        "nothing lost: the rebuilt state is the log's"
    );
    // The reader stored the rebuilt state for the next.
    wait_for_snapshot_at(&db, &run, last);
    assert_snapshot_matches_log(&db, &run, true);
}

#[test]
fn a_missing_snapshot_is_read_from_the_log_without_losing_anything() {
    let (_dir, db, run) = run_generated("none");
    assert_eq!(delete_snapshots(&db, &run).expect("ok"), 1);
    let store = Store::open(&db).expect("ok");
    let (last, _) = store.last_event(&run).expect("ok");
    let id: std::sync::Arc<str> = run.as_str().into();
    let opened = open_at(&store, &id, last).expect("ok");
    assert_eq!((opened.snapshot, opened.folded), (None, last));
    let mut state = opened.state;
    normal_form(&mut state);
    assert!(state == folded_from_log(&store, &run));
    // The replay's seek to the end gives the same state.
    let mut log = plexus::data::replay::log::ReplayLog::open(&db, &run).expect("ok");
    let mut seeked = log.seek(last).expect("ok");
    normal_form(&mut seeked);
    assert!(seeked == folded_from_log(&store, &run));
}

#[test]
fn the_replay_opens_at_the_end_from_the_snapshot_without_indexing_the_log() {
    let (_dir, db, run) = run_generated("demo");
    let store = Store::open(&db).expect("ok");
    let (last, _) = store.last_event(&run).expect("ok");
    let mut log = plexus::data::replay::log::ReplayLog::open(&db, &run).expect("ok");
    let mut st = log.seek(last).expect("ok");
    assert_eq!(log.indexed(), 0, "the log was not read to get there");
    // A task's text comes from its own events.
    let task = (0..st.tasks.len())
        .find(|&i| st.tasks[i].spilled)
        .expect("a task that ran");
    let text = log.task_output(task, last).expect("ok");
    assert_eq!(log.indexed(), 0);
    let mut full = plexus::data::replay::log::replay_state(&run);
    full.output_only = Some(task);
    full.output_budget = usize::MAX;
    let id: std::sync::Arc<str> = run.as_str().into();
    plexus::data::replay::feed::fold_range(&store, &id, &mut full, 1, last).expect("ok");
    assert!(text.len() > 3, "{} lines", text.len());
    assert!(
        text == full.tasks[task].output,
        "the task's text equals the log's"
    );
    normal_form(&mut st);
    assert!(st == folded_from_log(&store, &run));
}

#[test]
fn bench_open_times_a_generated_run_from_its_snapshot_and_from_its_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = output(plexus(dir.path()).args([
        "bench", "open", "--tasks", "40", "--width", "6", "--runs", "1", "--dir", "b", "--json",
    ]));
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let r: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON report");
    assert_eq!(r["tasks"], 40, "{r}");
    assert!(r["events"].as_u64().expect("events") > 40, "{r}");
    assert!(
        r["snapshot_bytes"].as_u64().expect("bytes") > 0,
        "the run stored its end: {r}"
    );
    for k in [
        "browse_ms",
        "browse_from_log_ms",
        "failures_ms",
        "failures_from_log_ms",
    ] {
        assert!(r[k].as_f64().expect(k) > 0.0, "{k}: {r}");
    }
    let out = output(plexus(dir.path()).args([
        "bench", "open", "--tasks", "40", "--width", "6", "--runs", "1", "--dir", "b2", "--json",
        "--no-log",
    ]));
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let r: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON report");
    assert!(r["browse_ms"].as_f64().expect("browse_ms") > 0.0, "{r}");
    assert!(
        r["browse_from_log_ms"].is_null(),
        "--no-log skips the log: {r}"
    );
    assert!(
        r["failures_from_log_ms"].is_null(),
        "--no-log skips the log: {r}"
    );
}

#[test]
fn a_snapshot_written_short_long_or_failing_is_not_stored_and_the_one_before_stays() {
    let (_dir, db, run) = run_generated("none");
    let store = Store::open(&db).expect("ok");
    let (last, _) = store.last_event(&run).expect("ok");
    let before = store.snapshot_before(&run, last).expect("ok");
    assert_eq!(before.as_ref().map(|s| s.seq), Some(last));
    let put = |len: usize, bytes: &'static [u8], fail: bool| {
        plexus::data::store::snapshots::put_snapshot(&db, &run, last + 1, len, |out| {
            out.write_all(bytes).map_err(|e| e.to_string())?;
            if fail {
                return Err("the encoder stopped".into());
            }
            Ok(())
        })
    };
    let short = put(8, b"PLXSNAP", false).expect_err("short");
    assert!(short.to_string().contains("7 bytes"), "{short}");
    let long = put(4, b"PLXSNAP", false).expect_err("long");
    assert!(long.to_string().contains("more bytes"), "{long}");
    let failed = put(7, b"PLXSNAP", true).expect_err("failed");
    assert!(failed.to_string().contains("encoder stopped"), "{failed}");
    assert_eq!(
        store.snapshot_seqs(&run).expect("ok"),
        vec![last],
        "nothing stored, the end's snapshot kept"
    );
    assert_eq!(store.snapshot_before(&run, last).expect("ok"), before);
    assert_eq!(
        store.snapshot_before(&run, u64::MAX).expect("ok"),
        before,
        "no limit reads the newest"
    );
}
