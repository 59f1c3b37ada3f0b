//! `plexus debate` in a pseudo-terminal: the real binary opens the Debate screen, the
//! rounds appear as the session goes, the stop key ends it `cancelled`, and a finished
//! session's report is reachable; the terminal is restored each time.

#![cfg(unix)]

use crate::common;

use common::bin::{output, plexus};
use common::pty::Session;

#[test]
fn the_debate_screen_follows_a_live_session_and_the_stop_key_cancels_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Session::start(
        &[
            "--db",
            "p.db",
            "debate",
            "Plan three months of IELTS preparation",
            "--chunk-ms",
            "150",
        ],
        dir.path(),
    );
    s.wait_for("Debate", 20);
    s.wait_for("Similarity", 20);
    // Round 1 is decided while the session goes on.
    s.wait_for("1 cont", 30);
    s.send("c");
    s.wait_for("Stop the debate?", 10);
    s.send("y");
    s.wait_for("cancelled", 20);
    let st = s.quit();
    assert!(st.success() || st.exit_code() == 3, "{st:?}");
    s.assert_restored();
    let show = output(plexus(dir.path()).args(["--db", "p.db", "show", "latest", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
    assert_eq!(v["run"]["status"], "cancelled", "{}", show.stdout);
    assert_eq!(v["debate_session"]["status"], "cancelled");
}

#[test]
fn a_finished_session_shows_its_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Session::start(
        &[
            "--db",
            "f.db",
            "debate",
            "Plan a product launch",
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
        ],
        dir.path(),
    );
    s.wait_for("converged", 30);
    s.wait_for("3 conv", 10);
    s.send("w");
    s.wait_for("Phase 1: groundwork", 10);
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

#[test]
fn browse_follows_a_session_another_process_is_running_and_opens_it_from_the_runs_screen() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A session run by another process, slowly.
    let mut writer = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir.path())
        .args([
            "--db",
            "b.db",
            "debate",
            "Plan a product launch",
            "--headless",
            "--chunk-ms",
            "60",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the session");
    // Wait for its run to exist.
    let start = std::time::Instant::now();
    while output(plexus(dir.path()).args(["--db", "b.db", "runs", "--json"]))
        .stdout
        .trim_start()
        .starts_with("[]")
        || !dir.path().join("b.db").exists()
    {
        assert!(start.elapsed().as_secs() < 20, "the session never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut s = Session::start(&["--db", "b.db", "browse", "latest"], dir.path());
    s.wait_for("Debate", 20);
    // Followed live to its end.
    s.wait_for("converged", 60);
    s.wait_for("3 conv", 10);
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
    assert!(writer.wait().expect("the session ends").success());
    // From the Runs screen: Enter on the session opens the Debate screen.
    let mut s = Session::start(&["--db", "b.db", "browse"], dir.path());
    s.wait_for("debate: Plan a product launch", 20);
    s.send("\r");
    s.wait_for("Similarity", 20);
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}
