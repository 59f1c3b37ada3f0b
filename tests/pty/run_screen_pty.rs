//! The Run screen in a pseudo-terminal: the clock keeps moving while the run is paused,
//! follow mode moves the selection to where the work is, the hints change when the run
//! ends, a stalled invocation shows how long it has been quiet, and a tool-using loop's
//! step opens whole at 80x24.

#![cfg(unix)]

use crate::common;

use std::time::Duration;

use common::pty::Session;

/// The status bar (the screen's last non-empty line).
fn status(s: &Session) -> String {
    s.screen()
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_clock_ticks_while_paused_follow_moves_and_hints_change_at_the_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start(&["--db", &db_s, "demo", "--chunk-ms", "25"], dir.path());
    s.wait_for("│ running │", 20);
    assert!(
        s.screen().contains("· follow"),
        "follow is on in a live run:\n{}",
        s.screen()
    );
    // Follow mode: without a key, the selection moves on to later tasks as they run.
    s.wait_for("Output · TASK_SCHOLAR_DIFF_01", 30);
    // Pause: the pause's own clock moves with no key pressed.
    s.send(" ");
    s.wait_for("paused 0:0", 10);
    let first = status(&s);
    std::thread::sleep(Duration::from_millis(2_300));
    let later = status(&s);
    assert_ne!(first, later, "the clock froze while paused");
    assert!(later.contains("│ paused │"), "{later}");
    s.send(" ");
    // The end: the hints offer only what works now.
    s.wait_for("│ awaiting review │", 60);
    std::thread::sleep(Duration::from_millis(400));
    let end = status(&s);
    assert!(
        !end.contains("space pause") && !end.contains("c cancel"),
        "{end}"
    );
    assert!(end.contains("q quit"), "{end}");
    // Moving the selection stops follow mode, F starts it again.
    s.send("k");
    s.wait_for("follow off", 5);
    s.send("F");
    s.wait_for("· follow", 5);
    let st = s.quit();
    assert!(st.success() || st.exit_code() == 6, "{st:?}");
    s.assert_restored();
}

#[test]
fn a_stalled_invocation_shows_its_quiet_time_and_time_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let plan = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/plans/seed000_task_chain.json"
    );
    let mut s = Session::start(
        &[
            "--db",
            &db_s,
            "run",
            plan,
            "--first-chunk-ms",
            "60000",
            "--timeout-scale",
            "10",
        ],
        dir.path(),
    );
    s.wait_for("running", 20);
    let screen = s.wait_for("no output for 1", 25);
    assert!(screen.contains("timeout in"), "{screen}");
    assert!(screen.contains("⏸"), "{screen}");
    let st = s.quit();
    let _ = st;
    s.assert_restored();
}

#[test]
fn ctrl_c_twice_quits_a_command_runs_and_a_click_selects_a_task() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start(&["--db", &db_s, "demo", "--chunk-ms", "60"], dir.path());
    s.wait_for("│ running │", 20);
    // `:goto` selects a task (and stops follow mode).
    s.send(":goto TASK_CODE_DIFF_01\r");
    s.wait_for("Output · TASK_CODE_DIFF_01", 5);
    // A click on a task in the DAG selects it.
    let screen = s.screen();
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("TASK_CRITIC_DIFF_01") && !l.contains("Output"))
        .expect("the critic in the DAG");
    let col = line.find("TASK_CRITIC").expect("col");
    let col = line[..col].chars().count() + 3;
    s.send(&format!(
        "\x1b[<0;{};{}M\x1b[<0;{};{}m",
        col,
        row + 1,
        col,
        row + 1
    ));
    s.wait_for("Output · TASK_CRITIC_DIFF_01", 5);
    // The quit question names how to resume, with this database.
    s.send("\x03");
    let q = s.wait_for("Quit?", 5);
    assert!(q.contains("--db"), "{q}");
    // ctrl-c again quits.
    s.send("\x03");
    let end = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if s.child.try_wait().expect("wait").is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "still running:\n{}",
            s.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s.assert_restored();
    assert!(
        s.screen().contains("--db"),
        "the resume hint names the database:\n{}",
        s.screen()
    );
}

/// A plan whose one task reads a file that is not there, then answers: the scripted
/// model of a mock server on 127.0.0.1 plays it.
fn failing_tool_workspace(dir: &std::path::Path) -> plexus::dev::mock_server::MockServer {
    use plexus::dev::mock_server::{script::Script, MockConfig, MockServer};
    use serde_json::json;
    let answer = json!({"output": {"atoms": [{
        "asset_id": "ATOM_PTY_01", "atom_type": "Note", "category": "Atom_Ops", "confidence": 0.6,
        "content": {"note": "No notes were found on diffusion planners."},
        "data_status": "Verified_Source_Anchored",
        "delta_audit": {"existing_assets": [], "contradiction_marked": false},
        "metadata": {"created_at": "2026-11-27T00:00:00Z", "created_by": "Researcher", "version": "1.0", "tags": ["#ATOM"]},
        "provenance": {"paper_id": "ArXiv:2406.01234", "paper_location": "Page 4, Eq. 1", "atom_path": "/atoms/atom/ATOM_PTY_01.json"}
    }], "summary": "One note."}});
    let script: Script = serde_json::from_value(json!({"turns": [
        {"text": "Thought: I read the notes on diffusion planners first.",
         "tool_calls": [{"name": "file_reader", "arguments": {"path": "notes/missing_diffusion_notes.md"}}]},
        {"text": answer.to_string()}
    ]}))
    .expect("script");
    let server = MockServer::start(
        MockConfig {
            model_script: Some(script),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let plan = json!({
        "plan_id": "PTY_LOOP", "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {"tools": ["file_reader"]}},
        "tasks": [{"task_id": "TASK_READ_01", "agent": "Researcher",
            "instruction": "Read the notes on diffusion planners and say what they claim.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}}]
    });
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n",
            server.url()
        ),
    )
    .expect("config");
    server
}

#[test]
fn enter_on_a_failed_tool_step_shows_its_whole_reason_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _server = failing_tool_workspace(dir.path());
    let mut s = Session::start_sized(
        &[
            "--db",
            "p.db",
            "--config",
            "plexus.toml",
            "run",
            "plan.json",
            "--provider",
            "local",
        ],
        dir.path(),
        80,
        24,
    );
    s.wait_for("│ succeeded │", 60);
    // Enter focuses the output, Enter again opens the loop's newest step.
    s.send("\r");
    s.send("\r");
    let screen = s.wait_for("Step 1 (1/1)", 10);
    // The real reason, not only the observation's first line (`Operation failed.`).
    assert!(screen.contains("Error Message:"), "{screen}");
    assert!(screen.contains("no such file in the"), "{screen}");
    // Esc closes; C lists the loop's conversation with roles and tokens.
    s.send("\x1b");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!s.screen().contains("Step 1 (1/1)"), "{}", s.screen());
    s.send("C");
    let screen = s.wait_for("Conversation · TASK_READ_01", 10);
    assert!(screen.contains("file_reader (error)"), "{screen}");
    assert!(screen.contains("system + user"), "{screen}");
    s.send("\x1b");
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

/// The screen's row `n` (0 is the top).
fn row(s: &Session, n: usize) -> String {
    s.screen().lines().nth(n).unwrap_or("").to_string()
}

#[test]
fn every_prompt_shows_what_is_typed_at_80x24_and_titles_keep_their_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start_sized(
        &["--db", &db_s, "demo", "--chunk-ms", "2"],
        dir.path(),
        80,
        24,
    );
    s.wait_for(" awaiting review │", 60);
    std::thread::sleep(Duration::from_millis(400));
    // The DAG title keeps its counts at 80 columns; the status bar keeps whole keys.
    let title = row(&s, 1);
    assert!(
        title.contains("✔3") && title.contains("?1") && title.contains("⊘1"),
        "{title}"
    );
    let bar = status(&s);
    assert!(bar.contains("? help · q quit"), "{bar}");
    assert!(!bar.contains('…'), "a hint was cut: {bar}");
    // The reason to reject: the label shortens, the text typed shows with its cursor.
    s.send("4");
    s.send("v");
    s.wait_for("Review queue", 5);
    s.send("X");
    s.send("refs to nothing");
    s.wait_for("refs to nothing▏", 5);
    assert!(status(&s).contains("why reject"), "{}", status(&s));
    s.send("\x1b");
    s.send("1");
    // The command line and the search.
    s.send(":goto TASK_CODE");
    s.wait_for(":goto TASK_CODE▏", 5);
    s.send("\x1b");
    s.send("/VALIDATOR");
    s.wait_for("/VALIDATOR▏", 5);
    s.send("\x1b");
    let st = s.quit();
    assert!(st.success() || st.exit_code() == 6, "{st:?}");
    // Browsing: no run is open, so none is said to be starting; then a run opened at
    // its end, and the seek prompt.
    let mut b = Session::start_sized(&["--db", &db_s, "browse"], dir.path(), 80, 24);
    b.wait_for("Runs in this database", 10);
    std::thread::sleep(Duration::from_millis(300));
    let bar = status(&b);
    assert!(bar.contains("no run open"), "{bar}");
    assert!(
        !bar.contains("starting") && !bar.contains("0 tasks"),
        "{bar}"
    );
    b.send("\r");
    b.wait_for("event ", 10);
    b.send("#");
    b.send("40%");
    b.wait_for("40%▏", 5);
    assert!(status(&b).contains("seek to"), "{}", status(&b));
    b.send("\x1b");
    b.quit();
    b.assert_restored();
}

#[test]
fn at_120x40_the_titles_keep_the_counts_and_the_attempt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start_sized(
        &["--db", &db_s, "demo", "--chunk-ms", "2"],
        dir.path(),
        120,
        40,
    );
    s.wait_for(" awaiting review │", 60);
    s.send(":goto TASK_CODE_DIFF_01\r");
    s.wait_for("attempt 3/3", 5);
    s.send("[");
    s.wait_for("attempt 2/3", 5);
    let title = row(&s, 1);
    assert!(
        title.contains("✔3") && title.contains("?1") && title.contains("⊘1"),
        "{title}"
    );
    assert!(!title.contains('…'), "a title was cut: {title}");
    let bar = status(&s);
    assert!(!bar.contains('…'), "{bar}");
    let st = s.quit();
    assert!(st.success() || st.exit_code() == 6, "{st:?}");
}
