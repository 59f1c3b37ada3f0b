//! An eval's end is one step that can be redone, on the real binary: the process is
//! stopped at each step of it (scored, summary written, problems report written, handoff
//! written, `finished` stored) and killed with SIGKILL, or its tree's folder cannot be
//! written; the same command then ends with a tree equal to `eval export-tree` and no
//! model call (of a finished eval, it prints the report again).

#![cfg(unix)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::bin::{output, plexus, Running};
use nix::sys::signal::{kill, Signal};

/// The steps of an eval's end a kill lands at.
const POINTS: [&str; 5] = [
    "eval-end:scored",
    "eval-end:summary",
    "eval-end:report",
    "eval-end:handoff",
    "eval-end:finished",
];

fn fixture(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    for f in ["arith.eval.json", "answer_plan.json", "arith.jsonl"] {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy fixture");
    }
}

fn eval_cmd(dir: &Path) -> std::process::Command {
    let mut c = plexus(dir);
    c.args(["--db", "e.db", "eval", "arith.eval.json", "--out", "tree"])
        .args([
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
            "--iteration",
            "1",
        ]);
    c
}

fn count(dir: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(dir.join("e.db"))
        .expect("open")
        .query_row(sql, [], |r| r.get(0))
        .expect("count")
}

/// The tree is whole: the same files, byte for byte, as `eval export-tree` writes.
fn assert_whole(dir: &Path, ctx: &str) {
    let again = format!("again-{}", fastrand::u32(..));
    let o = output(plexus(dir).args(["--db", "e.db", "eval", "export-tree", "latest", &again]));
    assert_eq!(o.code, Some(0), "{ctx}: {}", o.stderr);
    let tree = crate::common::bin::tree_files(&dir.join("tree"));
    let exported = crate::common::bin::tree_files(&dir.join(&again));
    assert_eq!(
        tree.keys().collect::<Vec<_>>(),
        exported.keys().collect::<Vec<_>>(),
        "{ctx}: the same files"
    );
    for (k, v) in &tree {
        assert!(exported[k] == *v, "{ctx}: {k} differs from the export");
    }
    assert_eq!(
        tree.keys()
            .filter(|k| k.contains("evaluation_results/"))
            .count(),
        12,
        "{ctx}: every sample is scored in the tree"
    );
}

/// Waits until the process says it paused at `point`.
fn wait_paused(run: &mut Running, point: &str) {
    let end = Instant::now() + Duration::from_secs(120);
    let line = format!("{}{point}", plexus::base::pause_point::PAUSED);
    while !run.stderr().contains(&line) {
        assert!(run.running(), "ended before {point}:\n{}", run.stderr());
        assert!(
            Instant::now() < end,
            "no pause at {point}:\n{}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_kill_at_any_step_of_an_evals_end_is_completed_by_the_same_command_without_a_call() {
    for round in 0..20 {
        let point = POINTS[round % POINTS.len()];
        let ctx = format!("round {round} ({point})");
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        fixture(d);
        let mut run = Running::spawn(eval_cmd(d).env("PLEXUS_TEST_PAUSE", point), d.join("1.err"));
        wait_paused(&mut run, point);
        kill(run.pid(), Signal::SIGKILL).expect("SIGKILL");
        run.wait(Duration::from_secs(10));
        let calls = count(d, "SELECT COUNT(*) FROM invocations");
        assert_eq!(calls, 12, "{ctx}: every sample was asked once");
        let finished = count(d, "SELECT COUNT(*) FROM evals WHERE status = 'finished'");
        // Stored as finished only once the tree was whole.
        assert_eq!(finished, i64::from(point == "eval-end:finished"), "{ctx}");
        let o = output(&mut eval_cmd(d));
        assert_eq!(o.code, Some(0), "{ctx}: {}", o.stderr);
        let said = if finished == 1 {
            "the same command finished it already"
        } else {
            "continuing it"
        };
        assert!(o.stderr.contains(said), "{ctx}: {}", o.stderr);
        assert_eq!(
            count(d, "SELECT COUNT(*) FROM invocations"),
            calls,
            "{ctx}: no model call"
        );
        assert_eq!(count(d, "SELECT COUNT(*) FROM evals"), 1, "{ctx}: one eval");
        assert_whole(d, &ctx);
    }
}

#[test]
fn a_tree_that_cannot_be_written_leaves_the_eval_unfinished_until_the_same_command_writes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    fixture(d);
    // A folder of the tree that cannot be made (a file stands in its place), as a full
    // disk under the tree would refuse it.
    let traces = d.join("tree/execution_outputs/iteration_1/execution_traces");
    std::fs::create_dir_all(traces.parent().expect("parent")).expect("mkdir");
    std::fs::write(&traces, "in the way").expect("block the folder");
    let o = output(&mut eval_cmd(d));
    assert_ne!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("its results are stored, but its failure tree could not be written"),
        "{}",
        o.stderr
    );
    assert_eq!(
        count(d, "SELECT COUNT(*) FROM evals WHERE status = 'finished'"),
        0
    );
    let calls = count(d, "SELECT COUNT(*) FROM invocations");
    // The folder freed, the same command completes the tree from the database.
    std::fs::remove_file(&traces).expect("free the folder");
    let o = output(&mut eval_cmd(d));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        count(d, "SELECT COUNT(*) FROM invocations"),
        calls,
        "no model call"
    );
    assert_eq!(
        count(d, "SELECT COUNT(*) FROM evals WHERE status = 'finished'"),
        1
    );
    assert_whole(d, "after the folder was freed");
}

#[test]
fn a_finished_eval_whose_tree_lost_its_end_gets_it_back_from_the_same_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    fixture(d);
    let o = output(&mut eval_cmd(d));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let calls = count(d, "SELECT COUNT(*) FROM invocations");
    // As a build that stored `finished` before the tree's end left it when killed, and
    // some sample documents lost too.
    let it = d.join("tree/execution_outputs/iteration_1");
    std::fs::remove_file(it.join("layer1_problems_report.json")).expect("rm");
    std::fs::remove_file(it.join("failure_summary.json")).expect("rm");
    let trace = std::fs::read_dir(it.join("execution_traces"))
        .expect("traces")
        .flatten()
        .next()
        .expect("a trace")
        .path();
    std::fs::remove_file(&trace).expect("rm");
    let o = output(&mut eval_cmd(d));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("its failure tree under tree is completed from the database"),
        "{}",
        o.stderr
    );
    assert_eq!(
        count(d, "SELECT COUNT(*) FROM invocations"),
        calls,
        "no model call"
    );
    assert_eq!(
        count(d, "SELECT COUNT(*) FROM evals"),
        1,
        "no second iteration"
    );
    assert_whole(d, "a finished eval's tree completed");
}
