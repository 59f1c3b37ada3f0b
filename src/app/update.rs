//! `update`: the UI's pure half. An action changes `UiState` and returns effects (engine
//! commands, store queries, quit) as data for the driver to carry out.

use std::sync::Arc;

use super::action::{Action, Screen};
use super::atoms_view::atom_view;
use super::ui_state::{
    AtomSort, Doc, DocKey, OutputView, Overlay, Pane, Question, Scroll, UiState,
};
use crate::engine::Control;
use crate::event::{RunStatus, TaskStatus};
use crate::protocol::Grade;
use crate::state::RunState;

/// Something for the driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send a command to the engine.
    Engine(Control),
    /// Load a document from the store.
    LoadDoc(DocKey),
    /// Load the list of runs.
    LoadRuns,
    /// Load the failed invocations of a run (`None`: of every run).
    LoadFailures(Option<String>),
    /// Load the review queue (of the same scope as the failures).
    LoadReviews(Option<String>),
    /// Decide a review: accept or reject a task's atoms.
    Review {
        /// Run.
        run: String,
        /// Task.
        task: String,
        /// The decision.
        verdict: crate::review::Verdict,
    },
    /// Open a run read-only from its log.
    OpenRun(String),
    /// Compare two runs (by id) and show the differences.
    Compare(String, String),
    /// Load a task's evicted output back from the log.
    LoadOutput(usize),
    /// Leave a run opened from the log and show the live run again.
    BackToLive,
    /// Replay: show the state after event `to` (the answer carrying `token` counts).
    ReplaySeek {
        /// Target event.
        to: u64,
        /// Names the seek.
        token: u64,
    },
    /// Replay: fold the next event.
    ReplayStep,
    /// Switch to a theme (a built-in name, a name in the config directory, or a file).
    SetTheme(String),
    /// Leave the program.
    Quit,
}

/// A key while a search is being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKey {
    /// A character.
    Char(char),
    /// Delete the last character.
    Backspace,
    /// Accept.
    Enter,
    /// Abandon.
    Esc,
    /// Complete the word being typed (the command line).
    Tab,
}

/// Applies an action.
pub fn update(ui: &mut UiState, run: &RunState, action: Action) -> Vec<Effect> {
    let mut fx = Vec::new();
    if let Some(overlay) = ui.overlay.clone() {
        overlay_action(ui, run, overlay, action, &mut fx);
        return fx;
    }
    if let Some(t) = ui.replay.as_mut() {
        if action == Action::ReplaySeek {
            ui.input = Some(String::new());
            ui.seek_prompt = true;
            return fx;
        }
        if let Some((effects, say)) = t.act(action) {
            if let Some(say) = say {
                ui.flash(say, false);
            }
            return effects;
        }
    } else if is_transport(action) {
        ui.flash(
            "transport keys work in a replay (plexus replay RUN, or Enter on the Runs screen)",
            true,
        );
        return fx;
    }
    match action {
        Action::Quit => {
            // Ask while the live run is running, even when a stored run is on screen.
            if controllable(ui, run) || (ui.engine_attached && ui.live_running) {
                ui.overlay = Some(Overlay::Confirm(Question::Quit));
            } else {
                if ui.engine_attached {
                    fx.push(Effect::Engine(Control::Interrupt));
                }
                fx.push(Effect::Quit);
                ui.quitting = true;
            }
        }
        Action::Confirm => {}
        Action::Back => {
            if ui.screen == Screen::Runs && ui.runs.marked.is_some() {
                ui.runs.marked = None;
                ui.flash("mark cleared", false);
            } else if ui.screen == Screen::Run && run.debate.is_some() && super::debate::back(ui) {
            } else if ui.screen == Screen::Run && ui.focus != Pane::Dag {
                ui.focus = Pane::Dag;
            } else if ui.read_only && ui.engine_attached {
                fx.push(Effect::BackToLive);
            }
        }
        Action::NextScreen | Action::PrevScreen => {
            let all = Screen::ALL;
            let i = all.iter().position(|&s| s == ui.screen).unwrap_or(0);
            let n = all.len();
            let j = if action == Action::NextScreen {
                (i + 1) % n
            } else {
                (i + n - 1) % n
            };
            switch_screen(ui, all[j], &mut fx);
        }
        Action::ScreenRun => switch_screen(ui, Screen::Run, &mut fx),
        Action::ScreenAtoms => switch_screen(ui, Screen::Atoms, &mut fx),
        Action::ScreenRuns => switch_screen(ui, Screen::Runs, &mut fx),
        Action::ScreenFailures => switch_screen(ui, Screen::Failures, &mut fx),
        Action::Help => ui.overlay = Some(Overlay::Help { top: 0 }),
        Action::Messages => {
            let lines = ui.message_lines();
            let top = lines.len().saturating_sub(ui.list_rows.max(1));
            ui.overlay = Some(Overlay::Text {
                title: " Messages ".into(),
                lines: Arc::new(lines),
                top,
            });
        }
        Action::Search => ui.input = Some(String::new()),
        Action::CommandLine => {
            ui.input = Some(String::new());
            ui.command_prompt = true;
        }
        _ if ui.screen == Screen::Run
            && run
                .debate
                .as_deref()
                .is_some_and(|d| super::debate::keys(ui, d, action)) => {}
        Action::TogglePause => {
            if controllable(ui, run) {
                let c = if run.status == Some(RunStatus::Paused) {
                    Control::Resume
                } else {
                    Control::Pause
                };
                fx.push(Effect::Engine(c));
            } else {
                ui.flash(not_live(ui), true);
            }
        }
        Action::Cancel => {
            if controllable(ui, run) {
                ui.overlay = Some(Overlay::Confirm(Question::Cancel));
            } else {
                ui.flash(not_live(ui), true);
            }
        }
        Action::Retry => retry(ui, run, &mut fx),
        _ => match ui.screen {
            Screen::Run => run_screen(ui, run, action, &mut fx),
            Screen::Atoms => atoms_screen(ui, run, action, &mut fx),
            Screen::Runs => runs_screen(ui, action, &mut fx),
            Screen::Failures => super::failures_keys::failures_screen(ui, run, action, &mut fx),
        },
    }
    fx
}

/// Whether `a` belongs to a replay's transport.
fn is_transport(a: Action) -> bool {
    matches!(
        a,
        Action::ReplayStepBack
            | Action::ReplayStepForward
            | Action::ReplayPrevStart
            | Action::ReplayNextStart
            | Action::ReplayPrevFailure
            | Action::ReplayNextFailure
            | Action::ReplaySlower
            | Action::ReplayFaster
            | Action::ReplayStart
            | Action::ReplayEnd
            | Action::ReplaySeek
    )
}

/// Whether the shown run can be controlled (live, attached, not opened from the log).
fn controllable(ui: &UiState, run: &RunState) -> bool {
    ui.engine_attached && !ui.read_only && run.is_live()
}

fn not_live(ui: &UiState) -> &'static str {
    if ui.read_only {
        "read-only: this run was opened from the log"
    } else {
        "the run is not running"
    }
}

fn switch_screen(ui: &mut UiState, s: Screen, fx: &mut Vec<Effect>) {
    ui.screen = s;
    match s {
        Screen::Runs => fx.push(Effect::LoadRuns),
        Screen::Failures => super::failures_keys::load(ui, fx),
        _ => {}
    }
}

fn retry(ui: &mut UiState, run: &RunState, fx: &mut Vec<Effect>) {
    let Some(t) = run.tasks.get(ui.task) else {
        return;
    };
    if !ui.engine_attached || ui.read_only {
        ui.flash(
            "read-only: retry works on the run this session started",
            true,
        );
        return;
    }
    match t.status {
        TaskStatus::Failed | TaskStatus::Timeout => {
            fx.push(Effect::Engine(Control::Retry(t.id.to_string())));
            ui.flash(format!("retrying {}", t.id), false);
            ui.scroll = Scroll::default();
        }
        TaskStatus::Blocked => {
            let up = t
                .deps
                .iter()
                .filter_map(|&d| run.tasks.get(d))
                .find(|d| !d.status.satisfies_dependents())
                .map(|d| d.id.to_string())
                .unwrap_or_default();
            ui.flash(format!("{} is blocked: retry `{up}` instead", t.id), true);
        }
        s => ui.flash(
            format!(
                "{} is {}: only failed or timed-out tasks can be retried",
                t.id,
                s.as_str()
            ),
            true,
        ),
    }
}

fn overlay_action(
    ui: &mut UiState,
    run: &RunState,
    overlay: Overlay,
    action: Action,
    fx: &mut Vec<Effect>,
) {
    match overlay {
        Overlay::Confirm(q) => {
            ui.overlay = None;
            // Quit pressed again (ctrl-c ctrl-c, q q) confirms the quit.
            let again = q == Question::Quit && action == Action::Quit;
            if action == Action::Confirm || again {
                match q {
                    Question::Quit => {
                        fx.push(Effect::Engine(Control::Interrupt));
                        fx.push(Effect::Quit);
                        ui.quitting = true;
                    }
                    Question::Cancel => {
                        if run.is_live() {
                            fx.push(Effect::Engine(Control::Cancel(
                                "cancelled from the terminal".into(),
                            )));
                        }
                    }
                }
            }
        }
        Overlay::Help { top } => match action {
            Action::Back | Action::Help | Action::Quit => ui.overlay = None,
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::Help { top });
            }
        },
        Overlay::Text { title, lines, top } => match action {
            Action::Back | Action::Open | Action::Quit => ui.overlay = None,
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::Text { title, lines, top });
            }
        },
        Overlay::Attempt(view) => super::failures_keys::attempt_action(ui, run, view, action, fx),
        Overlay::AtomDetail { atom, top } => match action {
            Action::Back | Action::Open | Action::Quit => ui.overlay = None,
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::AtomDetail { atom, top });
            }
        },
    }
}

/// A simple scroll position after a movement action (upper bound applied at draw time).
pub fn scroll_value(top: usize, action: Action, page: usize) -> usize {
    match action {
        Action::Up => top.saturating_sub(1),
        Action::Down => top + 1,
        Action::PageUp => top.saturating_sub(page.max(1)),
        Action::PageDown => top + page.max(1),
        Action::Top => 0,
        Action::Bottom => usize::MAX / 2,
        _ => top,
    }
}

fn run_screen(ui: &mut UiState, run: &RunState, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Open => ui.focus = Pane::Output,
        Action::FocusNext => {
            let i = Pane::ORDER.iter().position(|&p| p == ui.focus).unwrap_or(0);
            ui.focus = Pane::ORDER[(i + 1) % Pane::ORDER.len()];
        }
        Action::ViewRaw => set_view(ui, run, OutputView::Raw, fx),
        Action::ViewAtoms => set_view(ui, run, OutputView::Atoms, fx),
        Action::ViewRequest => set_view(ui, run, OutputView::Request, fx),
        Action::ViewIssues => set_view(ui, run, OutputView::Issues, fx),
        Action::ViewContext => set_view(ui, run, OutputView::Context, fx),
        Action::PrevAttempt => super::attempts::move_attempt(ui, run, -1, fx),
        Action::NextAttempt => super::attempts::move_attempt(ui, run, 1, fx),
        Action::NextFailure => super::attempts::jump_failure(ui, run, true, fx),
        Action::PrevFailure => super::attempts::jump_failure(ui, run, false, fx),
        Action::Follow => super::follow::toggle(ui, run, fx),
        Action::NextRunning => super::follow::jump(
            ui,
            run,
            true,
            "running",
            |t| t.status == TaskStatus::Running,
            fx,
        ),
        Action::NextBlocked => super::follow::jump(
            ui,
            run,
            true,
            "blocked",
            |t| t.status == TaskStatus::Blocked,
            fx,
        ),
        Action::LayerPageLeft => super::follow::page_in_layer(ui, run, false, fx),
        Action::LayerPageRight => super::follow::page_in_layer(ui, run, true, fx),
        _ => match ui.focus {
            Pane::Output => scroll_output(ui, action),
            _ => move_selection(ui, run, action, fx),
        },
    }
}

fn set_view(ui: &mut UiState, run: &RunState, v: OutputView, fx: &mut Vec<Effect>) {
    ui.view = v;
    let earlier = run
        .tasks
        .get(ui.task)
        .is_some_and(|t| ui.earlier_attempt(t));
    ui.scroll = Scroll {
        top: 0,
        follow: v == OutputView::Raw && !earlier,
    };
    request_docs(ui, run, fx);
}

/// Asks for the documents the output view needs for the selected task.
pub fn request_docs(ui: &mut UiState, run: &RunState, fx: &mut Vec<Effect>) {
    let Some(task) = run.tasks.get(ui.task) else {
        return;
    };
    let Some((inv, _, _)) = ui.shown_invocation(task) else {
        return;
    };
    let key = match ui.view {
        OutputView::Raw if ui.earlier_attempt(task) => DocKey::Stream(inv),
        OutputView::Raw | OutputView::Context => return,
        OutputView::Request => DocKey::Request(inv),
        OutputView::Atoms => DocKey::Atoms(inv),
        OutputView::Issues => DocKey::Issues(inv),
    };
    ask(ui, key, fx);
}

/// Asks for a document unless it is loaded or on its way.
pub fn ask(ui: &mut UiState, key: DocKey, fx: &mut Vec<Effect>) {
    if !matches!(ui.docs.get(&key), Some(Doc::Ready(_) | Doc::Loading)) {
        ui.docs.insert(key.clone(), Doc::Loading);
        fx.push(Effect::LoadDoc(key));
    }
}

fn scroll_output(ui: &mut UiState, action: Action) {
    let page = ui.output_rows.max(1);
    let s = &mut ui.scroll;
    match action {
        Action::Up => {
            s.follow = false;
            s.top = s.top.saturating_sub(1);
        }
        Action::Down => s.top += 1,
        Action::PageUp => {
            s.follow = false;
            s.top = s.top.saturating_sub(page);
        }
        Action::PageDown => s.top += page,
        Action::Top => {
            s.follow = false;
            s.top = 0;
        }
        Action::Bottom => s.follow = true,
        Action::Left => ui.focus = Pane::Dag,
        _ => {}
    }
}

/// Moves the DAG selection: up/down between layers, left/right within a layer.
fn move_selection(ui: &mut UiState, run: &RunState, action: Action, fx: &mut Vec<Effect>) {
    if run.tasks.is_empty() {
        return;
    }
    let cur = ui.task.min(run.tasks.len() - 1);
    let layer = run.tasks[cur].layer.min(run.layers.len().saturating_sub(1));
    let Some(row) = run.layers.get(layer) else {
        return;
    };
    let pos = row.iter().position(|&t| t == cur).unwrap_or(0);
    let pick = |l: usize, p: usize| -> Option<usize> {
        run.layers
            .get(l)
            .and_then(|r| r.get(p.min(r.len().saturating_sub(1))).copied())
    };
    let next = match action {
        Action::Left => pos.checked_sub(1).and_then(|p| pick(layer, p)),
        Action::Right => pick(layer, pos + 1).filter(|_| pos + 1 < row.len()),
        Action::Up => layer.checked_sub(1).and_then(|l| pick(l, pos)),
        Action::Down => pick(layer + 1, pos),
        Action::Top => pick(0, 0),
        Action::Bottom => run.layers.len().checked_sub(1).and_then(|l| pick(l, 0)),
        Action::PageDown => pick((layer + 5).min(run.layers.len() - 1), pos),
        Action::PageUp => pick(layer.saturating_sub(5), pos),
        _ => None,
    };
    if let Some(n) = next {
        super::follow::stop(ui);
        select_task(ui, run, n, fx);
    }
}

/// Selects a task: the output view goes back to following its tail.
pub fn select_task(ui: &mut UiState, run: &RunState, task: usize, fx: &mut Vec<Effect>) {
    if task != ui.task {
        ui.task = task;
        ui.attempt = None;
        ui.scroll = Scroll {
            top: 0,
            follow: ui.view == OutputView::Raw,
        };
    }
    request_docs(ui, run, fx);
}

/// The selection in a list of `len` rows after a movement action (`None` for others).
pub fn move_in_list(selected: usize, len: usize, action: Action, page: usize) -> Option<usize> {
    let last = len.saturating_sub(1);
    Some(match action {
        Action::Up => selected.saturating_sub(1),
        Action::Down => (selected + 1).min(last),
        Action::PageUp => selected.saturating_sub(page),
        Action::PageDown => (selected + page).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return None,
    })
}

fn atoms_screen(ui: &mut UiState, run: &RunState, action: Action, fx: &mut Vec<Effect>) {
    let rows = atom_view(run, &ui.atoms).len();
    let t = &mut ui.atoms;
    let page = ui.list_rows.max(1);
    if let Some(sel) = move_in_list(t.selected, rows, action, page) {
        t.selected = sel;
        return;
    }
    match action {
        Action::Sort => {
            let i = AtomSort::ALL.iter().position(|&s| s == t.sort).unwrap_or(0);
            t.sort = AtomSort::ALL[(i + 1) % AtomSort::ALL.len()];
        }
        Action::SortReverse => t.reverse = !t.reverse,
        Action::FilterGrade => {
            t.grade = match t.grade {
                None => Some(Grade::A),
                Some(Grade::A) => Some(Grade::B),
                Some(Grade::B) => Some(Grade::C),
                Some(Grade::C) => Some(Grade::D),
                Some(Grade::D) => None,
            };
            t.selected = 0;
        }
        Action::FilterAgent => {
            t.agent = match t.agent {
                None if !run.agents.is_empty() => Some(0),
                Some(i) if i + 1 < run.agents.len() => Some(i + 1),
                _ => None,
            };
            t.selected = 0;
        }
        Action::FilterType => {
            let mut types: Vec<Arc<str>> = run.atoms.iter().map(|a| a.atom_type.clone()).collect();
            types.sort();
            types.dedup();
            t.atom_type = match &t.atom_type {
                None => types.first().cloned(),
                Some(cur) => types
                    .iter()
                    .position(|x| x == cur)
                    .and_then(|i| types.get(i + 1).cloned()),
            };
            t.selected = 0;
        }
        Action::ClearFilters => {
            t.grade = None;
            t.agent = None;
            t.atom_type = None;
            t.query.clear();
            t.selected = 0;
        }
        Action::Open => {
            let view = atom_view(run, &ui.atoms);
            if let Some(&a) = view.get(ui.atoms.selected) {
                ui.overlay = Some(Overlay::AtomDetail { atom: a, top: 0 });
                if let Some(inv) = run.atoms[a].invocation.clone() {
                    ask(ui, DocKey::Atom(inv, run.atoms[a].id.clone()), fx);
                }
            }
        }
        _ => {}
    }
}

fn runs_screen(ui: &mut UiState, action: Action, fx: &mut Vec<Effect>) {
    let n = ui.runs.rows.as_ref().map_or(0, Vec::len);
    let page = ui.list_rows.max(1);
    let r = &mut ui.runs;
    if let Some(sel) = move_in_list(r.selected, n, action, page) {
        r.selected = sel;
        return;
    }
    let selected = r
        .rows
        .as_ref()
        .and_then(|rows| rows.get(r.selected))
        .map(|row| row.run_id.clone());
    match (action, selected) {
        (Action::Open, Some(id)) => fx.push(Effect::OpenRun(id)),
        (Action::Compare, Some(id)) => match ui.runs.marked.take() {
            None => {
                ui.flash(
                    format!("{id} marked: d on another run compares them"),
                    false,
                );
                ui.runs.marked = Some(id);
            }
            Some(m) if m == id => ui.flash("mark cleared", false),
            Some(m) => {
                ui.flash(format!("comparing {m} with {id}…"), false);
                fx.push(Effect::Compare(m, id));
            }
        },
        _ => {}
    }
}

/// Handles a key while a search is typed. On the Atoms screen the table filters as you
/// type; on the Run screen Enter selects the next task whose id contains the text.
pub fn input(ui: &mut UiState, run: &RunState, key: InputKey) -> Vec<Effect> {
    let mut fx = Vec::new();
    let Some(mut text) = ui.input.take() else {
        return fx;
    };
    if ui.command_prompt {
        match key {
            InputKey::Esc => ui.command_prompt = false,
            InputKey::Enter => {
                ui.command_prompt = false;
                return super::command_line::run(ui, run, &text);
            }
            InputKey::Tab => {
                let (done, hits) = super::command_line::complete(&text, run);
                if hits.len() > 1 {
                    let shown: Vec<&str> = hits.iter().take(8).map(String::as_str).collect();
                    ui.flash(
                        format!(
                            "{}{}",
                            shown.join("  "),
                            if hits.len() > 8 { "  …" } else { "" }
                        ),
                        false,
                    );
                } else if hits.is_empty() {
                    ui.flash("no completion", true);
                }
                ui.input = Some(done);
            }
            InputKey::Backspace => {
                text.pop();
                ui.input = Some(text);
            }
            InputKey::Char(c) if !c.is_control() && text.chars().count() < 200 => {
                text.push(c);
                ui.input = Some(text);
            }
            InputKey::Char(_) => ui.input = Some(text),
        }
        return fx;
    }
    match key {
        InputKey::Tab => {}
        InputKey::Char(c) if !c.is_control() => {
            if text.chars().count() < 200 {
                text.push(c);
            }
        }
        InputKey::Char(_) => {}
        InputKey::Backspace => {
            text.pop();
        }
        InputKey::Esc if ui.reason_for.is_some() => {
            ui.reason_for = None;
            ui.flash("not rejected", false);
            return fx;
        }
        InputKey::Enter if ui.reason_for.is_some() => {
            let (run, task) = ui.reason_for.take().unwrap_or_default();
            if text.trim().is_empty() {
                ui.flash("a rejection needs a reason: X again to write one", true);
            } else {
                ui.flash(format!("rejecting {task}…"), false);
                fx.push(Effect::Review {
                    run,
                    task,
                    verdict: crate::review::Verdict::Reject {
                        reason: text.trim().to_string(),
                    },
                });
            }
            return fx;
        }
        InputKey::Esc => {
            if ui.seek_prompt {
                ui.seek_prompt = false;
            } else if ui.screen == Screen::Atoms {
                ui.atoms.query.clear();
            } else if ui.screen == Screen::Failures {
                ui.failures.query.text.clear();
                let now = ui.now_ms;
                ui.failures.refilter(now);
            }
            return fx;
        }
        InputKey::Enter => {
            if ui.seek_prompt {
                ui.seek_prompt = false;
                if let Some(t) = ui.replay.as_mut() {
                    match t.parse_target(&text) {
                        Ok(to) => fx.push(t.seek(to)),
                        Err(e) => ui.flash(e, true),
                    }
                }
            } else if ui.screen == Screen::Run {
                find_task(ui, run, &text, &mut fx);
            }
            return fx;
        }
    }
    if ui.seek_prompt || ui.reason_for.is_some() {
        ui.input = Some(text);
        return fx;
    }
    if ui.screen == Screen::Atoms {
        ui.atoms.query = text.clone();
        ui.atoms.selected = 0;
    } else if ui.screen == Screen::Failures {
        ui.failures.query.text = text.clone();
        ui.failures.selected = 0;
        let now = ui.now_ms;
        ui.failures.refilter(now);
    }
    ui.input = Some(text);
    fx
}

fn find_task(ui: &mut UiState, run: &RunState, text: &str, fx: &mut Vec<Effect>) {
    let needle = text.to_lowercase();
    if needle.is_empty() {
        return;
    }
    let n = run.tasks.len();
    let found = (1..=n)
        .map(|k| (ui.task + k) % n)
        .find(|&i| run.tasks[i].id.to_lowercase().contains(&needle));
    match found {
        Some(i) => {
            super::follow::stop(ui);
            select_task(ui, run, i, fx)
        }
        None => ui.flash(format!("no task matches `{text}`"), true),
    }
}
