//! The mouse: a click selects a screen tab, a task in the DAG, a row of a list, or
//! focuses the pane under it; the wheel scrolls what is under the pointer. Hit-tested
//! against where the last frame drew things ([`super::ui_state::LastLayout`]).

use ratatui::layout::Rect;

use super::action::{Action, Screen};
use super::effect::Effect;
use super::select::select_task;
use super::ui_state::{Pane, UiState};
use super::update::update;
use crate::model::state::RunState;

fn inside(r: &Rect, col: u16, row: u16) -> bool {
    col >= r.x && col < r.x + r.width && row >= r.y && row < r.y + r.height
}

/// A left click at (`col`, `row`).
pub fn click(ui: &mut UiState, run: &RunState, col: u16, row: u16) -> Vec<Effect> {
    let mut fx = Vec::new();
    if ui.overlay.is_some() {
        return fx;
    }
    if row == ui.layout.header_y {
        if let Some(&(_, _, s)) = ui
            .layout
            .tabs
            .iter()
            .find(|(a, b, _)| col >= *a && col < *b)
        {
            let a = match s {
                Screen::Run => Action::ScreenRun,
                Screen::Atoms => Action::ScreenAtoms,
                Screen::Runs => Action::ScreenRuns,
                Screen::Failures => Action::ScreenFailures,
            };
            return update(ui, run, a);
        }
        return fx;
    }
    if ui.screen == Screen::Run {
        if let Some(&(_, t)) = ui
            .layout
            .dag_cells
            .iter()
            .find(|(r, _)| inside(r, col, row))
        {
            ui.focus = Pane::Dag;
            super::follow::stop(ui);
            select_task(ui, run, t, &mut fx);
            return fx;
        }
        if let Some(&(_, p)) = ui.layout.panes.iter().find(|(r, _)| inside(r, col, row)) {
            ui.focus = p;
        }
        return fx;
    }
    if let Some((area, top)) = ui.layout.list {
        if inside(&area, col, row) {
            let k = top + usize::from(row - area.y);
            match ui.screen {
                Screen::Atoms => ui.atoms.selected = k,
                Screen::Runs => ui.runs.selected = k,
                Screen::Failures if ui.failures.review => ui.failures.queue_selected = k,
                Screen::Failures => ui.failures.selected = k,
                Screen::Run => {}
            }
        }
    }
    fx
}

/// The wheel at (`col`, `row`): three lines up or down in what is under the pointer.
pub fn wheel(ui: &mut UiState, run: &RunState, col: u16, row: u16, up: bool) -> Vec<Effect> {
    let a = if up { Action::Up } else { Action::Down };
    let mut fx = Vec::new();
    let debate = run.debate.is_some();
    if ui.screen == Screen::Run && ui.overlay.is_none() && !debate {
        let under = ui
            .layout
            .panes
            .iter()
            .find(|(r, _)| inside(r, col, row))
            .map(|&(_, p)| p);
        let Some(p) = under else { return fx };
        if !matches!(p, Pane::Dag | Pane::Output) {
            return fx;
        }
        let before = ui.focus;
        ui.focus = p;
        for _ in 0..3 {
            fx.extend(update(ui, run, a));
        }
        ui.focus = before;
        return fx;
    }
    for _ in 0..3 {
        fx.extend(update(ui, run, a));
    }
    fx
}
