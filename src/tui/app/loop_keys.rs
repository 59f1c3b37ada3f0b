//! A tool-using loop read whole: Enter in the output pane opens a step (its thought,
//! calls with their arguments, observations, and a spilled observation's stored file);
//! the conversation view lists every message of the loop with its role and tokens.
//! The popups' state and their keys.

pub use super::views::{ConversationList, StepPopup};
use std::sync::Arc;

use super::action::Action;
use super::docs::DocKey;
use super::effect::Effect;
use super::nav::{move_in_list, scroll_value};
use super::select::ask;
use super::ui_state::{Overlay, UiState};
use crate::model::state::loop_view::TaskLoop;
use crate::model::state::RunState;

/// The loop the output pane shows for the selected task: the shown attempt's.
fn shown_loop<'a>(ui: &UiState, run: &'a RunState) -> Option<(usize, &'a TaskLoop)> {
    let task = run.tasks.get(ui.task)?;
    let (inv, _, _) = ui.shown_invocation(task)?;
    let found = task.loops.iter().find(|l| l.invocation == inv)?;
    Some((ui.task, found))
}

/// The loop of a popup.
pub fn popup_loop<'a>(run: &'a RunState, task: usize, inv: &str) -> Option<&'a TaskLoop> {
    run.tasks
        .get(task)?
        .loops
        .iter()
        .find(|l| &*l.invocation == inv)
}

/// Enter in the output pane: opens the step the pane shows (the first one from the top
/// of a scrolled pane, the newest one while it follows the tail).
pub fn open_step(ui: &mut UiState, run: &RunState, fx: &mut Vec<Effect>) {
    let Some((task, l)) = shown_loop(ui, run) else {
        ui.flash(
            "no tool-using loop here: Enter opens a step of a task whose agent uses tools",
            true,
        );
        return;
    };
    let Some(newest) = l.steps.last() else {
        ui.flash("the loop has asked for no tool yet", true);
        return;
    };
    let mut step = newest.step;
    if !ui.scroll.follow {
        if let Some(n) = step_from(run, task, ui.scroll.top) {
            if l.step(n).is_some() {
                step = n;
            }
        }
    }
    let popup = StepPopup {
        task,
        invocation: l.invocation.clone(),
        step,
        top: 0,
        back: None,
    };
    show_step(ui, run, popup, fx);
}

/// The number of the first step whose action line is at or after output line `top`.
fn step_from(run: &RunState, task: usize, top: usize) -> Option<u32> {
    let out = &run.tasks.get(task)?.output;
    (top..out.len()).find_map(|i| {
        let rest = out.line(i).strip_prefix("▸ step ")?;
        rest.split(' ').next()?.parse().ok()
    })
}

/// The conversation view of the selected task's loop, its last message selected.
pub fn open_conversation(ui: &mut UiState, run: &RunState) {
    let Some((task, l)) = shown_loop(ui, run) else {
        ui.flash(
            "no tool-using loop here: the conversation view shows a task whose agent uses tools",
            true,
        );
        return;
    };
    let rows = l.conversation().len();
    ui.overlay = Some(Overlay::Conversation(ConversationList {
        task,
        invocation: l.invocation.clone(),
        selected: rows.saturating_sub(1),
        top: usize::MAX / 2,
    }));
}

/// Opens a step's popup, asking for the stored files of its spilled observations.
fn show_step(ui: &mut UiState, run: &RunState, popup: StepPopup, fx: &mut Vec<Effect>) {
    if let Some(s) = popup_loop(run, popup.task, &popup.invocation).and_then(|l| l.step(popup.step))
    {
        for c in &s.calls {
            if let Some(path) = c.answer.as_ref().and_then(|a| a.data_file.as_deref()) {
                let key = DocKey::DataFile(popup.invocation.clone(), Arc::from(path));
                ask(ui, key, fx);
            }
        }
    }
    ui.overlay = Some(Overlay::LoopStep(popup));
}

/// Keys while a step is open: scroll, ← → the steps before and after, the conversation
/// key for the conversation, Esc back (to the conversation it came from, or closed).
pub fn step_action(
    ui: &mut UiState,
    run: &RunState,
    mut p: StepPopup,
    action: Action,
    fx: &mut Vec<Effect>,
) {
    match action {
        Action::Back | Action::Quit | Action::Open => {
            ui.overlay = p.back.map(Overlay::Conversation)
        }
        Action::Left | Action::Right => {
            let Some(l) = popup_loop(run, p.task, &p.invocation) else {
                return;
            };
            let Some(i) = l.steps.iter().position(|s| s.step == p.step) else {
                return;
            };
            let j = if action == Action::Left {
                i.checked_sub(1)
            } else {
                Some(i + 1).filter(|&j| j < l.steps.len())
            };
            match j {
                Some(j) => {
                    p.step = l.steps[j].step;
                    p.top = 0;
                    show_step(ui, run, p, fx);
                }
                None => ui.flash(
                    if action == Action::Left {
                        "this is the loop's first step"
                    } else {
                        "this is the loop's last step"
                    },
                    false,
                ),
            }
        }
        Action::LoopConversation => {
            let rows =
                popup_loop(run, p.task, &p.invocation).map_or(Vec::new(), |l| l.conversation());
            let selected = rows
                .iter()
                .position(|r| r.step == Some(p.step))
                .unwrap_or(0);
            ui.overlay = Some(Overlay::Conversation(ConversationList {
                task: p.task,
                invocation: p.invocation,
                selected,
                top: selected,
            }));
        }
        _ => {
            p.top = scroll_value(p.top, action, ui.list_rows);
            ui.overlay = Some(Overlay::LoopStep(p));
        }
    }
}

/// Keys in the conversation view: move, Enter opens the selected message's step, Esc
/// closes.
pub fn conversation_action(
    ui: &mut UiState,
    run: &RunState,
    mut c: ConversationList,
    action: Action,
    fx: &mut Vec<Effect>,
) {
    let rows = popup_loop(run, c.task, &c.invocation).map_or(Vec::new(), |l| l.conversation());
    match action {
        Action::Back | Action::Quit | Action::LoopConversation => ui.overlay = None,
        Action::Open => match rows.get(c.selected).and_then(|r| r.step) {
            Some(step) => {
                let popup = StepPopup {
                    task: c.task,
                    invocation: c.invocation.clone(),
                    step,
                    top: 0,
                    back: Some(c),
                };
                show_step(ui, run, popup, fx);
            }
            None => ui.flash(
                "this message belongs to no step: e shows the request, o the stream",
                false,
            ),
        },
        _ => {
            if let Some(s) = move_in_list(c.selected, rows.len(), action, ui.list_rows.max(1)) {
                c.selected = s;
            }
            ui.overlay = Some(Overlay::Conversation(c));
        }
    }
}
