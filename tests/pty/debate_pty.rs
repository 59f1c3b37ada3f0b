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
    // The question names the session (cut to the column at 110 columns).
    s.wait_for("debate: Plan a product", 20);
    s.send("\r");
    s.wait_for("Similarity", 20);
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

/// Gives the terminal `cols` x `rows`: the emulator first, then the pseudo-terminal (the
/// program redraws whole on the change).
fn resize(s: &Session, cols: u16, rows: u16) {
    s.parser
        .lock()
        .expect("parser")
        .screen_mut()
        .set_size(rows, cols);
    s.master
        .resize(portable_pty::PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("resize");
    std::thread::sleep(std::time::Duration::from_millis(300));
}

/// The text inside the pane whose top border starts with `title`, row by row.
fn pane(screen: &str, title: &str) -> Vec<String> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let Some((top, left)) = lines.iter().enumerate().find_map(|(i, l)| {
        let s: String = l.iter().collect();
        s.find(&format!("╭ {title}"))
            .map(|b| (i, s[..b].chars().count()))
    }) else {
        panic!("no pane {title:?}:\n{screen}");
    };
    let right = (left + 1..lines[top].len())
        .find(|&j| lines[top][j] == '╮')
        .expect("the pane's right corner");
    lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) != Some(&'╰'))
        .map(|l| {
            l.get(left + 1..right.min(l.len()))
                .unwrap_or_default()
                .iter()
                .collect()
        })
        .collect()
}

/// Every word of `rows` (letters only, three or more) is one of `known`: none is cut.
fn assert_no_word_cut(rows: &[String], known: &str, screen: &str) {
    let known: std::collections::BTreeSet<String> = known
        .split(|c: char| !c.is_alphabetic())
        .map(str::to_lowercase)
        .collect();
    for row in rows {
        for w in row.split(|c: char| !c.is_alphabetic()) {
            if w.chars().count() >= 3 {
                assert!(
                    known.contains(&w.to_lowercase()),
                    "{w:?} is a cut word in {row:?}:\n{screen}"
                );
            }
        }
    }
}

/// The words the planner and the critic wrote in round 1 (from `show --json`), and the
/// pane's own labels.
fn round_one_words(dir: &std::path::Path, db: &str) -> String {
    let show = output(plexus(dir).args(["--db", db, "show", "latest", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
    let mut words = String::from(
        "planner critic valid confidence first position reasons assumes added changed \
         unchanged round answering tokens cancelled",
    );
    for o in v["debate_session"]["history"][0]["outputs"]
        .as_array()
        .expect("round 1")
    {
        words.push(' ');
        words.push_str(&o["metadata"]["position"].to_string());
    }
    words
}

/// Starts a slow simulated debate about a software change at `cols` x `rows`.
fn slow_debate(dir: &std::path::Path, db: &str, cols: u16, rows: u16) -> Session {
    let s = Session::start(
        &[
            "--db",
            db,
            "debate",
            "How should we migrate the billing database to Postgres?",
            "--chunk-ms",
            "120",
        ],
        dir,
    );
    resize(&s, cols, rows);
    s
}

#[test]
fn at_120x40_the_debate_streams_the_answer_and_cuts_no_word() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = slow_debate(dir.path(), "w.db", 120, 40);
    // The answering agent's text as it streams, with its time and tokens.
    let live = s.wait_for(" tokens", 20);
    assert!(live.contains("answering ·"), "{live}");
    s.wait_for("\"agent_id\"", 20);
    // Round 1, decided: the planner's pane holds whole words only.
    s.wait_for("1 cont", 40);
    s.send("h");
    let screen = s.wait_for("planner · round 1", 10);
    let planner = pane(&screen, "planner · round 1");
    assert!(
        planner.iter().all(|r| r.chars().count() >= 36),
        "the planner's pane is too narrow:\n{screen}"
    );
    let critic = pane(&screen, "critic · round 1");
    // The talk is about the question, not an exam.
    assert!(!screen.contains("mock test"), "{screen}");
    // Back to the live round, then stop: the turn under way reads cancelled.
    s.send("l");
    s.send("c");
    s.wait_for("Stop the debate?", 10);
    s.send("y");
    let stopped = s.wait_for("– cancelled", 20);
    assert!(!stopped.contains("unreadable"), "{stopped}");
    let st = s.quit();
    assert!(st.success() || st.exit_code() == 3, "{st:?}");
    s.assert_restored();
    let known = round_one_words(dir.path(), "w.db");
    assert_no_word_cut(&planner, &known, &screen);
    assert_no_word_cut(&critic, &known, &screen);
}

#[test]
fn at_80x24_the_debate_streams_the_answer_and_cuts_no_word() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = slow_debate(dir.path(), "n.db", 80, 24);
    let live = s.wait_for(" tokens", 20);
    assert!(live.contains("answering ·"), "{live}");
    s.wait_for("\"agent_id\"", 20);
    s.wait_for("1 cont", 40);
    s.send("h");
    let screen = s.wait_for("Positions · round 1", 10);
    let rows = pane(&screen, "Positions · round 1");
    let st = s.quit();
    assert!(st.success() || st.exit_code() == 3, "{st:?}");
    s.assert_restored();
    assert_no_word_cut(&rows, &round_one_words(dir.path(), "n.db"), &screen);
}
