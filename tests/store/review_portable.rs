//! Human review end to end on the demo: its default run stops one task with dependents
//! for review (flagged as waiting in the fold), a person accepts it and a resume runs
//! what it blocked; the run exported and imported into another file keeps the decision
//! (its event, its `reviews` row, who accepted the atoms and when) and replays the same.

use crate::common;

use std::path::Path;

use common::bin::{output, plexus};
use plexus::data::replay::log::ReplayLog;
use plexus::data::store::Store;
use plexus::model::event::{EngineEvent, RunStatus, TaskStatus};
use plexus::run::review::DecisionKind;

const TASK: &str = "TASK_VALIDATOR_DIFF_01";
const BELOW: &str = "TASK_CRITIC_DIFF_01";

fn cli(dir: &Path, db: &str, args: &[&str]) -> common::bin::Out {
    output(plexus(dir).args(["--db", db]).args(args))
}

/// Who accepted each atom of `task`, and when.
fn reviewed(store: &Store, run: &str, task: &str) -> Vec<(Option<String>, Option<String>)> {
    store
        .conn()
        .prepare("SELECT reviewed_by, reviewed_at FROM knowledge_atoms WHERE run_id = ?1 AND task_id = ?2 ORDER BY atom_id")
        .expect("prepare")
        .query_map([run, task], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// The kinds of a run's events, in log order.
fn kinds(store: &Store, run: &str) -> Vec<String> {
    store
        .events(run, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .map(|e| match e.event {
            Ok(ev) => ev.kind().to_string(),
            Err(_) => "undecodable".into(),
        })
        .collect()
}

#[test]
fn the_demo_waits_for_review_and_its_decision_survives_export_and_import() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cli(
        dir.path(),
        "a.db",
        &["demo", "--chunk-ms", "0", "--headless"],
    );
    assert_eq!(
        out.code,
        Some(plexus::data::exit::for_status(RunStatus::AwaitingReview) as i32),
        "{}",
        out.stderr
    );
    let store = Store::open(&dir.path().join("a.db")).expect("store");
    let run = store.run("latest").expect("run").run_id;

    // The queue: the validator's hallucination, with its evidence; the critic below it
    // is blocked.
    let queue = store.review_queue(Some(&run)).expect("queue");
    assert_eq!(queue.len(), 1, "{queue:?}");
    assert_eq!(queue[0].task_id, TASK);
    assert!(queue[0].decision.is_none());
    assert!(!queue[0].fabricated.is_empty() && !queue[0].atoms.is_empty());
    let status = |s: &Store, t: &str| {
        s.tasks(&run)
            .expect("tasks")
            .into_iter()
            .find(|x| x.task_id == t)
            .expect("task")
            .status
    };
    assert_eq!(status(&store, BELOW), "blocked");
    let table = cli(dir.path(), "a.db", &["review", &run]);
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    assert!(
        table.stdout.contains(TASK) && table.stdout.contains("waiting"),
        "{}",
        table.stdout
    );

    // The fold flags it as waiting.
    let mut log = ReplayLog::open(&dir.path().join("a.db"), &run).expect("replay");
    log.index_all().expect("index");
    let end = log.seek(log.total()).expect("seek");
    let i = end.task_index[TASK];
    assert!(end.tasks[i].awaiting_review && end.tasks[i].review.is_none());
    assert_eq!(end.awaiting_review, 1);
    let others = end.tasks.iter().filter(|t| t.awaiting_review).count();
    assert_eq!(others, 1, "only the validator waits");

    // Accepted, then resumed: the critic runs, the run ends well.
    let acc = cli(
        dir.path(),
        "a.db",
        &[
            "review",
            &run,
            TASK,
            "--accept",
            "--note",
            "looked fine",
            "--by",
            "erin",
        ],
    );
    assert_eq!(acc.code, Some(0), "{}", acc.stderr);
    assert!(acc.stdout.contains(BELOW), "{}", acc.stdout);
    let res = cli(dir.path(), "a.db", &["resume", &run, "--headless"]);
    assert_eq!(res.code, Some(0), "{}", res.stderr);
    assert_eq!(status(&store, BELOW), "success");
    let mut log = ReplayLog::open(&dir.path().join("a.db"), &run).expect("replay");
    log.index_all().expect("index");
    let end = log.seek(log.total()).expect("seek");
    assert_eq!(end.awaiting_review, 0);
    assert!(!end.tasks[i].awaiting_review);
    assert!(end.tasks[i].review.as_ref().is_some_and(|m| m.accepted));
    assert_eq!(end.tasks[end.task_index[BELOW]].status, TaskStatus::Success);

    // Exported and imported into another file: the same decision, atoms, events.
    let file = dir.path().join("run.jsonl");
    let file_s = file.to_str().expect("path");
    let exp = cli(dir.path(), "a.db", &["export", &run, "-o", file_s]);
    assert_eq!(exp.code, Some(0), "{}", exp.stderr);
    let text = std::fs::read_to_string(&file).expect("read");
    let header: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("header")).expect("JSON");
    assert_eq!(header["version"], 2, "a run with reviews is format 2");
    assert_eq!(header["counts"]["reviews"], 1);
    let imp = cli(dir.path(), "b.db", &["import", file_s]);
    assert_eq!(imp.code, Some(0), "{}", imp.stderr);
    let other = Store::open(&dir.path().join("b.db")).expect("store");
    assert_eq!(
        other.review_queue(Some(&run)).expect("queue"),
        store.review_queue(Some(&run)).expect("queue")
    );
    let item = &other.review_queue(Some(&run)).expect("queue")[0];
    let d = item.decision.as_ref().expect("decided");
    assert_eq!(
        (d.decision, d.reviewer.as_str(), d.note.as_deref()),
        (DecisionKind::Accepted, "erin", Some("looked fine"))
    );
    let marks = reviewed(&other, &run, TASK);
    assert!(!marks.is_empty());
    assert_eq!(marks, reviewed(&store, &run, TASK));
    assert!(marks.iter().all(|(by, _)| by.as_deref() == Some("erin")));
    let ks = kinds(&other, &run);
    assert_eq!(ks, kinds(&store, &run));
    assert_eq!(ks.iter().filter(|k| *k == "review_accepted").count(), 1);
    let events = other.events(&run, 1, u64::MAX).expect("events");
    assert!(events.iter().any(|e| matches!(
        &e.event,
        Ok(EngineEvent::ReviewAccepted(r)) if r.reviewer == "erin"
    )));
    let mut log = ReplayLog::open(&dir.path().join("b.db"), &run).expect("replay");
    log.index_all().expect("index");
    let there = log.seek(log.total()).expect("seek");
    assert_eq!(there.tasks[i].review, end.tasks[i].review);
    assert_eq!(there.awaiting_review, 0);

    // A second decision is refused there as here.
    let again = cli(
        dir.path(),
        "b.db",
        &["review", &run, TASK, "--reject", "--reason", "late"],
    );
    assert_eq!(again.code, Some(plexus::data::exit::INVALID as i32));
    assert!(
        again.stderr.contains("already accepted by erin"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_file_without_reviews_stays_format_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cli(
        dir.path(),
        "a.db",
        &["demo", "--faults", "none", "--chunk-ms", "0", "--headless"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let file = dir.path().join("run.jsonl");
    let exp = cli(
        dir.path(),
        "a.db",
        &["export", "latest", "-o", file.to_str().expect("path")],
    );
    assert_eq!(exp.code, Some(0), "{}", exp.stderr);
    let text = std::fs::read_to_string(&file).expect("read");
    let header: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("header")).expect("JSON");
    assert_eq!(header["version"], 1);
    assert!(header["counts"].get("reviews").is_none());
    assert!(!text.contains("reviewed_by"));
}
