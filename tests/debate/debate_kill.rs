//! Debate sessions killed with SIGKILL midway, through the real binary: `plexus debate`
//! at random moments, and `plexus serve` with a session streaming. No session stays
//! `running`: the next read — `runs`, `show`, `GET /api/sessions/ID` of a restarted
//! server — says `interrupted`, because its owner's lease is dead.

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::bin::{output, plexus, Running};
use crate::debate_serve::{exchange, post, serve_with, workdir};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Events of the database's only session so far.
fn events(dir: &Path, db: &str) -> i64 {
    rusqlite::Connection::open(dir.join(db))
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM execution_logs", [], |r| r.get(0)))
        .unwrap_or(0)
}

/// The status `runs --json` and `show --json` give the session, and the session's own.
fn statuses(dir: &Path, db: &str) -> (String, String, String, String) {
    let runs = output(plexus(dir).args(["--db", db, "runs", "--json"]));
    assert_eq!(runs.code, Some(0), "{}", runs.stderr);
    let v: serde_json::Value = serde_json::from_str(&runs.stdout).expect("runs --json");
    let id = v[0]["run_id"].as_str().expect("a session").to_string();
    let listed = v[0]["status"].as_str().unwrap_or_default().to_string();
    let show = output(plexus(dir).args(["--db", db, "show", &id, "--json"]));
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    let s: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
    (
        id,
        listed,
        s["run"]["status"].as_str().unwrap_or_default().to_string(),
        s["multi_agent_session"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn a_debate_killed_at_any_moment_reads_interrupted_in_runs_and_show() {
    let mut interrupted = 0;
    for round in 0..6 {
        let tmp = workdir();
        let dir = tmp.path();
        let mut run = Running::spawn(
            plexus(dir).args([
                "--db",
                "k.db",
                "debate",
                "Should the team adopt a four-day week?",
                "--headless",
                "--chunk-ms",
                "20",
                "--first-chunk-ms",
                "30",
            ]),
            dir.join("debate.err"),
        );
        // A moment somewhere in the session (about ninety events): after 5 to 79 of them.
        let at = 5 + fastrand::i64(0..75);
        let end = Instant::now() + Duration::from_secs(60);
        while events(dir, "k.db") < at && run.running() {
            assert!(Instant::now() < end, "round {round}: {}", run.stderr());
            std::thread::sleep(Duration::from_millis(5));
        }
        if run.running() {
            kill(run.pid(), Signal::SIGKILL).expect("SIGKILL");
        }
        // The kill landed only if the process died of it: a session may end on its own
        // between the check and the signal.
        let killed =
            std::os::unix::process::ExitStatusExt::signal(&run.wait(Duration::from_secs(10)))
                == Some(9);
        let (id, listed, shown, session) = statuses(dir, "k.db");
        let ctx = format!("round {round} (session {id}, killed after {at} events: {killed})");
        assert_ne!(listed, "running", "{ctx}: runs");
        assert_ne!(shown, "running", "{ctx}: show");
        assert_ne!(session, "in_progress", "{ctx}: the session's own status");
        // A kill that lands after the session stored its end (while the process shuts
        // down) leaves that end; any earlier kill leaves the session interrupted.
        let ended = listed == "succeeded" && shown == "succeeded";
        if ended {
            assert_ne!(
                session, "interrupted",
                "{ctx}: an ended session says how it ended"
            );
        }
        if killed && !ended {
            assert_eq!(
                (listed.as_str(), shown.as_str(), session.as_str()),
                ("interrupted", "interrupted", "interrupted"),
                "{ctx}"
            );
            interrupted += 1;
        }
    }
    assert!(interrupted >= 1, "no kill landed mid-session in 6 rounds");
}

#[test]
fn a_session_of_a_killed_server_reads_interrupted_when_the_server_is_back() {
    for round in 0..2 {
        let tmp = workdir();
        let dir = tmp.path();
        let pace = ["--chunk-ms", "200", "--first-chunk-ms", "300"];
        let server = serve_with(dir, "s.db", &pace, &[]);
        let request = r#"{"message": "Plan a week of revision", "mode": "multi_agent"}"#;
        let mut reader = BufReader::new(post(&server, "", request));
        let mut session = String::new();
        let mut line = String::new();
        while !line.starts_with("data: ") {
            line.clear();
            assert!(
                reader.read_line(&mut line).expect("read") > 0,
                "round {round}: stream ended"
            );
            if let Some(id) = line.trim().strip_prefix("X-Plexus-Session: ") {
                session = id.to_string();
            }
        }
        let pid = Pid::from_raw(i32::try_from(server.pid()).expect("a pid"));
        kill(pid, Signal::SIGKILL).expect("SIGKILL");
        drop(server);
        let again = serve_with(dir, "s.db", &[], &[]);
        let (head, body) = exchange(
            again.port(),
            &format!(
                "GET /api/sessions/{session} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                again.host()
            ),
        );
        assert!(
            head.starts_with("HTTP/1.1 200"),
            "round {round}: {head}\n{body}"
        );
        let v: serde_json::Value = serde_json::from_str(&body).expect("a JSON session");
        assert_eq!(v["status"], "interrupted", "round {round}: {body}");
        let (_, listed, shown, _) = statuses(dir, "s.db");
        assert_eq!(
            (listed.as_str(), shown.as_str()),
            ("interrupted", "interrupted")
        );
    }
}
