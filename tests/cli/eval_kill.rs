//! An eval killed with SIGKILL while eight calls are in flight, then the same command
//! again, against a model server written here that counts the questions it is asked:
//! only the calls that were in flight are asked again (one question is held between its
//! call's end and its task's end when the kill lands: it is not asked again), and no
//! task ends with two successful calls.

#![cfg(unix)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::bin::{output, plexus, Running};
use nix::sys::signal::{kill, Signal};

/// Questions in the dataset.
const QUESTIONS: usize = 40;
/// Calls in flight at most.
const CONCURRENCY: usize = 8;

/// A valid answer for question `q`.
fn answer(q: &str) -> String {
    serde_json::json!({
        "atoms": [{
            "asset_id": format!("ATOM_{}_01", q.replace('/', "_")),
            "category": "Atom_Ops",
            "data_status": "Verified_Source_Anchored",
            "atom_type": "knowledge_atoms",
            "confidence": 0.8,
            "metadata": {"created_at": "2026-12-01T00:00:00Z", "created_by": "Scholar_Internalizer", "version": "1.0", "tags": ["#ATOM"]},
            "content": {"answer": 4, "note": "counted on the fingers of both hands"},
            "provenance": {"paper_id": "ArXiv:2406.01234", "paper_location": "Page 1", "atom_path": "/atoms/a.json"},
            "delta_audit": {"existing_assets": [], "contradiction_marked": false}
        }],
        "summary": "the answer"
    })
    .to_string()
}

/// The server: each answer takes a while, so that calls are in flight; counts the
/// requests per task.
fn server() -> (String, crate::common::raw_http::Counts) {
    crate::common::raw_http::counting(Duration::from_millis(150), answer)
}

fn setup(dir: &Path, url: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    for f in ["arith.eval.json", "answer_plan.json"] {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy fixture");
    }
    let data: String = (1..=QUESTIONS)
        .map(|i| {
            format!("{{\"id\": \"q{i}\", \"input\": \"What is {i} + {i}?\", \"expected\": \"{}\", \"metadata\": {{\"level\": \"easy\"}}}}\n", 2 * i)
        })
        .collect();
    std::fs::write(dir.join("arith.jsonl"), data).expect("dataset");
    std::fs::write(
        dir.join("plexus.toml"),
        format!("[providers.raw]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\nstream = false\n"),
    )
    .expect("config");
}

fn eval_cmd(dir: &Path) -> std::process::Command {
    let mut c = plexus(dir);
    c.env("PLEXUS_CONFIG", dir.join("plexus.toml"))
        .args(["--db", "e.db", "eval", "arith.eval.json", "--out", "tree"])
        .args([
            "--provider",
            "raw",
            "--concurrency",
            &CONCURRENCY.to_string(),
        ])
        .args(["--headless"]);
    c
}

fn count(dir: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(dir.join("e.db"))
        .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
        .unwrap_or(0)
}

#[test]
fn a_kill_with_eight_calls_in_flight_asks_again_only_what_was_in_flight() {
    for round in 1..=10 {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let (url, asked) = server();
        setup(d, &url);
        // Somewhere in the middle, with the pool full; one question's call has ended and
        // its task not yet (the process holds it there until the kill).
        let held = format!("q{}", 9 + fastrand::usize(0..16));
        let mut run = Running::spawn(
            eval_cmd(d).env("PLEXUS_TEST_PAUSE", format!("after-call:{held}/answer")),
            d.join("1.err"),
        );
        let paused = format!(
            "{}after-call:{held}/answer",
            plexus::base::pause_point::PAUSED
        );
        let end = Instant::now() + Duration::from_secs(60);
        while !run.stderr().contains(&paused) {
            assert!(
                run.running(),
                "round {round}: ended early: {}",
                run.stderr()
            );
            assert!(Instant::now() < end, "round {round}: {}", run.stderr());
            std::thread::sleep(Duration::from_millis(5));
        }
        kill(run.pid(), Signal::SIGKILL).expect("SIGKILL");
        run.wait(Duration::from_secs(10));
        let o = output(&mut eval_cmd(d));
        assert_eq!(o.code, Some(0), "round {round}: {}", o.stderr);
        let asked = asked.lock().expect("asked").clone();
        assert_eq!(
            asked.len(),
            QUESTIONS,
            "round {round}: every question asked"
        );
        assert_eq!(
            asked.get(&format!("{held}/answer")),
            Some(&1),
            "round {round}: a question whose answer was recorded is not asked again"
        );
        let again: u32 = asked.values().map(|n| n.saturating_sub(1)).sum();
        assert!(
            again as usize <= CONCURRENCY,
            "round {round}: {again} questions asked again, more than the {CONCURRENCY} calls in flight: {asked:?}"
        );
        assert_eq!(
            count(
                d,
                "SELECT COUNT(*) FROM (SELECT task_id FROM invocations WHERE status = 'success'
                 GROUP BY run_id, task_id HAVING COUNT(*) > 1)"
            ),
            0,
            "round {round}: a task with two successful calls"
        );
        assert_eq!(
            count(
                d,
                "SELECT COUNT(*) FROM eval_samples WHERE status = 'pending'"
            ),
            0,
            "round {round}: every sample scored"
        );
    }
}
