//! The Eval screen end to end through a pseudo-terminal: the fixture eval opened at
//! 80x24 (progress, the check table, failures filtered, a sample's expected and found
//! side by side, its trace, two samples marked for rerun and the handoff written), the
//! marks run again by `eval rerun --samples`; and at 200x60 an eval compared with its
//! parent (the difference per check, the flips, a metadata filter).

#![cfg(unix)]

use std::path::{Path, PathBuf};

use crate::common;

use common::bin::{output, plexus};
use common::pty::Session;

fn fixture(dir: &Path) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    for f in ["arith.eval.json", "answer_plan.json", "arith.jsonl"] {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy fixture");
    }
}

/// Runs the fixture eval to its end; returns its id.
fn fixture_eval(dir: &Path) -> String {
    fixture(dir);
    let o = output(plexus(dir).args([
        "--db",
        "e.db",
        "eval",
        "arith.eval.json",
        "--out",
        "tree",
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
        "--json",
    ]));
    // Six samples miss the `confidence` check: the eval's report exits 0 (its gate is
    // on `format`, which every sample passes).
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    v["eval"]["eval_id"].as_str().expect("id").to_string()
}

/// Every line of the screen fits 80 columns and none is cut mid-word at the edge for
/// the lines that matter: the keys of the next step are on the last line.
#[test]
fn the_eval_screen_at_80x24_filters_opens_marks_and_hands_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let id = fixture_eval(dir.path());
    let mut s = Session::start_sized(&["--db", "e.db", "eval", "open", &id], dir.path(), 80, 24);
    let first = s.wait_for("Samples · 12", 20);
    assert!(first.contains("12/12 (100%)"), "{first}");
    assert!(first.contains("passed 6 · failed 6 · errors 0"), "{first}");
    assert!(first.contains("confidence"), "{first}");
    assert!(
        first.contains("enter open"),
        "the next keys are on the status line:\n{first}"
    );
    // The check table: `format` passes 12 of 12 (interval up to 100), `confidence` 6 of 12.
    let conf = first
        .lines()
        .find(|l| l.contains("confidence"))
        .expect("confidence row");
    assert!(conf.contains("50.0%"), "{conf}");
    // f: failed only — six rows, each missing `confidence`.
    s.send("f");
    let failed = s.wait_for("Samples · 6 of 12", 5);
    let rows: Vec<&str> = failed.lines().filter(|l| l.starts_with("│  q")).collect();
    assert_eq!(rows.len(), 6, "{failed}");
    assert!(rows.iter().all(|l| l.contains("confidence")), "{failed}");
    // Enter: the failing check's expected and found side by side, at its path.
    s.send("\r");
    let detail = s.wait_for("│ found", 10);
    assert!(detail.contains("expected"), "{detail}");
    assert!(detail.contains("✗ confidence"), "{detail}");
    assert!(detail.contains("$.atoms[0].confidence"), "{detail}");
    s.send("2");
    s.wait_for("\"epochs\"", 5);
    s.send("\x1b");
    s.wait_for("Samples · 6 of 12", 5);
    // r marks the selected sample and moves down; twice.
    s.send("r");
    s.send("r");
    let marked = s.wait_for("2 marked", 5);
    assert_eq!(marked.matches('◆').count(), 2, "{marked}");
    // h writes the handoff beside the tree.
    s.send("h");
    s.wait_for("handoff written", 10);
    assert!(dir
        .path()
        .join("tree/execute_to_init_context.json")
        .is_file());
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
    let marks = dir.path().join(format!("tree/rerun_{id}.txt"));
    let ids = std::fs::read_to_string(&marks).expect("the marks file");
    assert_eq!(ids.lines().count(), 2, "{ids}");
    // Opened again, the screen takes the marks back from the file.
    let mut again =
        Session::start_sized(&["--db", "e.db", "eval", "open", &id], dir.path(), 80, 24);
    again.wait_for("2 marked", 20);
    // (A frame may be caught before the list is drawn: wait for its rows.)
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let reopened = loop {
        let screen = again.screen();
        if screen.matches('◆').count() == 2 || std::time::Instant::now() > end {
            break screen;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(reopened.matches('◆').count(), 2, "{reopened}");
    assert!(again.quit().success());
    again.assert_restored();
    assert_eq!(std::fs::read_to_string(&marks).expect("marks"), ids);
    // The marks run again, and only they.
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "rerun",
        &id,
        "--samples",
        &marks.to_string_lossy(),
        "--json",
    ]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let child: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    let run = child["eval"]["run_id"].as_str().expect("run").to_string();
    let conn = rusqlite::Connection::open(dir.path().join("e.db")).expect("db");
    let tasks: Vec<String> = conn
        .prepare("SELECT task_id FROM tasks WHERE run_id = ?1 ORDER BY task_id")
        .expect("prepare")
        .query_map([&run], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let want: Vec<String> = ids.lines().map(|i| format!("{i}/answer")).collect();
    assert_eq!(tasks, want);
}

#[test]
fn the_eval_screen_at_200x60_compares_with_the_parent_and_filters_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parent = fixture_eval(dir.path());
    // A rescore with a looser `confidence`: every sample passes it now.
    std::fs::write(
        dir.path().join("loose.eval.json"),
        std::fs::read_to_string(dir.path().join("arith.eval.json"))
            .expect("spec")
            .replace("\"abs_tol\": 0.1", "\"abs_tol\": 0.3"),
    )
    .expect("write");
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "rescore",
        &parent,
        "--checks",
        "loose.eval.json",
        "--json",
    ]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // `latest`: the rescore, stored after its parent (both may carry the same second).
    let mut s = Session::start_sized(&["--db", "e.db", "eval", "open"], dir.path(), 200, 60);
    let screen = s.wait_for("Samples · 12", 20);
    assert!(
        screen.contains(&format!("iteration 2 vs 1 ({parent})")),
        "{screen}"
    );
    assert!(screen.contains("Δ parent"), "{screen}");
    // `confidence` went from 6 of 12 to 12 of 12 on the same samples: +50 points, six
    // flips up, none down.
    let conf = screen
        .lines()
        .find(|l| l.contains("confidence"))
        .expect("confidence row");
    assert!(conf.contains("100.0%") && conf.contains("+50.0"), "{conf}");
    let cols: Vec<&str> = conf.split_whitespace().collect();
    assert!(
        cols.windows(2).any(|w| w == ["0", "6"]),
        "flips ↓0 ↑6: {conf}"
    );
    // A check where no sample flipped says so, rather than an interval around +0.0.
    assert!(screen.contains("±0 · none flipped"), "{screen}");
    assert!(!screen.contains("+0.0 ["), "{screen}");
    // d: the samples that flipped.
    s.send("d");
    let flips = s.wait_for("Samples · 6 of 12", 5);
    assert!(flips.contains("flipped"), "{flips}");
    s.send("x");
    // A metadata filter.
    s.send("/meta.level=hard\r");
    let n: usize = std::fs::read_to_string(dir.path().join("arith.jsonl"))
        .expect("dataset")
        .lines()
        .filter(|l| l.contains("\"hard\""))
        .count();
    // The filter line says "(reading…)" until the values are read: wait for the list.
    let hard = s.wait_for(&format!("Samples · {n} of 12"), 5);
    assert!(hard.contains("meta.level=hard"), "{hard}");
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

/// `plexus eval FILE` on a terminal: the Eval screen follows the eval as it runs; `q`
/// asks, a second `q` stops it (exit 3, resumable); the same command then finishes it
/// on the screen, and the report is printed once the screen closes.
#[test]
fn an_eval_on_a_terminal_runs_under_the_eval_screen_and_q_stops_it_resumable() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let slow = [
        "--db",
        "e.db",
        "eval",
        "arith.eval.json",
        "--out",
        "tree",
        "--chunk-ms",
        "40",
        "--first-chunk-ms",
        "300",
        "--concurrency",
        "2",
    ];
    let mut s = Session::start_sized(&slow, dir.path(), 80, 24);
    s.wait_for("· running ·", 30);
    // (A frame may be caught half drawn: wait for the list too.)
    s.wait_for("Samples · 12", 10);
    s.send("q");
    // The question says how to go on, whole at 80 columns: the eval's id and database.
    let asked = s.wait_for("q again stops it", 5);
    assert!(
        asked.contains("resume: plexus --db e.db eval resume E"),
        "{asked}"
    );
    let st = s.quit();
    assert_eq!(st.exit_code(), 3, "stopped, resumable:\n{}", s.screen());
    s.assert_restored();
    // After the screen: how it ended, then the report last; not the child's notice of
    // the stop nor its progress lines (printed after the report, they hid it).
    let after = s.wait_for("tree: tree/execution_outputs/iteration_1", 5);
    assert!(!after.contains("SIGINT"), "{after}");
    assert!(!after.contains("samples (0 passed"), "{after}");
    let last = after
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    assert!(
        last.starts_with("tree: "),
        "the report comes last:\n{after}"
    );
    assert!(
        after.contains("resume with: plexus --db e.db eval resume E"),
        "{after}"
    );
    let conn = rusqlite::Connection::open(dir.path().join("e.db")).expect("db");
    let status: String = conn
        .query_row("SELECT status FROM evals", [], |r| r.get(0))
        .expect("status");
    assert_eq!(status, "interrupted");
    // The same command again: it goes on, the screen shows it to its end.
    let fast = [
        "--db",
        "e.db",
        "eval",
        "arith.eval.json",
        "--out",
        "tree",
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
    ];
    let mut s = Session::start_sized(&fast, dir.path(), 80, 24);
    let done = s.wait_for("· finished ·", 60);
    assert!(done.contains("12/12 (100%)"), "{done}");
    let st = s.quit();
    assert!(st.success(), "{st:?}:\n{}", s.screen());
    s.assert_restored();
    // After the screen: the report on the terminal.
    s.wait_for("confidence", 5);
    let evals: i64 = conn
        .query_row("SELECT COUNT(*) FROM evals", [], |r| r.get(0))
        .expect("count");
    assert_eq!(evals, 1, "the same eval, continued");
}
