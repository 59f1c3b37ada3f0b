//! `update`: the UI's pure half. An action changes `UiState` and returns effects (engine
//! commands, store queries, quit) as data for the driver to carry out. This module
//! dispatches: each screen's keys live in their own module.

use std::sync::Arc;

use super::action::{Action, Screen};
use super::effect::Effect;
use super::ui_state::{Overlay, Pane, Question, Scroll, UiState};
use super::{atoms_keys, debate_keys, failures_keys, overlay_keys, run_keys, runs_keys};
use crate::model::event::{RunStatus, TaskStatus};
use crate::model::state::RunState;
use crate::run::engine::Control;

/// Applies an action.
pub fn update(ui: &mut UiState, run: &RunState, action: Action) -> Vec<Effect> {
    let mut fx = Vec::new();
    if let Some(overlay) = ui.overlay.clone() {
        // `q` quits from a popup as it does from the screen under it (asking while the
        // run is live); Esc only closes the popup.
        if action == Action::Quit && !matches!(overlay, Overlay::Confirm(_)) {
            ui.overlay = None;
        } else {
            overlay_keys::overlay_action(ui, run, overlay, action, &mut fx);
            return fx;
        }
    }
    if let Some(t) = ui.replay.as_mut() {
        if action == Action::ReplaySeek {
            ui.input = Some(String::new());
            ui.seek_prompt = true;
            return fx;
        }
        if let Some(acted) = t.act(action) {
            let mut fx = acted.effects;
            // A jump selects the task it reached (its index is the same at any event).
            if let Some(i) = acted
                .task
                .and_then(|id| run.tasks.iter().position(|t| t.id == id))
            {
                super::follow::stop(ui);
                super::select::select_task(ui, run, i, &mut fx);
                if ui.screen != Screen::Run {
                    ui.screen = Screen::Run;
                }
            }
            if let Some(say) = acted.say {
                ui.flash(say, false);
            }
            return fx;
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
            } else if run.awaiting_review > 0 {
                // Leaving is fine, but the next step should not be forgotten.
                ui.overlay = Some(Overlay::Confirm(Question::QuitWithReviews(
                    run.awaiting_review,
                )));
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
            } else if ui.screen == Screen::Run && run.debate.is_some() && debate_keys::back(ui) {
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
            // The newest at the bottom (the overlay clamps this to its last page).
            let top = usize::MAX / 2;
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
                .is_some_and(|d| debate_keys::keys(ui, d, action)) => {}
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
            Screen::Run => run_keys::run_screen(ui, run, action, &mut fx),
            Screen::Atoms => atoms_keys::atoms_screen(ui, run, action, &mut fx),
            Screen::Runs => runs_keys::runs_screen(ui, action, &mut fx),
            Screen::Failures => failures_keys::failures_screen(ui, run, action, &mut fx),
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
        Screen::Failures => failures_keys::load(ui, fx),
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
                .filter_map(|&d| run.tasks.get(d as usize))
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
