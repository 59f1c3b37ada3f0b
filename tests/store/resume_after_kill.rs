//! Kill -9 of the real binary mid-run, then `plexus resume`: no task that had finished
//! is invoked again, the run completes, and the log records the crash and the resume.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use plexus::data::store::Store;
use plexus::dev::gen_plan::{generate, GenSpec};
use plexus::model::event::EngineEvent;

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
        store.stored_run_status(&run_id).expect("run"),
        "running",
        "a killed run's row is left as its process wrote it"
    );
    assert_eq!(
        store.run(&run_id).expect("run").status,
        "interrupted",
        "a killed run reads interrupted: its owner is gone"
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
    // Crashed, then resumed: the resume's process started from the log (no snapshot
    // at the crash) and stored the end; it equals the log's fold.
    crate::common::snapshots::assert_snapshot_matches_log(&db, &run_id, true);

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

use crate::common;

use common::bin::{plexus, Running};

/// Invocation started events of a run, as (invocation id, task id).
fn started_calls(store: &Store, run: &str) -> Vec<(String, String)> {
    store
        .events(run, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .filter(|e| matches!(e.event, Ok(EngineEvent::InvocationStarted(_))))
        .map(|e| {
            (
                e.invocation_id.expect("an invocation id"),
                e.task_id.expect("a task id"),
            )
        })
        .collect()
}

/// Calls of the run so far (invocation_started events).
fn calls_so_far(db: &std::path::Path, run: &str) -> usize {
    Store::open(db)
        .map(|s| started_calls(&s, run).len())
        .unwrap_or(0)
}

/// Kills `p` with SIGKILL and reaps it (a dead child that is not reaped still owns its
/// pid, and the lease with it).
fn kill_9(p: &mut Running) {
    let _ = p.child.kill();
    let _ = p.child.wait();
}

/// A run killed with `kill -9` and resumed at once, twenty times over: every resume
/// starts (no id taken twice, whatever the timing), the run ends `success`, no
/// invocation id names two tasks, and each call in flight at a kill is closed as lost,
/// its tokens counted, and shown as such by `show` and `failures`.
#[test]
fn kill_9_and_resume_at_once_twenty_times_loses_nothing_and_never_reuses_an_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("k.db");
    let plan = common::bin::gen_plan(dir.path(), 120, 8);
    let db_arg = db.to_str().expect("utf8").to_string();
    let pace = ["--chunk-ms", "20", "--first-chunk-ms", "40"];
    let mut current = Running::spawn(
        plexus(dir.path())
            .args(["--db", &db_arg, "run", "--concurrency", "8", "--headless"])
            .arg(&plan)
            .args(pace),
        dir.path().join("run.err"),
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let run_id = loop {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(20));
        let Some(id) = Store::open(&db)
            .ok()
            .and_then(|s| s.list_runs().ok())
            .and_then(|r| r.first().map(|r| r.run_id.clone()))
        else {
            continue;
        };
        if calls_so_far(&db, &id) >= 4 {
            break id;
        }
    };
    for round in 0..20 {
        // Some progress since this process started, then kill it mid-flight.
        let before = calls_so_far(&db, &run_id);
        let until = Instant::now() + Duration::from_secs(60);
        while calls_so_far(&db, &run_id) < before + 2 {
            if !current.running() {
                break;
            }
            assert!(Instant::now() < until, "round {round}: no progress");
            std::thread::sleep(Duration::from_millis(5));
        }
        if let Some(status) = current.child.try_wait().expect("try_wait") {
            // It got to the end before the kill: it must have succeeded.
            assert!(
                status.success(),
                "round {round}: the process failed: {}",
                current.stderr()
            );
            break;
        }
        kill_9(&mut current);
        // Resume at once.
        current = Running::spawn(
            plexus(dir.path()).args(["--db", &db_arg, "resume", &run_id, "--headless"]),
            dir.path().join(format!("resume-{round}.err")),
        );
    }
    let status = current.wait(Duration::from_secs(180));
    assert!(
        status.success(),
        "the last resume failed: {}",
        current.stderr()
    );
    let last_err = current.stderr();
    assert!(!last_err.contains("UNIQUE"), "{last_err}");
    // Progress lines go on counting from what was done: the first `[k/N]` of the last
    // resume is not `[1/N]` again (tasks had finished before it).
    if let Some(first) = last_err.lines().find(|l| l.starts_with('[')) {
        assert!(
            !first.trim_start_matches('[').trim_start().starts_with("1/"),
            "{first}"
        );
    }

    let store = Store::open(&db).expect("store");
    assert_eq!(store.integrity_check().expect("check"), "ok");
    assert_eq!(store.run(&run_id).expect("run").status, "succeeded");
    let tasks = store.tasks(&run_id).expect("tasks");
    assert!(tasks.iter().all(|t| t.status == "success"), "{tasks:?}");
    // No invocation id names two tasks, and none started twice.
    let started = started_calls(&store, &run_id);
    let mut owner: HashMap<&str, &str> = HashMap::new();
    for (inv, task) in &started {
        if let Some(prev) = owner.insert(inv, task) {
            panic!("invocation {inv} started twice (tasks {prev} and {task})");
        }
    }
    // Every call that started was closed: ended, or lost in a crash.
    let rows = store.invocations(&run_id).expect("invocations");
    assert_eq!(rows.len(), started.len(), "every started call has its row");
    let lost: Vec<_> = rows
        .iter()
        .filter(|r| r.status.as_deref() == Some("lost"))
        .collect();
    assert!(!lost.is_empty(), "twenty kills mid-flight lost no call");
    let lost_events = store
        .events(&run_id, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.event {
            Ok(EngineEvent::InvocationLost(l)) => Some((e.invocation_id, l)),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(
        lost_events.len(),
        lost.len(),
        "one invocation_lost per lost row"
    );
    for (inv, l) in &lost_events {
        assert!(l.prompt_tokens > 0, "{inv:?}: its prompt tokens are known");
        assert!(l.reason.contains("lost in a crash"), "{}", l.reason);
    }
    // A lost call counts as an attempt: its task's next call has the next number.
    for r in &lost {
        let later = rows
            .iter()
            .filter(|o| o.task_id == r.task_id && o.attempt > r.attempt)
            .count();
        assert!(
            later > 0,
            "task {} ran again after losing attempt {}",
            r.task_id,
            r.attempt
        );
    }
    drop(store);
    let show = common::bin::output(plexus(dir.path()).args(["--db", &db_arg, "show", &run_id]));
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    assert!(
        show.stdout.contains("calls lost in a crash"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains(&lost[0].invocation_id),
        "{}",
        show.stdout
    );
    let failures = common::bin::output(
        plexus(dir.path()).args(["--db", &db_arg, "failures", &run_id, "--json"]),
    );
    assert_eq!(failures.code, Some(0), "{}", failures.stderr);
    assert!(failures.stdout.contains("\"lost\""), "{}", failures.stdout);
}
