//! `update`: actions change the UI state and return effects as data — no terminal, no
//! runtime. Built on the recorded demo run.

use plexus::base::protocol::Grade;
use plexus::model::event::{EngineEvent, Envelope, RunStatus, TaskStatus};
use plexus::model::state::{reduce, RunState};
use plexus::run::engine::Control;
use plexus::tui::app::input::{input, InputKey};
use plexus::tui::app::ui_state::{DocKey, OutputView, Overlay, Pane, Question};
use plexus::tui::app::{update, Action, Effect, Screen, UiState};

fn events() -> Vec<Envelope> {
    include_str!("../../fixtures/runs/demo.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture"))
        .collect()
}

/// The demo run folded up to (not including) the first event matching `stop`.
fn state_until(stop: impl Fn(&Envelope) -> bool) -> RunState {
    let mut st = RunState::new();
    for e in events() {
        if stop(&e) {
            break;
        }
        reduce(&mut st, &e);
    }
    st
}

fn finished() -> RunState {
    state_until(|_| false)
}

fn live() -> RunState {
    state_until(|e| matches!(e.event, EngineEvent::RunFinished(_)))
}

fn id(st: &RunState, i: usize) -> String {
    st.tasks[i].id.to_string()
}

#[test]
fn quitting_a_live_run_asks_first_and_leaves_it_resumable() {
    let st = live();
    assert!(st.is_live());
    let mut ui = UiState::new(true);
    assert!(update(&mut ui, &st, Action::Quit).is_empty());
    assert_eq!(ui.overlay, Some(Overlay::Confirm(Question::Quit)));
    // Any other action answers no.
    assert!(update(&mut ui, &st, Action::Down).is_empty());
    assert_eq!(ui.overlay, None);
    update(&mut ui, &st, Action::Quit);
    let fx = update(&mut ui, &st, Action::Confirm);
    assert_eq!(fx, vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
    assert!(ui.quitting);
}

#[test]
fn quitting_a_finished_run_needs_no_question() {
    let st = finished();
    let mut ui = UiState::new(true);
    let fx = update(&mut ui, &st, Action::Quit);
    assert_eq!(fx, vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
    let mut ui = UiState::new(false);
    assert_eq!(update(&mut ui, &st, Action::Quit), vec![Effect::Quit]);
}

#[test]
fn cancel_asks_then_cancels_and_pause_toggles() {
    let mut st = live();
    let mut ui = UiState::new(true);
    assert!(update(&mut ui, &st, Action::Cancel).is_empty());
    assert_eq!(ui.overlay, Some(Overlay::Confirm(Question::Cancel)));
    let fx = update(&mut ui, &st, Action::Confirm);
    assert!(matches!(
        fx.as_slice(),
        [Effect::Engine(Control::Cancel(_))]
    ));
    assert_eq!(
        update(&mut ui, &st, Action::TogglePause),
        vec![Effect::Engine(Control::Pause)]
    );
    st.status = Some(RunStatus::Paused);
    assert_eq!(
        update(&mut ui, &st, Action::TogglePause),
        vec![Effect::Engine(Control::Resume)]
    );
    // Read-only runs take no commands.
    let mut ro = UiState::new(false);
    assert!(update(&mut ro, &st, Action::TogglePause).is_empty());
    assert!(ro
        .flash
        .as_ref()
        .is_some_and(|f| f.text.contains("read-only")));
    assert!(update(&mut ro, &st, Action::Cancel).is_empty());
    assert_eq!(ro.overlay, None);
}

#[test]
fn retry_only_for_failed_tasks() {
    let mut st = finished();
    let mut ui = UiState::new(true);
    ui.task = 1;
    assert!(
        update(&mut ui, &st, Action::Retry).is_empty(),
        "a successful task"
    );
    std::sync::Arc::make_mut(&mut st.tasks[1]).status = TaskStatus::Failed;
    std::sync::Arc::make_mut(&mut st.tasks[2]).status = TaskStatus::Blocked;
    assert_eq!(
        update(&mut ui, &st, Action::Retry),
        vec![Effect::Engine(Control::Retry(id(&st, 1)))]
    );
    ui.task = 2;
    assert!(update(&mut ui, &st, Action::Retry).is_empty());
    let msg = ui.flash.clone().expect("explains").text;
    assert!(msg.contains(&id(&st, 1)), "{msg}");
}

#[test]
fn hjkl_moves_through_layers_and_enter_focuses_the_output() {
    let st = finished();
    let mut ui = UiState::new(true);
    assert_eq!(ui.task, 0);
    update(&mut ui, &st, Action::Down);
    assert_eq!(st.tasks[ui.task].layer, 1);
    update(&mut ui, &st, Action::Down);
    update(&mut ui, &st, Action::Down);
    update(&mut ui, &st, Action::Down);
    update(&mut ui, &st, Action::Down);
    assert_eq!(
        st.tasks[ui.task].layer as usize,
        st.layers.len() - 1,
        "stops at the last layer"
    );
    update(&mut ui, &st, Action::Top);
    assert_eq!(ui.task, 0);
    update(&mut ui, &st, Action::Left);
    assert_eq!(ui.task, 0, "nothing left of the first task");
    update(&mut ui, &st, Action::Open);
    assert_eq!(ui.focus, Pane::Output);
    // In the output, up scrolls and stops following; bottom follows again.
    update(&mut ui, &st, Action::Up);
    assert!(!ui.scroll.follow);
    update(&mut ui, &st, Action::Bottom);
    assert!(ui.scroll.follow);
    update(&mut ui, &st, Action::Back);
    assert_eq!(ui.focus, Pane::Dag);
}

#[test]
fn views_ask_for_their_documents_once() {
    let st = finished();
    let mut ui = UiState::new(true);
    let inv = st.tasks[0].invocation.clone().expect("invocation");
    let fx = update(&mut ui, &st, Action::ViewRequest);
    assert_eq!(ui.view, OutputView::Request);
    assert_eq!(fx, vec![Effect::LoadDoc(DocKey::Request(inv.clone()))]);
    assert!(
        update(&mut ui, &st, Action::ViewRequest).is_empty(),
        "already asked"
    );
    assert_eq!(
        update(&mut ui, &st, Action::ViewIssues),
        vec![Effect::LoadDoc(DocKey::Issues(inv.clone()))]
    );
    assert_eq!(
        update(&mut ui, &st, Action::ViewAtoms),
        vec![Effect::LoadDoc(DocKey::Atoms(inv))]
    );
    assert!(update(&mut ui, &st, Action::ViewRaw).is_empty());
    // Selecting another task asks for that task's document.
    let fx = update(&mut ui, &st, Action::ViewRequest);
    assert!(fx.is_empty());
    let fx = update(&mut ui, &st, Action::Down);
    let inv1 = st.tasks[ui.task].invocation.clone().expect("invocation");
    assert_eq!(fx, vec![Effect::LoadDoc(DocKey::Request(inv1))]);
}

#[test]
fn search_selects_a_task_and_filters_atoms() {
    let st = finished();
    let mut ui = UiState::new(true);
    update(&mut ui, &st, Action::Search);
    for c in "critic".chars() {
        input(&mut ui, &st, InputKey::Char(c));
    }
    input(&mut ui, &st, InputKey::Enter);
    assert!(ui.input.is_none());
    assert!(st.tasks[ui.task].id.to_lowercase().contains("critic"));
    // Atoms: filtering as you type.
    update(&mut ui, &st, Action::ScreenAtoms);
    assert_eq!(ui.screen, Screen::Atoms);
    update(&mut ui, &st, Action::Search);
    for c in "math".chars() {
        input(&mut ui, &st, InputKey::Char(c));
    }
    let rows = plexus::tui::app::atoms_view::atom_view(&st, &ui.atoms);
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|&i| st.atoms[i].id.to_lowercase().contains("math")
            || st.atoms[i].atom_type.to_lowercase().contains("math")));
    input(&mut ui, &st, InputKey::Esc);
    assert!(ui.atoms.query.is_empty());
    // Grade filter, sort by score.
    update(&mut ui, &st, Action::FilterGrade);
    assert_eq!(ui.atoms.grade, Some(Grade::A));
    let rows = plexus::tui::app::atoms_view::atom_view(&st, &ui.atoms);
    assert!(rows.iter().all(|&i| st.atoms[i].grade == Grade::A));
    update(&mut ui, &st, Action::ClearFilters);
    for _ in 0..5 {
        update(&mut ui, &st, Action::Sort);
    }
    assert_eq!(ui.atoms.sort.name(), "score");
    let rows = plexus::tui::app::atoms_view::atom_view(&st, &ui.atoms);
    assert!(rows
        .windows(2)
        .all(|w| st.atoms[w[0]].score >= st.atoms[w[1]].score));
    update(&mut ui, &st, Action::Open);
    assert!(matches!(ui.overlay, Some(Overlay::AtomDetail { .. })));
}

#[test]
fn screens_cycle_and_the_runs_screen_loads_its_list() {
    let st = finished();
    let mut ui = UiState::new(true);
    assert_eq!(update(&mut ui, &st, Action::NextScreen), vec![]);
    assert_eq!(ui.screen, Screen::Atoms);
    assert_eq!(
        update(&mut ui, &st, Action::NextScreen),
        vec![Effect::LoadRuns]
    );
    assert_eq!(ui.screen, Screen::Runs);
    ui.runs.rows = Some(vec![]);
    assert!(
        update(&mut ui, &st, Action::Open).is_empty(),
        "nothing to open"
    );
    assert_eq!(
        update(&mut ui, &st, Action::NextScreen),
        vec![Effect::LoadFailures(None)],
        "the Failures screen asks for its rows (of the run on screen: the driver knows it)"
    );
    assert_eq!(ui.screen, Screen::Failures);
    update(&mut ui, &st, Action::NextScreen);
    assert_eq!(ui.screen, Screen::Run);
    update(&mut ui, &st, Action::PrevScreen);
    assert_eq!(ui.screen, Screen::Failures);
}

#[test]
fn quitting_while_a_stored_run_is_shown_asks_if_the_live_run_is_running() {
    let stored = finished();
    let mut ui = UiState::new(true);
    ui.read_only = true;
    ui.live_running = true;
    assert!(update(&mut ui, &stored, Action::Quit).is_empty());
    assert_eq!(ui.overlay, Some(Overlay::Confirm(Question::Quit)));
}

fn summary(id: &str) -> plexus::data::store::RunSummary {
    plexus::data::store::RunSummary {
        run_id: id.into(),
        plan_id: "P".into(),
        plan_source: "p.json".into(),
        provider: "simulated".into(),
        status: "succeeded".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        finished_at: None,
        active_ms: None,
        ticking_since: None,
        task_count: 1,
        events: 1,
        atoms: 0,
        cost_usd: None,
        spend: Default::default(),
    }
}

#[test]
fn on_the_runs_screen_d_marks_a_run_and_d_on_another_compares_them() {
    let st = finished();
    let mut ui = UiState::new(false);
    ui.screen = Screen::Runs;
    ui.runs.rows = Some(vec![summary("R1"), summary("R2"), summary("R3")]);
    assert!(update(&mut ui, &st, Action::Compare).is_empty());
    assert_eq!(ui.runs.marked.as_deref(), Some("R1"));
    // The same run again clears the mark; Esc does too.
    update(&mut ui, &st, Action::Compare);
    assert_eq!(ui.runs.marked, None);
    update(&mut ui, &st, Action::Compare);
    update(&mut ui, &st, Action::Back);
    assert_eq!(ui.runs.marked, None);
    // Mark R1, move to R3, compare.
    update(&mut ui, &st, Action::Compare);
    update(&mut ui, &st, Action::Down);
    update(&mut ui, &st, Action::Down);
    assert_eq!(
        update(&mut ui, &st, Action::Compare),
        vec![Effect::Compare("R1".into(), "R3".into())]
    );
    assert_eq!(ui.runs.marked, None);
    // Enter on a run opens it (as a replay).
    assert_eq!(
        update(&mut ui, &st, Action::Open),
        vec![Effect::OpenRun("R3".into())]
    );
}

#[test]
fn transport_keys_outside_a_replay_say_where_they_work() {
    let st = finished();
    let mut ui = UiState::new(false);
    assert!(update(&mut ui, &st, Action::ReplayStepForward).is_empty());
    let flash = ui
        .flash
        .as_ref()
        .map(|f| f.text.clone())
        .unwrap_or_default();
    assert!(flash.contains("work in a replay"), "{flash}");
}
