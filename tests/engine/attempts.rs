//! Per-attempt drill-down and failure jumps on the Run screen: `[` / `]` pick an attempt
//! of the selected task (its stream, request, atoms and issues), `n` / `N` walk the
//! failed, partial and retried tasks in DAG order. Built on the recorded demo run, and
//! on a demo run in a database for what is read back from the log.

use crate::common;

use common::bin::{output, plexus};
use plexus::data::store::Store;
use plexus::model::event::{EngineEvent, Envelope};
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::ui_state::{Doc, DocKey, OutputView};
use plexus::tui::app::{update, Action, Effect, UiState};
use plexus::tui::loader::load_doc;

fn demo() -> RunState {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        reduce(&mut st, &e);
    }
    st
}

fn task(st: &RunState, id: &str) -> usize {
    st.tasks.iter().position(|t| &*t.id == id).expect(id)
}

#[test]
fn brackets_walk_a_tasks_attempts_and_each_view_asks_for_that_attempts_document() {
    let st = demo();
    let code = task(&st, "TASK_CODE_DIFF_01");
    let invs: Vec<String> = st.tasks[code]
        .invocations
        .iter()
        .map(|i| i.to_string())
        .collect();
    assert_eq!(invs.len(), 3, "the demo's code task ran three attempts");
    let mut ui = UiState::new(false);
    ui.task = code;
    // The latest attempt is shown until `[` is pressed.
    assert_eq!(
        ui.shown_invocation(&st.tasks[code]).map(|s| (s.1, s.2)),
        Some((3, 3))
    );
    let fx = update(&mut ui, &st, Action::PrevAttempt);
    assert_eq!(ui.attempt, Some(1));
    assert_eq!(
        fx,
        vec![Effect::LoadDoc(DocKey::Stream(invs[1].as_str().into()))]
    );
    update(&mut ui, &st, Action::PrevAttempt);
    assert_eq!(ui.attempt, Some(0));
    // At the first attempt `[` says so and stays.
    assert!(update(&mut ui, &st, Action::PrevAttempt).is_empty());
    assert_eq!(ui.attempt, Some(0));
    assert!(ui.flash.as_ref().is_some_and(|f| f.text.contains("first")));
    let first = invs[0].as_str();
    assert_eq!(
        update(&mut ui, &st, Action::ViewRequest),
        vec![Effect::LoadDoc(DocKey::Request(first.into()))]
    );
    assert_eq!(
        update(&mut ui, &st, Action::ViewIssues),
        vec![Effect::LoadDoc(DocKey::Issues(first.into()))]
    );
    assert_eq!(
        update(&mut ui, &st, Action::ViewAtoms),
        vec![Effect::LoadDoc(DocKey::Atoms(first.into()))]
    );
    // Back to the raw stream, then forward to the latest: the live buffer, scrolled to
    // where that attempt starts.
    update(&mut ui, &st, Action::ViewRaw);
    update(&mut ui, &st, Action::NextAttempt);
    update(&mut ui, &st, Action::NextAttempt);
    assert_eq!(ui.attempt, None);
    assert_eq!(ui.view, OutputView::Raw);
    let line = st.tasks[code].output.line(ui.scroll.top);
    assert!(
        line.starts_with("── attempt 3") && line.contains(&invs[2]),
        "{line}"
    );
    // Another task shows its latest attempt again.
    update(&mut ui, &st, Action::Left);
    update(&mut ui, &st, Action::Right);
    assert_eq!(ui.attempt, None);
}

#[test]
fn n_and_shift_n_walk_the_failed_and_retried_tasks_in_dag_order_and_wrap() {
    let st = demo();
    let order: Vec<usize> = st.layers.iter().flatten().copied().collect();
    let failures: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| plexus::tui::app::attempts::is_failure(&st.tasks[i]))
        .collect();
    assert!(failures.len() >= 2, "the demo retries at least two tasks");
    let mut ui = UiState::new(false);
    ui.task = order[0];
    let mut seen = Vec::new();
    for _ in 0..failures.len() {
        update(&mut ui, &st, Action::NextFailure);
        seen.push(ui.task);
    }
    // From the first task of the DAG, n goes to the failures after it, then wraps.
    let mut expected: Vec<usize> = failures
        .iter()
        .copied()
        .filter(|&i| i != order[0])
        .collect();
    if failures[0] == order[0] {
        expected.push(order[0]);
    }
    assert_eq!(seen, expected);
    update(&mut ui, &st, Action::NextFailure);
    assert_eq!(ui.task, expected[0], "n wraps around");
    ui.task = failures[0];
    update(&mut ui, &st, Action::PrevFailure);
    assert_eq!(ui.task, *failures.last().expect("one"), "N wraps backwards");
    update(&mut ui, &st, Action::PrevFailure);
    assert_eq!(ui.task, failures[failures.len() - 2]);
    update(&mut ui, &st, Action::PrevFailure);
    assert!(ui
        .flash
        .as_ref()
        .is_some_and(|f| f.text.starts_with(&format!(
            "failure {}/{}",
            failures.len() - 2,
            failures.len()
        ))));
}

#[test]
fn an_earlier_attempts_stream_and_an_atoms_issues_are_read_back_from_the_database() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let out = output(plexus(dir).args(["--db", "p.db", "demo", "--chunk-ms", "0", "--headless"]));
    // The demo ends awaiting review headless: one task waits for a person.
    assert_eq!(out.code, Some(6), "{}", out.stderr);
    let store = Store::open(&dir.join("p.db")).expect("db");
    let run = store.list_runs().expect("runs")[0].run_id.clone();
    let (last, _) = store.last_event(&run).expect("last");
    let events = store.events(&run, 1, last).expect("events");
    // Every invocation's stream is the text of its chunk events, in order.
    let mut by_inv: Vec<(String, String)> = Vec::new();
    for e in &events {
        match (&e.event, &e.invocation_id) {
            (Ok(EngineEvent::InvocationStarted(_)), Some(i)) => {
                by_inv.push((i.clone(), String::new()))
            }
            (Ok(EngineEvent::Chunk(c)), Some(i)) => {
                let slot = by_inv
                    .iter_mut()
                    .find(|(x, _)| x == i)
                    .expect("started first");
                slot.1.push_str(&c.text);
            }
            _ => {}
        }
    }
    assert!(by_inv.len() > 5);
    for (inv, text) in &by_inv {
        let got = store.invocation_stream(inv).expect("read").expect("known");
        assert_eq!(&got, text, "stream of {inv}");
        let doc = load_doc(&store, &DocKey::Stream(inv.as_str().into()));
        assert!(matches!(doc, Doc::Ready(_)), "{doc:?}");
    }
    assert_eq!(store.invocation_stream("INV_NOPE").expect("read"), None);
    // An atom with quality issues lists them in its detail.
    let with_issues = events.iter().find_map(|e| match &e.event {
        Ok(EngineEvent::AtomsGraded(g)) => g.atoms.iter().find(|a| a.issues > 0).map(|a| {
            (
                e.invocation_id.clone().expect("inv"),
                a.asset_id.clone(),
                a.issues,
            )
        }),
        _ => None,
    });
    let (inv, atom, n) = with_issues.expect("the demo grades an atom with issues");
    match load_doc(
        &store,
        &DocKey::Atom(inv.as_str().into(), atom.as_str().into()),
    ) {
        Doc::Ready(t) => assert!(t.contains(&format!("quality issues ({n}):")), "{t}"),
        d => panic!("{d:?}"),
    }
}
