//! Human review of hallucinations (E007): a task whose answer refers to assets that do
//! not exist waits in the review queue with its evidence; a person accepts it (its atoms
//! are stored, marked with who and when, and the tasks it blocked run — at once in the
//! process that executes the run, on `plexus resume` otherwise) or rejects it with a
//! reason (nothing runs). Each decision is an event in the log, folded by the reducer
//! and by a replay; a decision is final; a run another live process executes is not
//! decided on from outside (exit 4); bad input is a clear error.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::bin::{output, plexus};
use plexus::cli::launch::{prepare_resume, start, Globals, RunConfig};
use plexus::data::provider::{Fault, SimConfig, SimulatedProvider};
use plexus::data::replay::log::ReplayLog;
use plexus::data::store::{spawn_writer, RunRow, Store, WriteOp};
use plexus::model::event::{EngineEvent, Envelope, RunStatus, TaskStatus};
use plexus::model::plan::parse_plan;
use plexus::model::state::{reduce, RunState};
use plexus::run::engine::{start_run, Control, RunSpec};
use plexus::run::review::{decide, DecisionKind, ReviewError, ReviewRequest, Verdict};

/// A hallucinates; B needs A, C needs B; D stands alone.
fn plan_json() -> String {
    common::one_task_plan(
        r#",{"task_id":"B","agent":"Scholar_Internalizer","instruction":"Use A.","depends_on":["A"]},
           {"task_id":"C","agent":"Scholar_Internalizer","instruction":"Use B.","depends_on":["B"]},
           {"task_id":"D","agent":"Scholar_Internalizer","instruction":"Alone."}"#,
    )
}

fn globals(db: &Path) -> Globals {
    Globals {
        db: db.to_path_buf(),
        seed: None,
        concurrency: None,
        max_cost: None,
        headless: true,
        provider: None,
        config: None,
        loaded: None,
        otlp: None,
    }
}

/// Runs [`plan_json`] through the real launch path with a scripted hallucination in A's
/// first answer; returns the run id once it ended (failed).
async fn failed_run(db: &Path) -> String {
    let config = RunConfig {
        engine: common::test_config(),
        simulated: SimConfig {
            script: HashMap::from([("A".to_string(), vec![Fault::Hallucination])]),
            ..common::quick_sim()
        },
        provider: "simulated".into(),
        replay: None,
    };
    let plan = parse_plan(&plan_json(), "test plan").expect("plan");
    let s = start(&globals(db), plan, config, None, false).expect("start");
    let run = s.run_id.clone();
    assert_eq!(
        s.finish().await.expect("the run ends"),
        RunStatus::AwaitingReview
    );
    run
}

fn statuses(store: &Store, run: &str) -> HashMap<String, String> {
    store
        .tasks(run)
        .expect("tasks")
        .into_iter()
        .map(|t| (t.task_id, t.status))
        .collect()
}

fn cli(dir: &Path, db: &Path, args: &[&str]) -> common::bin::Out {
    output(plexus(dir).arg("--db").arg(db).args(args))
}

#[tokio::test]
async fn an_accepted_hallucination_is_stored_as_reviewed_and_resume_runs_what_it_blocked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let run = failed_run(&db).await;
    let store = Store::open(&db).expect("store");
    let st = statuses(&store, &run);
    assert_eq!((st["A"].as_str(), st["B"].as_str()), ("failed", "blocked"));
    assert_eq!((st["C"].as_str(), st["D"].as_str()), ("blocked", "success"));
    // B says what it waits for: A's review, not a failure of A.
    let (last, _) = store.last_event(&run).expect("last");
    let why: Vec<String> = store
        .events(&run, 1, last)
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.event {
            Ok(EngineEvent::TaskBlocked(b)) if b.upstream == "A" => Some(b.message),
            _ => None,
        })
        .collect();
    assert_eq!(
        why,
        ["dependency `A` waits for a person's review (accepted, it runs)"]
    );

    // The queue: A with its evidence, waiting.
    let queue = store.review_queue(Some(&run)).expect("queue");
    assert_eq!(queue.len(), 1, "{queue:?}");
    let item = &queue[0];
    assert_eq!(
        (item.task_id.as_str(), item.status.as_str()),
        ("A", "failed")
    );
    assert_eq!(item.decision, None);
    assert!(item
        .message
        .as_deref()
        .unwrap_or("")
        .contains("human review"));
    assert!(!item.atoms.is_empty());
    assert!(
        item.fabricated
            .iter()
            .any(|f| f.reference.contains("FABRICATED")),
        "{:?}",
        item.fabricated
    );
    let inv = store.invocations(&run).expect("invocations");
    assert!(inv
        .iter()
        .any(|i| i.invocation_id == item.invocation_id && i.task_id == "A"));
    assert_eq!(store.review_queue(None).expect("all runs").len(), 1);
    let listed = cli(dir.path(), &db, &["review", &run, "--json"]);
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    let v: serde_json::Value = serde_json::from_str(&listed.stdout).expect("JSON");
    assert_eq!(v[0]["task_id"], "A");
    assert_eq!(v[0]["invocation_id"], item.invocation_id.as_str());

    // Accepted by a person: the decision's event ends the log, the atoms are stored
    // with who and when, A counts as done, and B and C are free for a resume.
    let last = store.last_event(&run).expect("last").0;
    let out = cli(
        dir.path(),
        &db,
        &[
            "review", &run, "A", "--accept", "--note", "checked", "--by", "alice", "--json",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let d: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(d["decision"], "accepted");
    assert_eq!(d["unblocked"], serde_json::json!(["B", "C"]));
    let events = store.events(&run, last + 1, u64::MAX).expect("events");
    assert_eq!(events.len(), 1, "one event: the decision");
    assert_eq!(
        events[0].invocation_id.as_deref(),
        Some(&*item.invocation_id)
    );
    let Ok(EngineEvent::ReviewAccepted(acc)) = &events[0].event else {
        panic!("not an acceptance: {:?}", events[0].event);
    };
    assert_eq!(
        (acc.reviewer.as_str(), acc.note.as_deref()),
        ("alice", Some("checked"))
    );
    assert_eq!(acc.atoms as usize, item.atoms.len());
    let marked: Vec<(String, Option<String>)> = store
        .conn()
        .prepare("SELECT reviewed_by, reviewed_at FROM knowledge_atoms WHERE run_id = ?1 AND task_id = 'A'")
        .expect("prepare")
        .query_map([&run], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(marked.len(), item.atoms.len());
    assert!(marked
        .iter()
        .all(|(by, at)| by == "alice" && at.as_deref().is_some_and(|t| t.starts_with("20"))));
    let records: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM quality_records WHERE invocation_id = ?1",
            [&item.invocation_id],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(records as usize, item.atoms.len());
    let a = statuses(&store, &run)["A"].clone();
    assert!(a == "success" || a == "partial", "{a}");
    assert_eq!(
        store.run(&run).expect("run").status,
        "awaiting_review",
        "until resumed"
    );

    // Decided once only.
    let again = cli(
        dir.path(),
        &db,
        &["review", &run, "A", "--reject", "--reason", "no"],
    );
    assert_eq!(again.code, Some(2));
    assert!(
        again.stderr.contains("already accepted by alice"),
        "{}",
        again.stderr
    );

    // Resume runs B and C to the end; A and D are not run again.
    let resumed = cli(dir.path(), &db, &["resume", &run, "--headless"]);
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert!(
        resumed.stderr.contains("unblocked 2 task(s)"),
        "{}",
        resumed.stderr
    );
    let st = statuses(&store, &run);
    for t in ["B", "C", "D"] {
        assert_eq!(st[t], "success", "task {t}");
    }
    let summary = store.run(&run).expect("run");
    assert!(
        summary.status == "succeeded" || summary.status == "partial",
        "{}",
        summary.status
    );
    for (task, n) in store.invocation_counts(&run).expect("counts") {
        assert_eq!(n, 1, "task {task} ran once");
    }
    // The queue keeps A with its decision.
    let queue = store.review_queue(Some(&run)).expect("queue");
    let d = queue[0].decision.as_ref().expect("decided");
    assert_eq!(
        (d.decision, d.reviewer.as_str()),
        (DecisionKind::Accepted, "alice")
    );

    // A replay folds the decision: before it A failed, after it A was accepted, and at
    // the end every task is done.
    let mut log = ReplayLog::open(&db, &run).expect("replay");
    log.index_all().expect("index");
    let before = log.seek(last).expect("seek");
    assert_eq!(before.tasks[0].status, TaskStatus::Failed);
    assert!(before.tasks[0].review.is_none());
    assert!(before.tasks[0].awaiting_review && before.awaiting_review == 1);
    let after = log.seek(last + 1).expect("seek");
    let mark = after.tasks[0]
        .review
        .as_ref()
        .expect("the review is folded");
    assert!(mark.accepted && &*mark.reviewer == "alice");
    assert!(mark
        .describe()
        .starts_with("reviewed: accepted by alice at "));
    assert!(after.tasks[0].status.satisfies_dependents());
    let end = log.seek(log.total()).expect("seek");
    assert!(end.tasks.iter().all(|t| t.status.satisfies_dependents()));
    assert!(matches!(
        end.status,
        Some(RunStatus::Succeeded | RunStatus::Partial)
    ));
}

#[tokio::test]
async fn a_rejection_records_its_reason_and_frees_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let run = failed_run(&db).await;
    let reject = |reason: &str| Verdict::Reject {
        reason: reason.into(),
    };
    assert!(matches!(
        decide(&db, &run, "A", &reject("  "), "bob"),
        Err(ReviewError::NoReason)
    ));
    let d = decide(
        &db,
        &run,
        "A",
        &reject("the references are invented"),
        "bob",
    )
    .expect("rejected");
    assert_eq!(
        (d.decision, d.status),
        (DecisionKind::Rejected, TaskStatus::Failed)
    );
    assert!(d.unblocked.is_empty());
    let store = Store::open(&db).expect("store");
    let ev = store.events(&run, d.seq, d.seq).expect("event");
    let Ok(EngineEvent::ReviewRejected(r)) = &ev[0].event else {
        panic!("not a rejection: {:?}", ev[0].event);
    };
    assert_eq!(
        (r.reviewer.as_str(), r.reason.as_str()),
        ("bob", "the references are invented")
    );
    let st = statuses(&store, &run);
    assert_eq!((st["A"].as_str(), st["B"].as_str()), ("failed", "blocked"));
    let atoms: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM knowledge_atoms WHERE run_id = ?1 AND task_id = 'A'",
            [&run],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(atoms, 0, "nothing stored");
    let item = &store.review_queue(Some(&run)).expect("queue")[0];
    let dec = item.decision.as_ref().expect("decided");
    assert_eq!(dec.note.as_deref(), Some("the references are invented"));
    let err = prepare_resume(&db, &run).err().expect("nothing to resume");
    assert!(
        format!("{err:#}").contains("already ended (failed)"),
        "{err:#}"
    );
    assert!(matches!(
        decide(&db, &run, "A", &Verdict::Accept { note: None }, "carol"),
        Err(ReviewError::AlreadyDecided {
            decision: DecisionKind::Rejected,
            ..
        })
    ));
}

#[tokio::test]
async fn bad_input_and_a_run_owned_elsewhere_are_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let run = failed_run(&db).await;
    let refused = |args: &[&str], code: i32, says: &str| {
        let out = cli(dir.path(), &db, args);
        assert_eq!(out.code, Some(code), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    };
    refused(
        &["review", &run, "NOPE", "--accept"],
        2,
        "has no task `NOPE`",
    );
    refused(
        &["review", &run, "B", "--accept"],
        2,
        "is not waiting for review: it is blocked (E006)",
    );
    refused(
        &["review", &run, "D", "--reject", "--reason", "x"],
        2,
        "it is success",
    );
    refused(
        &["review", &run, "A", "--reject", "--reason", ""],
        2,
        "needs a reason",
    );
    refused(
        &["review", &run, "A", "--accept", "--by", " "],
        2,
        "reviewer's name is empty",
    );
    refused(&["review", "R-none", "A", "--accept"], 1, "no run `R-none`");
    refused(&["review", &run, "--accept"], 2, "TASK");
    refused(&["review", &run, "A", "--note", "n"], 2, "--accept");
    refused(
        &["review", &run, "A", "--accept", "--reject", "--reason", "r"],
        2,
        "cannot be used with",
    );
    refused(&["review", &run, "B"], 2, "not waiting for review");

    // While another live process (this test) owns the run, nothing is decided from
    // outside it: exit 4, and the log is unchanged.
    let last = Store::open(&db)
        .expect("store")
        .last_event(&run)
        .expect("last");
    let lease = plexus::data::store::lease::HeldLease::acquire(&db, &run).expect("lease");
    refused(
        &["review", &run, "A", "--accept"],
        4,
        "is being executed by pid",
    );
    drop(lease);
    let store = Store::open(&db).expect("store");
    assert_eq!(store.last_event(&run).expect("last"), last);
    assert_eq!(
        store.review_queue(Some(&run)).expect("queue")[0].decision,
        None
    );
    // Free again: the default reviewer is $USER.
    let out = output(
        plexus(dir.path())
            .env("USER", "carol")
            .arg("--db")
            .arg(&db)
            .args(["review", &run, "A", "--accept"]),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("accepted by carol"), "{}", out.stdout);
    assert!(
        out.stdout.contains(" resume ") && out.stdout.contains("run them with: plexus"),
        "{}",
        out.stdout
    );
}

/// Folds delivered events until the next `run_finished`.
async fn until_finished(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Vec<Arc<Envelope>>>,
    st: &mut RunState,
    log: &mut Vec<Arc<Envelope>>,
) {
    loop {
        let batch = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("events keep coming")
            .expect("channel open");
        let mut done = false;
        for e in batch {
            reduce(st, &e);
            done |= matches!(e.event, EngineEvent::RunFinished(_));
            log.push(e);
        }
        if done {
            return;
        }
    }
}

#[tokio::test]
async fn in_the_process_that_owns_the_run_a_decision_goes_through_the_engine() {
    // A and X hallucinate; B needs A, Y needs X. The run is held open after its end, as
    // the terminal UI holds it.
    let plan_json = common::one_task_plan(
        r#",{"task_id":"B","agent":"Scholar_Internalizer","instruction":"Use A.","depends_on":["A"]},
           {"task_id":"X","agent":"Scholar_Internalizer","instruction":"Other."},
           {"task_id":"Y","agent":"Scholar_Internalizer","instruction":"Use X.","depends_on":["X"]}"#,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let plan = Arc::new(parse_plan(&plan_json, "plan").expect("plan"));
    let mut sim = common::quick_sim();
    sim.script = HashMap::from([
        ("A".to_string(), vec![Fault::Hallucination]),
        ("X".to_string(), vec![Fault::Hallucination]),
    ]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (writer, writer_thread) = spawn_writer(&db, Some(tx)).expect("writer");
    writer
        .send(WriteOp::CreateRun(Box::new(RunRow::for_plan(
            "R",
            &plan,
            "simulated",
            "{}".into(),
        ))))
        .expect("create");
    let mut config = common::test_config();
    config.hold_open = true;
    let handle = start_run(RunSpec {
        db: Some(db.clone()),
        run_id: "R".into(),
        plan,
        provider: Arc::new(SimulatedProvider::new(sim)),
        config,
        writer,
        known_assets: Default::default(),
        resume: None,
    });
    let (mut st, mut log) = (RunState::new(), Vec::new());
    until_finished(&mut rx, &mut st, &mut log).await;
    assert_eq!(st.status, Some(RunStatus::AwaitingReview));
    assert_eq!(st.awaiting_review, 2, "A and X wait for review");
    let ask = |task: &str, verdict: Verdict| {
        let (req, answer) = ReviewRequest::new(task, verdict, "dana").with_reply();
        handle.control.send(Control::Review(req)).expect("send");
        answer
    };
    let accept = || Verdict::Accept {
        note: Some("fine".into()),
    };
    // Refusals change nothing and say why.
    let r = ask("B", accept()).await.expect("answered");
    assert!(matches!(r, Err(ReviewError::NotInReview { .. })), "{r:?}");
    let r = ask("Z", accept()).await.expect("answered");
    assert!(matches!(r, Err(ReviewError::NoSuchTask { .. })), "{r:?}");
    // X rejected: it stays failed, Y blocked.
    let r = ask(
        "X",
        Verdict::Reject {
            reason: "invented".into(),
        },
    )
    .await
    .expect("answered")
    .expect("rejected");
    assert_eq!(r.decision, DecisionKind::Rejected);
    // X's rejection is a real failure: the run no longer only waits, and says so.
    until_finished(&mut rx, &mut st, &mut log).await;
    assert_eq!(st.status, Some(RunStatus::Failed), "X failed for good");
    assert_eq!(st.awaiting_review, 1, "A still waits");
    // A accepted: B runs at once, the run ends again.
    let d = ask("A", accept())
        .await
        .expect("answered")
        .expect("accepted");
    assert_eq!(
        (d.decision, d.unblocked.clone()),
        (DecisionKind::Accepted, vec!["B".to_string()])
    );
    until_finished(&mut rx, &mut st, &mut log).await;
    let by_id = |id: &str| st.tasks[st.task_index[id]].clone();
    assert!(by_id("A").status.satisfies_dependents());
    assert_eq!(by_id("B").status, TaskStatus::Success);
    assert_eq!(by_id("X").status, TaskStatus::Failed);
    assert_eq!(by_id("Y").status, TaskStatus::Blocked);
    assert_eq!(st.status, Some(RunStatus::Failed), "X is still failed");
    assert_eq!(st.awaiting_review, 0, "both decided");
    assert!(st.tasks.iter().all(|t| !t.awaiting_review));
    let mark = by_id("X").review.clone().expect("X reviewed");
    assert!(!mark.accepted && mark.text.as_deref() == Some("invented"));
    assert!(by_id("A").review.as_ref().is_some_and(|m| m.accepted));
    let Some(EngineEvent::RunFinished(f)) = log
        .iter()
        .rev()
        .map(|e| &e.event)
        .find(|e| matches!(e, EngineEvent::RunFinished(_)))
    else {
        panic!("no run_finished");
    };
    assert_eq!(
        st.quality.grades, f.grades,
        "the reducer agrees with the engine"
    );
    assert_eq!(f.atoms, by_id("A").atoms + by_id("B").atoms);
    let r = ask(
        "A",
        Verdict::Reject {
            reason: "late".into(),
        },
    )
    .await
    .expect("answered");
    assert!(
        matches!(r, Err(ReviewError::AlreadyDecided { .. })),
        "{r:?}"
    );

    handle.control.send(Control::Interrupt).expect("send");
    handle.join.await.expect("join").expect("run");
    writer_thread.join().expect("writer");
    let store = Store::open(&db).expect("store");
    let reviewed: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM knowledge_atoms WHERE task_id = 'A' AND reviewed_by = 'dana'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(reviewed, i64::from(by_id("A").atoms));
    assert_eq!(store.review_queue(Some("R")).expect("queue").len(), 2);
}
