//! End to end through a pseudo-terminal: the real binary, real keys, the screen parsed by
//! a VT emulator. One test walks the demo (select, help, screens, quit) and checks the
//! terminal is restored; another quits mid-run and resumes the run headless.

#![cfg(unix)]

use crate::common;

use std::time::{Duration, Instant};

use common::pty::Session;

#[test]
fn demo_walkthrough_in_a_pty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start(&["--db", &db_s, "demo", "--chunk-ms", "40"], dir.path());
    s.wait_for("Plan DAG", 20);
    // The status bar names the provider once the run has started.
    let screen = s.wait_for("│ simulated │", 20);
    assert!(
        screen.contains("Token budget") && screen.contains("Quality"),
        "{screen}"
    );
    // The first task is selected; j moves to the next layer.
    s.wait_for("Output · TASK_VAULT_CHECK_01", 10);
    s.send("j");
    s.wait_for("Output · TASK_SCHOLAR_DIFF_01", 5);
    s.send("k");
    s.wait_for("Output · TASK_VAULT_CHECK_01", 5);
    s.send("j");
    // Help lists the keys; Esc closes it.
    s.send("?");
    let help = s.wait_for("Keys (rebind", 5);
    assert!(help.contains("Failures screen"), "{help}");
    s.send("\x1b");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!s.screen().contains("Keys (rebind"), "help did not close");
    // Screens.
    s.send("2");
    s.wait_for("atoms ·", 5);
    s.send("3");
    s.wait_for("Runs in this database", 5);
    s.wait_for("AVP_E2E", 5);
    s.send("1");
    s.wait_for("Plan DAG", 5);
    // Let the demo finish (awaiting review: its validator stops for a person), then
    // quit (asked first, since a review waits).
    s.wait_for("awaiting review", 60);
    std::thread::sleep(Duration::from_millis(500));
    let st = s.quit();
    assert_eq!(
        st.exit_code(),
        6,
        "exit status {st:?}; screen:\n{}",
        s.screen()
    );
    s.assert_restored();
    let after = s.screen();
    assert!(
        after.contains("run R"),
        "summary printed after the UI:\n{after}"
    );

    // Browse the database: the Runs screen lists the demo; Enter opens it read-only, as
    // a replay standing at its last event.
    let mut b = Session::start(&["--db", &db_s, "browse"], dir.path());
    b.wait_for("Runs in this database", 10);
    b.wait_for("awaiting", 10);
    b.send("\r");
    b.wait_for("(read-only)", 10);
    // The run's tasks show once its log is read (the Runs screen no longer says
    // `(read-only)` before a run is open).
    let opened = b.wait_for("TASK_CRITIC_DIFF_01", 10);
    assert!(opened.contains("Plan DAG"), "{opened}");
    b.send("p");
    b.wait_for("at the end", 5);
    let st = b.quit();
    assert!(st.success());
    b.assert_restored();
}

#[test]
fn sigterm_restores_the_terminal_and_leaves_the_run_resumable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let s = Session::start(
        &[
            "--db",
            &db_s,
            "demo",
            "--faults",
            "none",
            "--chunk-ms",
            "60",
        ],
        dir.path(),
    );
    s.wait_for("running", 20);
    let mut s = s;
    let pid = s.child.process_id().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("kill");
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("wait") {
            break st;
        }
        assert!(
            Instant::now() < end,
            "no exit after SIGTERM:\n{}",
            s.screen()
        );
        std::thread::sleep(Duration::from_millis(30));
    };
    std::thread::sleep(Duration::from_millis(200));
    s.assert_restored();
    assert_eq!(status.exit_code(), 3, "{}", s.screen());
    let store = plexus::data::store::Store::open(&db).expect("store");
    assert_eq!(store.run("latest").expect("run").status, "interrupted");
}

#[test]
fn quit_mid_run_then_resume_headless() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start(
        &[
            "--db",
            &db_s,
            "demo",
            "--faults",
            "none",
            "--chunk-ms",
            "60",
        ],
        dir.path(),
    );
    s.wait_for("Plan DAG", 20);
    // Mid-run: the first task is streaming.
    s.wait_for("running", 20);
    std::thread::sleep(Duration::from_millis(400));
    let st = s.quit();
    s.assert_restored();
    assert_eq!(
        st.exit_code(),
        3,
        "an interrupted run exits 3; screen:\n{}",
        s.screen()
    );
    assert!(
        s.screen().contains("resume with: plexus --db "),
        "{}",
        s.screen()
    );
    let store = plexus::data::store::Store::open(&db).expect("store");
    let run = store.run("latest").expect("run");
    assert_eq!(run.status, "interrupted");
    drop(store);
    // Resume headless (not a terminal) to the end.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args([
            "--db",
            &db_s,
            "resume",
            "latest",
            "--headless",
            "--chunk-ms",
            "0",
        ])
        .args(["--first-chunk-ms", "0"])
        .current_dir(dir.path())
        .output()
        .expect("resume");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed:\n{err}");
    let result = String::from_utf8_lossy(&out.stdout);
    assert!(result.contains("succeeded"), "{result}");
    let store = plexus::data::store::Store::open(&db).expect("store");
    let run = store.run("latest").expect("run");
    assert_eq!(run.status, "succeeded");
    for t in store.tasks(&run.run_id).expect("tasks") {
        assert_eq!(t.status, "success", "task {} ended {}", t.task_id, t.status);
    }
}

#[test]
fn a_broken_config_stops_a_run_on_a_terminal_as_it_does_headless() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A misspelt table, which plexus used to keep without a word.
    std::fs::write(
        dir.path().join("bad.toml"),
        "[ui]\ntheme = \"dark\"\n[provders.local]\nkind = \"openai\"\n",
    )
    .expect("config");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start(
        &[
            "--db", &db_s, "--config", "bad.toml", "demo", "--faults", "none",
        ],
        dir.path(),
    );
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("wait") {
            break st;
        }
        assert!(Instant::now() < end, "no exit:\n{}", s.screen());
        std::thread::sleep(Duration::from_millis(30));
    };
    let screen = s.wait_for("bad.toml:3", 5);
    assert!(screen.contains("unknown key `provders`"), "{screen}");
    assert_eq!(status.exit_code(), 1, "{screen}");
    s.assert_restored();
    assert!(!db.exists(), "nothing ran");
}

/// The `event N/M` the status bar (the last line) shows.
fn position(screen: &str) -> (u64, u64) {
    let bar = screen.lines().last().unwrap_or("");
    for (at, _) in bar.match_indices("event ") {
        let rest = &bar[at + "event ".len()..];
        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Some(after) = rest[n.len()..].strip_prefix('/') else {
            continue;
        };
        let m: String = after.chars().take_while(char::is_ascii_digit).collect();
        if let (Ok(n), Ok(m)) = (n.parse(), m.parse()) {
            return (n, m);
        }
    }
    panic!("no `event N/M` in the status bar: {bar}");
}

#[test]
fn replay_plays_pauses_steps_both_ways_seeks_and_changes_speed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let db_s = db.to_string_lossy().to_string();
    std::fs::write(dir.path().join("none.toml"), "").expect("config");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir.path())
        .args(["--db", &db_s, "demo", "--chunk-ms", "5", "--headless"])
        .env_remove("PLEXUS_DB")
        .env("PLEXUS_CONFIG", dir.path().join("none.toml"))
        .output()
        .expect("demo");
    // The demo ends awaiting review: its validator stops for a person (E007).
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    let mut s = Session::start(&["--db", &db_s, "replay", "latest", "--paused"], dir.path());
    let screen = s.wait_for("event 1/", 20);
    let (_, total) = position(&screen);
    assert!(total > 50, "{screen}");
    assert!(screen.contains("❚❚"), "opens paused: {screen}");
    // Step forward twice, back once.
    s.send(".");
    s.wait_for("event 2/", 5);
    s.send(".");
    s.wait_for("event 3/", 5);
    s.send(",");
    s.wait_for("event 2/", 5);
    // Jumps to the next task start and the next failure: where the log says they are.
    let marks = {
        let store = plexus::data::store::Store::open(&db).expect("store");
        let run = store.run("latest").expect("run").run_id;
        let mut m = plexus::data::replay::marks::Marks::default();
        for e in store.events(&run, 1, total).expect("events") {
            let event = e.event.expect("decodes");
            m.add(&plexus::model::event::Envelope {
                run_id: run.as_str().into(),
                seq: e.seq,
                ts: e.ts,
                task_id: e.task_id.map(Into::into),
                invocation_id: e.invocation_id.map(Into::into),
                agent: e.agent.map(Into::into),
                event,
            });
        }
        m
    };
    use plexus::data::replay::marks::Dir;
    let start = marks.start(2, Dir::Forward).expect("a task start").seq;
    s.send("}");
    s.wait_for(&format!("event {start}/{total}"), 5);
    let failure = marks.failure(start, Dir::Forward).expect("a failure").seq;
    s.send(")");
    s.wait_for(&format!("event {failure}/{total}"), 5);
    match marks.failure(failure, Dir::Back).map(|m| m.seq) {
        Some(b) => {
            s.send("(");
            s.wait_for(&format!("event {b}/{total}"), 5);
            s.send(")");
            s.wait_for(&format!("event {failure}/{total}"), 5);
        }
        None => {
            s.send("(");
            s.wait_for("no earlier failure", 5);
        }
    }
    // Speed.
    s.send("+");
    s.wait_for("speed ×2", 5);
    s.send("-");
    s.send("-");
    s.wait_for("speed ×0.5", 5);
    s.send("+");
    s.wait_for("speed ×1", 5);
    // Play: the position moves on; pause: it stops.
    s.send(" ");
    s.wait_for("▶ ×1", 5);
    let end = Instant::now() + Duration::from_secs(20);
    while position(&s.screen()).0 <= failure + 3 {
        assert!(
            Instant::now() < end,
            "playing did not move:\n{}",
            s.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s.send(" ");
    s.wait_for("❚❚", 5);
    let paused_at = position(&s.screen()).0;
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(position(&s.screen()).0, paused_at, "paused means paused");
    // Seek to 50%, to the start and to the end.
    s.send("#");
    s.wait_for("seek to", 5);
    s.send("50%\r");
    let half = (total as f64 * 0.5).round() as u64;
    s.wait_for(&format!("event {half}/{total}"), 5);
    s.send("<");
    s.wait_for(&format!("event 1/{total}"), 5);
    s.send(">");
    let screen = s.wait_for(&format!("event {total}/{total}"), 5);
    assert!(
        screen.contains("awaiting review"),
        "the demo waits for review: {screen}"
    );
    // Help lists the transport (at its end).
    s.send("?");
    s.wait_for("Keys (rebind", 5);
    s.send("G");
    let help = s.wait_for("replay: one event back", 5);
    assert!(help.contains("replay: seek to"), "{help}");
    s.send("\x1b");
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

#[test]
fn replay_without_paused_plays_with_no_key_pressed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let db_s = db.to_string_lossy().to_string();
    std::fs::write(dir.path().join("none.toml"), "").expect("config");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir.path())
        .args(["--db", &db_s, "demo", "--chunk-ms", "50", "--headless"])
        .env_remove("PLEXUS_DB")
        .env("PLEXUS_CONFIG", dir.path().join("none.toml"))
        .output()
        .expect("demo");
    // With slow chunks the validator's first attempt may time out and its retry pass:
    // the demo then succeeds instead of waiting for review. Either is a run to replay.
    assert!(matches!(out.status.code(), Some(0 | 6)), "{out:?}");
    let s = Session::start(
        &["--db", &db_s, "replay", "latest", "--speed", "0.25"],
        dir.path(),
    );
    // No key pressed: the position moves on by itself, and the hint offers a pause.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut first: Option<u64> = None;
    loop {
        let screen = s.screen();
        let bar = screen.lines().last().unwrap_or("").to_string();
        if bar.contains("event ") {
            let (now, total) = position(&screen);
            if total > 0 {
                let at = *first.get_or_insert(now);
                if now > at && screen.contains("space pause") {
                    assert!(!bar.contains("❚❚"), "playing, not paused: {bar}");
                    break;
                }
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the replay did not play from event {first:?}: {screen}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The demo run headless at full speed into a fresh database, to replay: (its folder,
/// the database, its path as text, what the demo printed).
fn demo_logged() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    String,
    common::bin::Out,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let db_s = db.to_string_lossy().to_string();
    let out = common::bin::output(common::bin::plexus(dir.path()).args([
        "--db",
        &db_s,
        "demo",
        "--chunk-ms",
        "0",
        "--headless",
    ]));
    (dir, db, db_s, out)
}

#[test]
fn replay_failure_jumps_select_and_name_the_failed_task_at_80x24() {
    let (dir, db, db_s, out) = demo_logged();
    assert!(out.code.is_some(), "demo: {}", out.stderr);
    // Where the log says the failures are, and whose they are.
    let marks = {
        let store = plexus::data::store::Store::open(&db).expect("store");
        let run = store.run("latest").expect("run").run_id;
        let (last, _) = store.last_event(&run).expect("last");
        let mut m = plexus::data::replay::marks::Marks::default();
        for e in store.events(&run, 1, last).expect("events") {
            m.add(&plexus::model::event::Envelope {
                run_id: run.as_str().into(),
                seq: e.seq,
                ts: e.ts,
                task_id: e.task_id.map(Into::into),
                invocation_id: e.invocation_id.map(Into::into),
                agent: e.agent.map(Into::into),
                event: e.event.expect("decodes"),
            });
        }
        m
    };
    use plexus::data::replay::marks::Dir;
    let first = marks.failure(0, Dir::Forward).expect("a failure").clone();
    // The next failure of another task than the first one's.
    let mut other = marks
        .failure(first.seq, Dir::Forward)
        .expect("another")
        .clone();
    let mut presses = 2;
    while other.task == first.task {
        other = marks
            .failure(other.seq, Dir::Forward)
            .expect("another task's")
            .clone();
        presses += 1;
    }
    let task = other.task.clone().expect("a task's failure");
    let mut s = Session::start_sized(
        &["--db", &db_s, "replay", "latest", "--paused"],
        dir.path(),
        80,
        24,
    );
    s.wait_for("event 1/", 20);
    for _ in 0..presses {
        s.send(")");
    }
    s.wait_for(&format!("event {}/", other.seq), 10);
    // The failed task is selected: the output pane is its.
    s.wait_for(&format!("Output · {task}"), 10);
    // And named: the message (kept in the log) says which task and what failed.
    s.send("M");
    s.wait_for(&format!("{task} · {}", other.what), 5);
    s.send("\x1b");
    // `}` goes to the next task start, and names it too.
    let start = marks
        .start(other.seq, Dir::Forward)
        .expect("a later start")
        .clone();
    s.send("}");
    s.wait_for(&format!("event {}/", start.seq), 10);
    let started = start.task.clone().expect("a task's start");
    s.wait_for(&format!("Output · {started}"), 10);
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

/// One stop per failure: in a replay of the demo, whose validator stops for review
/// (E007) and blocks its dependent, `)` stops once at the validator (its failed
/// attempt), not again at its failed end nor twice more at the blocked task (it took
/// four presses, two of them both `task blocked`).
#[test]
fn replay_stops_once_per_failure_at_200x50() {
    let (dir, _db, db_s, out) = demo_logged();
    assert_eq!(out.code, Some(6), "demo: {}", out.stderr);
    let mut s = Session::start_sized(
        &["--db", &db_s, "replay", "latest", "--paused"],
        dir.path(),
        200,
        50,
    );
    s.wait_for("event 1/", 20);
    let mut at = 1;
    let mut stops = 0;
    loop {
        assert!(stops < 20, "no end to the failures:\n{}", s.screen());
        s.send(")");
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let moved = loop {
            let screen = s.screen();
            if screen.contains("no later failure") {
                break false;
            }
            let (n, _) = position(&screen);
            if n != at {
                at = n;
                break true;
            }
            assert!(
                std::time::Instant::now() < end,
                "`)` did nothing:\n{screen}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        if !moved {
            break;
        }
        stops += 1;
    }
    // Every stop's message is kept: the validator's is there once, as its E007.
    s.send("M");
    let messages = s.wait_for("Messages", 5);
    let validator: Vec<&str> = messages
        .lines()
        .filter(|l| l.contains("TASK_VALIDATOR_DIFF_01 ·") && !l.contains("Output ·"))
        .collect();
    assert_eq!(validator.len(), 1, "{stops} stops:\n{messages}");
    assert!(validator[0].contains("E007"), "{messages}");
    assert!(!messages.contains("task blocked"), "{messages}");
    s.send("\x1b");
    s.quit();
    s.assert_restored();
}
