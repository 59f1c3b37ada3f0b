//! Keys and mouse without a terminal: `ctrl-c` twice quits, the `:` command line runs
//! actions and commands with completion and says its errors, and clicks and the wheel
//! act on what the last frame drew under the pointer.

use plexus::base::protocol::Grade;
use plexus::model::event::{EngineEvent, Envelope};
use plexus::model::state::{reduce, RunState};
use plexus::run::engine::Control;
use plexus::tui::app::input::{input, InputKey};
use plexus::tui::app::keymap::Keymap;
use plexus::tui::app::ui_state::{Overlay, Pane, Question};
use plexus::tui::app::{update, Action, Effect, Screen, UiState};
use plexus::tui::ui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn demo(live: bool) -> RunState {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        if live && matches!(e.event, EngineEvent::RunFinished(_)) {
            break;
        }
        reduce(&mut st, &e);
    }
    st
}

fn frame(st: &RunState, ui: &mut UiState) {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    term.draw(|f| plexus::tui::ui::draw(f, st, ui, &Theme::dark(), &Keymap::default_keys()))
        .expect("draw");
}

fn type_line(ui: &mut UiState, st: &RunState, text: &str) -> Vec<Effect> {
    update(ui, st, Action::CommandLine);
    for c in text.chars() {
        input(ui, st, InputKey::Char(c));
    }
    input(ui, st, InputKey::Enter)
}

#[test]
fn quit_pressed_twice_quits_a_live_run() {
    let st = demo(true);
    let mut ui = UiState::new(true);
    update(&mut ui, &st, Action::Quit);
    assert_eq!(ui.overlay, Some(Overlay::Confirm(Question::Quit)));
    let fx = update(&mut ui, &st, Action::Quit);
    assert_eq!(fx, vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
    // Another key still answers no.
    let mut ui = UiState::new(true);
    update(&mut ui, &st, Action::Quit);
    assert!(update(&mut ui, &st, Action::Down).is_empty());
    assert!(!ui.quitting);
}

#[test]
fn the_command_line_runs_actions_and_commands_and_says_its_errors() {
    let st = demo(false);
    let mut ui = UiState::new(false);
    // :goto selects a task.
    type_line(&mut ui, &st, "goto TASK_CRITIC_DIFF_01");
    assert_eq!(&*st.tasks[ui.task].id, "TASK_CRITIC_DIFF_01");
    // A bare action name runs it.
    type_line(&mut ui, &st, "help");
    assert!(matches!(ui.overlay, Some(Overlay::Help { .. })));
    ui.overlay = None;
    // :filter grade=D filters the atoms.
    type_line(&mut ui, &st, "filter grade=D");
    assert_eq!(ui.atoms.grade, Some(Grade::D));
    assert_eq!(ui.screen, Screen::Atoms);
    // :theme asks the driver for the theme.
    assert_eq!(
        type_line(&mut ui, &st, "theme light"),
        vec![Effect::SetTheme("light".into())]
    );
    // :screen goes to a screen.
    type_line(&mut ui, &st, "screen runs");
    assert_eq!(ui.screen, Screen::Runs);
    // Errors are said.
    type_line(&mut ui, &st, "goto NOPE");
    assert!(ui
        .flash
        .as_ref()
        .is_some_and(|f| f.warn && f.text.contains("no task `NOPE`")));
    type_line(&mut ui, &st, "frobnicate");
    assert!(ui
        .flash
        .as_ref()
        .is_some_and(|f| f.warn && f.text.contains("unknown command")));
    type_line(&mut ui, &st, "filter grade=Z");
    assert!(ui
        .flash
        .as_ref()
        .is_some_and(|f| f.text.contains("no grade `Z`")));
}

#[test]
fn tab_completes_commands_action_names_and_task_ids() {
    let st = demo(false);
    let mut ui = UiState::new(false);
    update(&mut ui, &st, Action::CommandLine);
    for c in "go".chars() {
        input(&mut ui, &st, InputKey::Char(c));
    }
    input(&mut ui, &st, InputKey::Tab);
    assert_eq!(ui.input.as_deref(), Some("goto "));
    for c in "TASK_CR".chars() {
        input(&mut ui, &st, InputKey::Char(c));
    }
    input(&mut ui, &st, InputKey::Tab);
    assert_eq!(ui.input.as_deref(), Some("goto TASK_CRITIC_DIFF_01 "));
    input(&mut ui, &st, InputKey::Esc);
    // Several candidates: the common prefix, and they are listed.
    update(&mut ui, &st, Action::CommandLine);
    for c in "next_".chars() {
        input(&mut ui, &st, InputKey::Char(c));
    }
    input(&mut ui, &st, InputKey::Tab);
    assert_eq!(ui.input.as_deref(), Some("next_"));
    let listed = ui.completions.clone().expect("the candidates are listed");
    assert!(
        listed.items.iter().any(|c| c == "next_failure"),
        "{listed:?}"
    );
    assert_eq!(listed.title, "Tab: 5 commands start with `next_`");
    // Another key closes the list; a word nothing starts with says so.
    input(&mut ui, &st, InputKey::Char('z'));
    assert_eq!(ui.completions, None);
    input(&mut ui, &st, InputKey::Tab);
    let none = ui.completions.clone().expect("said");
    assert!(none.items.is_empty() && none.title.contains("no commands start with `next_z`"));
}

#[test]
fn a_click_selects_a_task_a_tab_or_a_row_and_the_wheel_scrolls_what_is_under_it() {
    let st = demo(false);
    let mut ui = UiState::new(false);
    frame(&st, &mut ui);
    // A click on the critic's DAG cell selects it.
    let critic = st
        .tasks
        .iter()
        .position(|t| &*t.id == "TASK_CRITIC_DIFF_01")
        .expect("task");
    let (r, _) = *ui
        .layout
        .dag_cells
        .iter()
        .find(|(_, t)| *t == critic)
        .expect("drawn");
    plexus::tui::app::mouse::click(&mut ui, &st, r.x + 4, r.y);
    assert_eq!(ui.task, critic);
    assert_eq!(ui.focus, Pane::Dag);
    // A click in the output pane focuses it.
    frame(&st, &mut ui);
    let (out, _) = *ui
        .layout
        .panes
        .iter()
        .find(|(_, p)| *p == Pane::Output)
        .expect("pane");
    plexus::tui::app::mouse::click(&mut ui, &st, out.x + 3, out.y + 3);
    assert_eq!(ui.focus, Pane::Output);
    // The wheel over the DAG moves the selection, over the output scrolls it.
    ui.focus = Pane::Dag;
    let (dag, _) = *ui
        .layout
        .panes
        .iter()
        .find(|(_, p)| *p == Pane::Dag)
        .expect("pane");
    plexus::tui::app::mouse::wheel(&mut ui, &st, dag.x + 2, dag.y + 2, true);
    assert_ne!(
        ui.task, critic,
        "the wheel over the DAG moved the selection"
    );
    let task = ui.task;
    ui.scroll.follow = false;
    ui.scroll.top = 10;
    plexus::tui::app::mouse::wheel(&mut ui, &st, out.x + 3, out.y + 3, true);
    assert_eq!(
        ui.task, task,
        "the wheel over the output left the selection"
    );
    assert_eq!(ui.scroll.top, 7);
    assert_eq!(ui.focus, Pane::Dag, "and the focus where it was");
    // A click on a tab switches screens; a click on a row selects it.
    let &(x0, _, _) = ui
        .layout
        .tabs
        .iter()
        .find(|(_, _, s)| *s == Screen::Atoms)
        .expect("tab");
    let header = ui.layout.header_y;
    plexus::tui::app::mouse::click(&mut ui, &st, x0 + 1, header);
    assert_eq!(ui.screen, Screen::Atoms);
    frame(&st, &mut ui);
    let (rows, top) = ui.layout.list.expect("rows drawn");
    plexus::tui::app::mouse::click(&mut ui, &st, rows.x + 2, rows.y + 3);
    assert_eq!(ui.atoms.selected, top + 3);
}
