//! Selecting a task and asking for the documents its output view needs, shared by the
//! screens' key handlers.

use super::docs::{Doc, DocKey};
use super::effect::Effect;
use super::ui_state::{OutputView, Scroll, UiState};
use crate::model::state::RunState;

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
