//! Kill -9 of the real binary mid-run, then `plexus resume`: no task that had finished
//! is invoked again, the run completes, and the log records the crash and the resume.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use plexus::event::EngineEvent;
use plexus::plan::generate::{generate, GenSpec};
use plexus::store::Store;

fn final_tasks(store: &Store, run: &str) -> HashMap<String, i64> {
    let counts: HashMap<String, i64> = store
        .invocation_counts(run)
        .expect("counts")
        .into_iter()
        .collect();
    store
        .tasks(run)
        .expect("tasks")
        .into_iter()
        .filter(|t| {
            matches!(
                t.status.as_str(),
                "success" | "partial" | "failed" | "timeout" | "blocked"
            )
        })
        .map(|t| {
            (
                t.task_id.clone(),
                counts.get(&t.task_id).copied().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn kill_9_mid_run_then_resume_completes_without_reinvoking_finished_tasks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("k.db");
    let plan = dir.path().join("plan.json");
    let spec = GenSpec {
        tasks: 40,
        width: 6,
        fan_in: 2,
        max_atoms: 2,
    };
    std::fs::write(&plan, generate(spec).to_string()).expect("write plan");
    let exe = env!("CARGO_BIN_EXE_plexus");
    let mut child = Command::new(exe)
        .args([
            "--db",
            db.to_str().expect("utf8"),
            "run",
            "--concurrency",
            "4",
        ])
        .arg(&plan)
        .args(["--chunk-ms", "15", "--first-chunk-ms", "10"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn plexus");
    // Wait until some tasks finished and others are in flight, then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(60);
    let run_id = loop {
        assert!(Instant::now() < deadline, "the run made no progress");
        std::thread::sleep(Duration::from_millis(50));
        let Ok(store) = Store::open(&db) else {
            continue;
        };
        let Ok(runs) = store.list_runs() else {
            continue;
        };
        let Some(run) = runs.first() else { continue };
        if final_tasks(&store, &run.run_id).len() >= 8 {
            break run.run_id.clone();
        }
    };
    child.kill().expect("kill -9");
    let status = child.wait().expect("wait");
    assert!(!status.success(), "the process was killed");

    let store = Store::open(&db).expect("store");
    assert_eq!(
        store.run(&run_id).expect("run").status,
        "running",
        "a killed run is left running"
    );
    let before = final_tasks(&store, &run_id);
    assert!(
        before.len() >= 8 && before.len() < 40,
        "killed mid-run: {} finished",
        before.len()
    );
    drop(store);

    let out = Command::new(exe)
        .args(["--db", db.to_str().expect("utf8"), "resume", &run_id])
        .output()
        .expect("resume");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed: {stderr}");
    assert!(stderr.contains("crash detected"), "{stderr}");

    let store = Store::open(&db).expect("store");
    assert_eq!(store.integrity_check().expect("check"), "ok");
    let run = store.run(&run_id).expect("run");
    assert_eq!(run.status, "succeeded");
    let after: HashMap<String, i64> = store
        .invocation_counts(&run_id)
        .expect("counts")
        .into_iter()
        .collect();
    for (task, n) in &before {
        assert_eq!(
            after.get(task),
            Some(n),
            "finished task {task} was invoked again"
        );
    }
    let tasks = store.tasks(&run_id).expect("tasks");
    assert_eq!(tasks.len(), 40);
    assert!(tasks.iter().all(|t| t.status == "success"), "{tasks:?}");
    let events = store.events(&run_id, 1, u64::MAX).expect("events");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seq stays dense across the crash");
    }
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e.event.as_ref().ok().map(EngineEvent::kind))
        .collect();
    let crash = kinds
        .iter()
        .position(|k| *k == "crash_detected")
        .expect("crash logged");
    let resumed = kinds
        .iter()
        .position(|k| *k == "run_resumed")
        .expect("resume logged");
    assert!(crash < resumed);
    assert_eq!(kinds.iter().filter(|k| **k == "run_started").count(), 1);
    assert_eq!(kinds.last(), Some(&"run_finished"));
    // Totals after a resume count the atoms accepted before the crash too.
    let accepted: i64 = tasks.iter().map(|t| t.atoms).sum();
    let finished = events.iter().rev().find_map(|e| match &e.event {
        Ok(EngineEvent::RunFinished(f)) => Some(f.clone()),
        _ => None,
    });
    let finished = finished.expect("run_finished");
    assert_eq!(i64::from(finished.grades.total()), accepted);
    assert_eq!(i64::from(finished.atoms), accepted);
    let without_final: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM tasks WHERE run_id = ?1 AND final_invocation_id IS NULL",
            [&run_id],
            |r| r.get(0),
        )
        .expect("query");
    assert_eq!(
        without_final, 0,
        "every finished task names its final invocation"
    );
}
