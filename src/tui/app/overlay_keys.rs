//! Keys while an overlay is open: the confirm question, help, text, an attempt, an atom,
//! a loop's step or conversation.

use super::action::Action;
use super::effect::Effect;
use super::nav::scroll_value;
use super::ui_state::{Overlay, Question, UiState};
use super::{failures_keys, loop_keys};
use crate::model::state::RunState;
use crate::run::engine::Control;

/// Applies an action to the open overlay.
pub fn overlay_action(
    ui: &mut UiState,
    run: &RunState,
    overlay: Overlay,
    action: Action,
    fx: &mut Vec<Effect>,
) {
    match overlay {
        Overlay::Confirm(q) => confirm_action(ui, run, q, action, fx),
        Overlay::Help { top } => match action {
            Action::Back | Action::Help | Action::Quit => ui.overlay = None,
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::Help { top });
            }
        },
        Overlay::Evidence { lines, top } => match action {
            Action::Back | Action::Open | Action::Quit => ui.overlay = None,
            Action::ReviewAccept | Action::ReviewReject => {
                ui.overlay = None;
                super::review_keys::review_action(ui, action);
            }
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::Evidence { lines, top });
            }
        },
        Overlay::Text { title, lines, top } => match action {
            Action::Back | Action::Open | Action::Quit => ui.overlay = None,
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::Text { title, lines, top });
            }
        },
        Overlay::Attempt(view) => failures_keys::attempt_action(ui, run, view, action, fx),
        Overlay::LoopStep(p) => loop_keys::step_action(ui, run, p, action, fx),
        Overlay::Conversation(c) => loop_keys::conversation_action(ui, run, c, action, fx),
        Overlay::AtomDetail { atom, top } => match action {
            Action::Back | Action::Open | Action::Quit => ui.overlay = None,
            _ => {
                let top = scroll_value(top, action, ui.list_rows);
                ui.overlay = Some(Overlay::AtomDetail { atom, top });
            }
        },
    }
}

/// Answers the confirm question `q` with `action`: Confirm (or Quit pressed again for a
/// quit) carries it out, anything else drops it.
fn confirm_action(
    ui: &mut UiState,
    run: &RunState,
    q: Question,
    action: Action,
    fx: &mut Vec<Effect>,
) {
    ui.overlay = None;
    // Quit pressed again (ctrl-c ctrl-c, q q) confirms the quit.
    let again =
        matches!(q, Question::Quit | Question::QuitWithReviews(_)) && action == Action::Quit;
    if action == Action::Confirm || again {
        match q {
            Question::Quit => {
                fx.push(Effect::Engine(Control::Interrupt));
                fx.push(Effect::Quit);
                ui.quitting = true;
            }
            Question::QuitWithReviews(_) => {
                if ui.engine_attached {
                    fx.push(Effect::Engine(Control::Interrupt));
                }
                fx.push(Effect::Quit);
                ui.quitting = true;
            }
            Question::Accept => super::review_keys::accept_confirmed(ui, fx),
            Question::Cancel => {
                if run.is_live() {
                    fx.push(Effect::Engine(Control::Cancel(
                        "cancelled from the terminal".into(),
                    )));
                }
            }
        }
    }
    // An acceptance not confirmed is dropped.
    ui.accept_pending = None;
}
