//! The moment between a call's end and its task's end, with the real binary against a
//! model server written here: the process is stopped exactly there (`invocation_finished`
//! of the call in the log, `task_finished` of its task not) and killed with SIGKILL; the
//! resume ends the task with the recorded answer and never asks the model again. And a
//! run whose database writer fails mid-way asks the model nothing more, and every call it
//! started is in the log.

#![cfg(unix)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::bin::{output, plexus, sh, Running};
use nix::sys::signal::{kill, Signal};
use plexus::data::store::Store;

/// Two tasks, B after A, both for the Scholar.
const PLAN: &str = r#"{"plan_id":"boundary","tasks":[
  {"task_id":"A","agent":"Scholar_Internalizer","instruction":"Analyse the denoising formula.",
   "output_requirements":{"quality_threshold":"C","max_atoms":3}},
  {"task_id":"B","agent":"Scholar_Internalizer","instruction":"Analyse it again.","depends_on":["A"],
   "output_requirements":{"quality_threshold":"C","max_atoms":3}}
]}"#;

/// A valid answer with one well-anchored atom for `task`.
fn answer(task: &str) -> String {
    serde_json::json!({
        "atoms": [{
            "asset_id": format!("ATOM_{task}_01"),
            "category": "Atom_Ops",
            "data_status": "Verified_Source_Anchored",
            "atom_type": "Math_Atom",
            "confidence": 0.9,
            "metadata": {"created_at": "2026-12-01T00:00:00Z", "created_by": "Scholar_Internalizer", "version": "1.0", "tags": ["#MATH"]},
            "content": {"mathematical_expression": "x_{t-1} = x_t - eps", "physical_intuition": "each step removes a little noise from the sample"},
            "provenance": {"paper_id": "ArXiv:2406.01234", "paper_location": "Section 3.2, Eq. 4", "atom_path": "/atoms/math.json"},
            "delta_audit": {"existing_assets": [], "incremental_value": "the update rule", "contradiction_marked": false}
        }],
        "summary": format!("one atom for {task}")
    })
    .to_string()
}

/// The model server: answers every request validly at once, counting them per task.
fn counting_server() -> (String, crate::common::raw_http::Counts) {
    crate::common::raw_http::counting(Duration::ZERO, answer)
}

/// A config naming the server as the profile `raw` (whole answers, not streamed).
fn config(dir: &Path, url: &str) -> std::path::PathBuf {
    let p = dir.join("plexus.toml");
    std::fs::write(
        &p,
        format!("[providers.raw]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\nstream = false\n"),
    )
    .expect("config");
    p
}

/// Waits until the process says it paused at `point` (or fails with its stderr).
fn wait_paused(run: &mut Running, point: &str) {
    let end = Instant::now() + Duration::from_secs(60);
    let line = format!("{}{point}", plexus::base::pause_point::PAUSED);
    while !run.stderr().contains(&line) {
        assert!(
            run.running(),
            "plexus ended before {point}:\n{}",
            run.stderr()
        );
        assert!(
            Instant::now() < end,
            "no pause at {point}:\n{}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The kinds of the events of task `task` in the log.
fn task_kinds(db: &Path, task: &str) -> Vec<String> {
    let store = Store::open(db).expect("open");
    let mut st = store
        .conn()
        .prepare("SELECT kind FROM execution_logs WHERE task_id = ?1 ORDER BY event_id")
        .expect("query");
    st.query_map([task], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn a_kill_between_a_calls_end_and_its_tasks_end_never_asks_the_model_again() {
    for round in 1..=30 {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::write(d.join("plan.json"), PLAN).expect("plan");
        let (url, counts) = counting_server();
        let cfg = config(d, &url);
        let db = d.join("b.db");
        let mut run = Running::spawn(
            plexus(d)
                .env("PLEXUS_CONFIG", &cfg)
                .env("PLEXUS_TEST_PAUSE", "after-call:A")
                .arg("--db")
                .arg(&db)
                .args(["run", "plan.json", "--provider", "raw", "--headless"]),
            d.join("run.err"),
        );
        wait_paused(&mut run, "after-call:A");
        let kinds = task_kinds(&db, "A");
        assert!(
            kinds.iter().any(|k| k == "invocation_finished")
                && !kinds.iter().any(|k| k == "task_finished"),
            "round {round}: the kill lands between the call's end and the task's end: {kinds:?}"
        );
        kill(run.pid(), Signal::SIGKILL).expect("SIGKILL");
        run.wait(Duration::from_secs(10));
        let run_id = Store::open(&db).expect("open").list_runs().expect("runs")[0]
            .run_id
            .clone();
        let out = output(
            plexus(d)
                .env("PLEXUS_CONFIG", &cfg)
                .arg("--db")
                .arg(&db)
                .args(["resume", &run_id, "--headless"]),
        );
        assert_eq!(out.code, Some(0), "round {round}: {}", out.stderr);
        let counts = counts.lock().expect("counts").clone();
        assert_eq!(
            counts.get("A"),
            Some(&1),
            "round {round}: A was asked again: {counts:?}"
        );
        assert_eq!(counts.get("B"), Some(&1), "round {round}: {counts:?}");
        let store = Store::open(&db).expect("open");
        let (status, attempts, atoms): (String, i64, i64) = store
            .conn()
            .query_row(
                "SELECT status, attempts, atoms FROM tasks WHERE task_id = 'A'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("task A");
        assert_eq!(
            (status.as_str(), attempts, atoms),
            ("success", 1, 1),
            "round {round}"
        );
        let calls: i64 = store
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM invocations WHERE task_id = 'A'",
                [],
                |r| r.get(0),
            )
            .expect("calls");
        assert_eq!(calls, 1, "round {round}: one call of A is stored");
        assert_eq!(store.run(&run_id).expect("run").status, "succeeded");
    }
}

/// Runs `$@` with files limited to `$0` blocks of 512 bytes; SIGXFSZ ignored, so a
/// write past the limit fails (EFBIG) instead of killing the process.
const LIMITED: &str = r#"trap '' XFSZ; ulimit -f "$0"; exec "$@""#;

#[test]
fn a_writer_that_fails_mid_run_stops_the_calls_and_every_call_made_is_in_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // Forty tasks in a chain of layers, each answered at once: the database outgrows the
    // limit within the run.
    let plan = crate::common::bin::gen_plan(d, 40, 4);
    let (url, counts) = counting_server();
    let cfg = config(d, &url);
    let db = d.join("full.db");
    let out = output(
        sh(d, LIMITED)
            .env("PLEXUS_CONFIG", &cfg)
            .arg("1400")
            .arg(crate::common::bin::BIN)
            .arg("--db")
            .arg(&db)
            .args([
                "run",
                "--concurrency",
                "4",
                "--provider",
                "raw",
                "--headless",
            ])
            .arg(&plan),
    );
    assert!(matches!(out.code, Some(c) if c != 0), "{}", out.stderr);
    assert!(
        out.stderr.contains("disk I/O error") || out.stderr.contains("disk is full"),
        "the writer's cause is said: {}",
        out.stderr
    );
    let asked: u32 = counts.lock().expect("counts").values().sum();
    let store = Store::open(&db).expect("open");
    let started: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM execution_logs WHERE kind = 'invocation_started'",
            [],
            |r| r.get(0),
        )
        .expect("starts");
    assert!(asked > 0, "the run got as far as calling the model");
    let finished =
        crate::common::bin::finished_tasks(&store, &store.list_runs().expect("runs")[0].run_id);
    assert!(finished.len() < 40, "the run stopped before its end");
    // Every request the server saw has its start in the log: no call was made whose
    // start could not be recorded, and none after the writer failed (such a request
    // would have no start). A start may have no request: a call whose start was
    // committed and that the failure stopped before it was sent.
    assert!(
        i64::from(asked) <= started,
        "{asked} requests at the server against {started} `invocation_started` in the log"
    );
    // Without the limit, the resume closes the calls the failure left open: no start is
    // without its row.
    let run_id = store.list_runs().expect("runs")[0].run_id.clone();
    drop(store);
    let out = output(
        plexus(d)
            .env("PLEXUS_CONFIG", &cfg)
            .arg("--db")
            .arg(&db)
            .args(["resume", &run_id, "--headless"]),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let open: i64 = Store::open(&db)
        .expect("open")
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM execution_logs e WHERE e.kind = 'invocation_started'
               AND NOT EXISTS (SELECT 1 FROM invocations i WHERE i.invocation_id = e.invocation_id)",
            [],
            |r| r.get(0),
        )
        .expect("open calls");
    assert_eq!(open, 0, "every call started has its row");
}
