//! Failure browsing end to end through a pseudo-terminal: the demo's failures, `n`, a
//! second attempt's request and issues, a review accepted from the queue (the task's
//! dependents then run), and two samples of the run's failure tree marked and handed
//! off — the real binary, real keys, the screen parsed.

#![cfg(unix)]

use crate::common;

use common::bin::{output, plexus};
use common::pty::Session;

#[test]
fn demo_failures_attempts_review_and_handoff_from_the_keyboard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start(&["--db", &db_s, "demo", "--chunk-ms", "2"], dir.path());
    s.wait_for("Plan DAG", 20);
    // The validator's answer names an asset that does not exist: it waits for review,
    // its dependent is blocked, and the run ends awaiting review (held open for it).
    s.wait_for("│ awaiting review │", 60);
    s.send("4");
    s.wait_for("Failures ·", 10);
    let list = s.wait_for("E007", 10);
    assert!(list.contains("codes"), "{list}");
    // n steps to the next row; the code task's first attempt, then its second.
    s.send("G");
    let mut found = false;
    for _ in 0..12 {
        if s.screen().contains("attempt 1/3") {
            found = true;
            break;
        }
        s.send("\r");
        if s.screen().contains("TASK_CODE_DIFF_01 · attempt 1/3") {
            found = true;
            break;
        }
        s.send("\x1b");
        s.send("N");
    }
    assert!(found, "no first attempt of the code task:\n{}", s.screen());
    s.send("]");
    s.wait_for("attempt 2/3", 5);
    s.send("e");
    let req = s.wait_for("request", 5);
    s.wait_for("\"constraints\"", 10);
    assert!(req.contains("TASK_CODE_DIFF_01"), "{req}");
    s.send("i");
    s.wait_for("retry decision", 10);
    s.send("\x1b");
    s.send("n");
    // The review queue: accept the validator's atoms.
    s.send("v");
    s.wait_for("Review queue · 1 waiting", 10);
    s.send("\r");
    s.wait_for("references to assets that do not exist", 5);
    s.send("\x1b");
    s.send("Y");
    s.wait_for("Accept the atoms of TASK_VALIDATOR_DIFF_01?", 5);
    s.send("y");
    s.wait_for("accepted by", 15);
    // Its dependent runs: the demo ends succeeded.
    s.send("1");
    s.wait_for("succeeded", 60);
    let st = s.quit();
    assert!(st.success(), "{st:?}:\n{}", s.screen());
    s.assert_restored();

    // The decision is an event in the run's log.
    let store = plexus::data::store::Store::open(&db).expect("store");
    let run = store.list_runs().expect("runs")[0].run_id.clone();
    let (last, _) = store.last_event(&run).expect("last");
    let accepted = store
        .events(&run, 1, last)
        .expect("events")
        .into_iter()
        .filter(|e| {
            matches!(
                e.event,
                Ok(plexus::model::event::EngineEvent::ReviewAccepted(_))
            )
        })
        .count();
    assert_eq!(accepted, 1, "one review_accepted event");

    // The run's failures as a tree; two samples marked and handed off.
    let out = output(plexus(dir.path()).args(["--db", &db_s, "export-failures", &run, "tree"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mut t = Session::start(&["--db", &db_s, "failures", "tree"], dir.path());
    t.wait_for("Failure samples ·", 10);
    t.send("m");
    t.send("m");
    t.wait_for("2 marked", 5);
    t.send("E");
    t.wait_for("write the handoff to:", 5);
    // Ctrl-U clears what the prompt offers; what is typed stays in view on its row.
    t.send("\x15");
    t.send("handoff.json");
    t.wait_for("handoff.json▏", 5);
    t.send("\r");
    t.wait_for("why hand back", 5);
    t.send("\x15");
    t.send("two typical cases");
    t.wait_for("two typical cases▏", 5);
    t.send("\r");
    t.wait_for("wrote handoff.json", 10);
    // Enter opens the selected sample: its documents are read off the key loop and
    // counted in the on-demand budget when they arrive.
    t.send("\r");
    t.wait_for("opened: +", 10);
    t.send("\x1b");
    let st = t.quit();
    assert!(st.success());
    t.assert_restored();
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("handoff.json")).expect("the handoff"),
    )
    .expect("json");
    assert_eq!(
        v["failure_samples_index"].as_array().map(Vec::len),
        Some(2),
        "{v}"
    );
    assert_eq!(v["trigger_reason"], "two typical cases", "{v}");
}

#[test]
fn enter_on_another_runs_failure_opens_that_run_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    for _ in 0..2 {
        let out = output(plexus(dir.path()).args([
            "--db",
            &db_s,
            "demo",
            "--chunk-ms",
            "0",
            "--headless",
        ]));
        assert!(out.code.is_some(), "demo: {}", out.stderr);
    }
    let runs: Vec<String> = plexus::data::store::Store::open(&db)
        .expect("store")
        .list_runs()
        .expect("runs")
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    // Every run's failures and no run on screen: each row is of another run.
    let mut s = Session::start_sized(&["--db", &db_s, "failures"], dir.path(), 80, 24);
    s.wait_for("E007", 20);
    s.send("G");
    s.send("\r");
    // The overlay's title names the row's run, task and attempt.
    let overlay = s.wait_for(" · attempt ", 5);
    let title = overlay
        .lines()
        .find(|l| l.contains(" · attempt "))
        .unwrap_or_default()
        .to_string();
    let run = runs
        .iter()
        .find(|r| title.contains(r.as_str()))
        .unwrap_or_else(|| panic!("no run in the title: {title}"))
        .clone();
    let task: String = title[title.find("TASK_").expect("a task")..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    // The overlay leads with the error, not with an all-zero quality block.
    let overlay = s.wait_for("✘ E", 10);
    assert!(!overlay.contains("\"A\": 0"), "{overlay}");
    // Enter: find it in its run — the run opens at its end with the task selected.
    s.send("\r");
    let screen = s.wait_for("Plan DAG", 20);
    assert!(!screen.contains("is another run"), "{screen}");
    s.wait_for(&format!("Output · {task}"), 20);
    // The message log says the attempt was found in that run.
    s.send("M");
    s.wait_for(&format!("{task} · attempt 1/"), 5);
    s.wait_for(&format!("· {run}"), 5);
    s.send("\x1b");
    let st = s.quit();
    assert!(st.success(), "{st:?}");
    s.assert_restored();
}

#[test]
fn failures_of_several_runs_say_so_and_sort_only_by_columns_shown_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    for _ in 0..2 {
        let o = output(plexus(dir.path()).args(["--db", &db_s, "demo", "--headless"]));
        assert!(o.code.is_some(), "{}", o.stderr);
    }
    let mut s = Session::start_sized(&["--db", &db_s, "failures"], dir.path(), 80, 24);
    s.wait_for("Failures · ", 10);
    let screen = s.wait_for("2 runs", 10);
    assert!(!screen.contains("this run"), "{screen}");
    // Rows of two runs name their run, by its tag where the whole id does not fit.
    assert!(screen.contains("│time     run   task"), "{screen}");
    let bar = screen.lines().last().unwrap_or("").to_string();
    assert!(
        bar.contains("no run open") && !bar.contains("starting"),
        "{bar}"
    );
    // `s` cycles through the columns on screen: at 80 the run shows as its tag, the
    // agent is hidden.
    let mut seen = Vec::new();
    for _ in 0..8 {
        s.send("s");
        let line = s.screen().lines().nth(2).unwrap_or("").to_string();
        let sort = line
            .split("sort ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .unwrap_or("")
            .to_string();
        seen.push(sort);
    }
    assert!(seen.contains(&"task".to_string()), "{seen:?}");
    assert!(seen.contains(&"run".to_string()), "{seen:?}");
    assert!(
        !seen.iter().any(|s| s == "agent"),
        "sorted by a hidden column: {seen:?}"
    );
    // One run's rows under the run filter: the title names the run.
    s.send("R");
    s.wait_for("· run R", 5);
    s.quit();
    s.assert_restored();
}
