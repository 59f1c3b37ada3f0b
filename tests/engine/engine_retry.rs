//! Retrying a failed task from the keyboard: the run is held open after its last task,
//! a retry resets the task and the tasks it blocked, and the run ends again — folded by
//! the same reducer the TUI uses.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::{one_task_plan, quick_sim, test_config};
use plexus::data::provider::{Fault, SimulatedProvider};
use plexus::data::store::{spawn_writer, RunRow, Store, WriteOp};
use plexus::model::event::{EngineEvent, Envelope, RunStatus, TaskStatus};
use plexus::model::plan::parse_plan;
use plexus::model::state::{reduce, RunState};
use plexus::run::engine::{start_run, Control, RunSpec};
use tokio::sync::mpsc::UnboundedReceiver;

/// Reads delivered events until `stop` says so; folds them all.
async fn until(
    rx: &mut UnboundedReceiver<Vec<Arc<Envelope>>>,
    st: &mut RunState,
    log: &mut Vec<Arc<Envelope>>,
    stop: impl Fn(&Envelope) -> bool,
) {
    loop {
        let batch = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("events keep coming")
            .expect("channel open");
        let mut done = false;
        for e in batch {
            reduce(st, &e);
            done |= stop(&e);
            log.push(e);
        }
        if done {
            return;
        }
    }
}

#[tokio::test]
async fn a_failed_task_is_retried_and_unblocks_its_dependents() {
    let plan_json = one_task_plan(
        r#",{"task_id":"B","agent":"Scholar_Internalizer","instruction":"Use A.","depends_on":["A"]},
           {"task_id":"C","agent":"Scholar_Internalizer","instruction":"Use B.","depends_on":["B"]}"#,
    );
    // A's first attempt hits a permanent provider error (E008: not retried by the engine).
    let script = HashMap::from([("A".to_string(), vec![Fault::SystemError, Fault::None])]);
    let mut h = held_run(&plan_json, script).await;
    assert_eq!(h.st.status, Some(RunStatus::Failed));
    assert_eq!(h.st.tasks[0].status, TaskStatus::Failed);
    assert_eq!(h.st.tasks[1].status, TaskStatus::Blocked);
    assert_eq!(h.st.tasks[2].status, TaskStatus::Blocked);

    // Retrying a task that did not fail changes nothing; retrying A reopens the run.
    h.handle
        .control
        .send(Control::Retry("B".into()))
        .expect("send");
    h.handle
        .control
        .send(Control::Retry("A".into()))
        .expect("send");
    h.until_finished().await;
    let st = &h.st;
    assert_eq!(
        st.status,
        Some(RunStatus::Succeeded),
        "notes: {:?}",
        st.notes
    );
    for t in &st.tasks {
        assert_eq!(t.status, TaskStatus::Success, "task {}", t.id);
    }
    assert_eq!(st.tasks[0].attempts, 2, "the retry is attempt 2");
    let resets: Vec<&str> = h
        .log
        .iter()
        .filter(|e| matches!(e.event, EngineEvent::TaskReset(_)))
        .filter_map(|e| e.task_id.as_deref())
        .collect();
    assert_eq!(
        resets,
        vec!["A", "B", "C"],
        "the task and everything it blocked"
    );
    // The reducer's quality totals agree with the engine's final report.
    let Some(EngineEvent::RunFinished(f)) = h
        .log
        .iter()
        .rev()
        .map(|e| &e.event)
        .find(|e| matches!(e, EngineEvent::RunFinished(_)))
    else {
        panic!("no run_finished");
    };
    assert_eq!(st.quality.grades, f.grades);
    assert_eq!(st.quality.atoms(), f.atoms);

    // Quit: the held run ends without a second report.
    let before = h.log.len();
    h.handle.control.send(Control::Interrupt).expect("send");
    let outcome = h.handle.join.await.expect("join").expect("run");
    assert_eq!(outcome.status, RunStatus::Succeeded);
    h.writer_thread.join().expect("writer");
    while let Ok(b) = h.rx.try_recv() {
        h.log.extend(b);
    }
    assert_eq!(h.log.len(), before, "no event after the quit");
    let store = Store::open(&h.db).expect("store");
    assert_eq!(store.run("R").expect("run").status, "succeeded");
    for t in store.tasks("R").expect("tasks") {
        assert_eq!(t.status, "success", "{}", t.task_id);
    }
}

/// A run held open after its first end, with what it delivered so far.
struct Held {
    st: RunState,
    log: Vec<Arc<Envelope>>,
    handle: plexus::run::engine::RunHandle,
    rx: UnboundedReceiver<Vec<Arc<Envelope>>>,
    writer_thread: std::thread::JoinHandle<()>,
    db: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Held {
    /// Folds delivered events until the next `run_finished`.
    async fn until_finished(&mut self) {
        until(&mut self.rx, &mut self.st, &mut self.log, |e| {
            matches!(e.event, EngineEvent::RunFinished(_))
        })
        .await;
    }
}

/// Runs a plan (run id `R`) with the engine holding it open, up to its first end.
async fn held_run(plan_json: &str, script: HashMap<String, Vec<Fault>>) -> Held {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let plan = Arc::new(parse_plan(plan_json, "plan").expect("plan"));
    let mut sim = quick_sim();
    sim.script = script;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let (writer, writer_thread) = spawn_writer(&db, Some(tx)).expect("writer");
    writer
        .send(WriteOp::CreateRun(Box::new(RunRow::for_plan(
            "R",
            &plan,
            "simulated",
            "{}".into(),
        ))))
        .expect("create");
    let mut config = test_config();
    config.hold_open = true;
    let handle = start_run(RunSpec {
        db: None,
        run_id: "R".into(),
        plan,
        provider: Arc::new(SimulatedProvider::new(sim)),
        config,
        writer,
        known_assets: Default::default(),
        resume: None,
    });
    let mut held = Held {
        st: RunState::new(),
        log: Vec::new(),
        handle,
        rx,
        writer_thread,
        db,
        _dir: dir,
    };
    held.until_finished().await;
    held
}

#[tokio::test]
async fn a_child_of_two_failed_tasks_stays_blocked_when_one_is_retried() {
    let plan = one_task_plan(
        r#",{"task_id":"B","agent":"Scholar_Internalizer","instruction":"Other."},
           {"task_id":"C","agent":"Scholar_Internalizer","instruction":"Both.","depends_on":["A","B"]}"#,
    );
    let script = HashMap::from([
        ("A".to_string(), vec![Fault::SystemError, Fault::None]),
        ("B".to_string(), vec![Fault::SystemError]),
    ]);
    let mut h = held_run(&plan, script).await;
    assert_eq!(h.st.tasks[2].status, TaskStatus::Blocked);
    h.handle
        .control
        .send(Control::Retry("A".into()))
        .expect("send");
    h.until_finished().await;
    let (st, log, handle) = (&h.st, &h.log, h.handle);
    assert_eq!(st.tasks[0].status, TaskStatus::Success);
    assert_eq!(st.tasks[2].status, TaskStatus::Blocked, "B still failed");
    assert_eq!(
        st.status,
        Some(RunStatus::Failed),
        "an end, not an interruption"
    );
    let resumed = log.iter().rev().find_map(|e| match &e.event {
        EngineEvent::RunResumed(r) => Some(r.previous_status),
        _ => None,
    });
    assert_eq!(
        resumed,
        Some(RunStatus::Failed),
        "the status before the retry"
    );
    handle.control.send(Control::Interrupt).expect("send");
    let _ = handle.join.await;
}

#[tokio::test]
async fn a_lenient_task_behind_a_blocked_one_still_runs() {
    let plan = one_task_plan(
        r#",{"task_id":"B","agent":"Scholar_Internalizer","instruction":"Strict.","depends_on":["A"]},
           {"task_id":"D","agent":"Scholar_Internalizer","instruction":"Lenient.","depends_on":["B"],
            "fallback_config":{"strategy":"skip"}}"#,
    );
    let script = HashMap::from([("A".to_string(), vec![Fault::SystemError])]);
    let h = held_run(&plan, script).await;
    let (st, handle) = (&h.st, h.handle);
    assert_eq!(st.tasks[1].status, TaskStatus::Blocked);
    assert_eq!(
        st.tasks[2].status,
        TaskStatus::Success,
        "D skips its blocked input"
    );
    assert_eq!(st.status, Some(RunStatus::Failed));
    handle.control.send(Control::Interrupt).expect("send");
    let _ = handle.join.await;
}
