//! The Run screen's keys: output views, attempts, following, and moving the DAG
//! selection or scrolling the output.

use super::action::Action;
use super::effect::Effect;
use super::select::{request_docs, select_task};
use super::ui_state::{OutputView, Pane, Scroll, UiState};
use super::{attempts, follow, loop_keys};
use crate::model::event::TaskStatus;
use crate::model::state::RunState;

/// Applies an action on the Run screen.
pub fn run_screen(ui: &mut UiState, run: &RunState, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Open if ui.focus == Pane::Output => loop_keys::open_step(ui, run, fx),
        Action::Open => ui.focus = Pane::Output,
        Action::LoopConversation => loop_keys::open_conversation(ui, run),
        Action::FocusNext => {
            let i = Pane::ORDER.iter().position(|&p| p == ui.focus).unwrap_or(0);
            ui.focus = Pane::ORDER[(i + 1) % Pane::ORDER.len()];
        }
        Action::ViewRaw => set_view(ui, run, OutputView::Raw, fx),
        Action::ViewAtoms => set_view(ui, run, OutputView::Atoms, fx),
        Action::ViewRequest => set_view(ui, run, OutputView::Request, fx),
        Action::ViewIssues => set_view(ui, run, OutputView::Issues, fx),
        Action::ViewContext => set_view(ui, run, OutputView::Context, fx),
        Action::PrevAttempt => attempts::move_attempt(ui, run, -1, fx),
        Action::NextAttempt => attempts::move_attempt(ui, run, 1, fx),
        Action::NextFailure => attempts::jump_failure(ui, run, true, fx),
        Action::PrevFailure => attempts::jump_failure(ui, run, false, fx),
        Action::Follow => follow::toggle(ui, run, fx),
        Action::NextRunning => follow::jump(
            ui,
            run,
            true,
            "running",
            |t| t.status == TaskStatus::Running,
            fx,
        ),
        Action::NextBlocked => follow::jump(
            ui,
            run,
            true,
            "blocked",
            |t| t.status == TaskStatus::Blocked,
            fx,
        ),
        Action::LayerPageLeft => follow::page_in_layer(ui, run, false, fx),
        Action::LayerPageRight => follow::page_in_layer(ui, run, true, fx),
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
    let layer = (run.tasks[cur].layer as usize).min(run.layers.len().saturating_sub(1));
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
        follow::stop(ui);
        select_task(ui, run, n, fx);
    }
}
