//! The Runs screen and the command line at 80x24 through a pseudo-terminal: `/` filters
//! the runs, each row tells its run apart (time, tasks by outcome, reviews waiting), and
//! Tab on the command line lists the candidates — the real binary, real keys, the screen
//! parsed.

#![cfg(unix)]

use std::path::Path;

use crate::common;

use common::bin::{output, plexus};
use common::pty::Session;

/// Runs the demo headless `n` times into `db`; the run ids, newest first.
fn demo_runs(dir: &Path, db: &str, n: usize) -> Vec<String> {
    for _ in 0..n {
        let out = output(plexus(dir).args(["--db", db, "demo", "--chunk-ms", "0", "--headless"]));
        assert!(out.code.is_some(), "demo: {}", out.stderr);
    }
    let store = plexus::data::store::Store::open(Path::new(db)).expect("store");
    store
        .list_runs()
        .expect("runs")
        .into_iter()
        .map(|r| r.run_id)
        .collect()
}

#[test]
fn slash_filters_the_runs_screen_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db").to_string_lossy().to_string();
    let runs = demo_runs(dir.path(), &db, 2);
    assert_eq!(runs.len(), 2);
    let mut s = Session::start_sized(&["--db", &db, "browse"], dir.path(), 80, 24);
    let screen = s.wait_for(&runs[1], 20);
    assert!(screen.contains(&runs[0]), "{screen}");
    // Each row says how long the run took, its tasks by outcome and the review waiting.
    assert!(screen.contains("✔3"), "{screen}");
    assert!(screen.contains("1 waiting"), "{screen}");
    // `/` and the older run's id suffix: only that run is left.
    let suffix = &runs[1][runs[1].len() - 4..];
    s.send("/");
    s.send(suffix);
    let screen = s.wait_for("1 of 2 runs", 5);
    assert!(screen.contains(&runs[1]), "{screen}");
    assert!(
        !screen.contains(&runs[0]),
        "the filter hides the other run:\n{screen}"
    );
    // Enter keeps the filter; x clears it.
    s.send("\r");
    s.send("x");
    let screen = s.wait_for(&runs[0], 5);
    assert!(screen.contains(&runs[1]), "{screen}");
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

#[test]
fn tab_lists_command_candidates_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db").to_string_lossy().to_string();
    demo_runs(dir.path(), &db, 1);
    let mut s = Session::start_sized(&["--db", &db, "browse"], dir.path(), 80, 24);
    s.wait_for("Runs in this database", 20);
    // `:re` then Tab: the candidates show above the status line.
    s.send(":re");
    s.send("\t");
    let screen = s.wait_for("start with `re`", 5);
    for c in ["retry", "review_queue", "replay_next_failure"] {
        assert!(screen.contains(c), "{c} is not listed:\n{screen}");
    }
    // `:theme ` then Tab: the built-in themes.
    s.send("\x1b");
    s.send(":theme ");
    s.send("\t");
    let screen = s.wait_for("Tab: 3 values", 5);
    for t in ["dark", "light", "high-contrast"] {
        assert!(screen.contains(t), "{t} is not listed:\n{screen}");
    }
    // A key other than Tab closes the list; the one candidate left is completed.
    s.send("h\t");
    let screen = s.wait_for(":theme high-contrast", 5);
    assert!(!screen.contains("Tab: 3 values"), "{screen}");
    s.send("\r");
    s.wait_for("theme high-contrast", 5);
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}
