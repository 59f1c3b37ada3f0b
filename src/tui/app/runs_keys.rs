//! The Runs screen's keys: moving, opening a run, marking two runs to compare,
//! clearing the `/` filter.

use super::action::Action;
use super::effect::Effect;
use super::nav::move_in_list;
use super::ui_state::UiState;

/// Applies an action on the Runs screen.
pub fn runs_screen(ui: &mut UiState, action: Action, fx: &mut Vec<Effect>) {
    let n = ui.runs.view().len();
    let page = ui.list_rows.max(1);
    let r = &mut ui.runs;
    if let Some(sel) = move_in_list(r.selected, n, action, page) {
        r.selected = sel;
        return;
    }
    let selected = r.selected_row().map(|row| row.run_id.clone());
    match (action, selected) {
        (Action::ClearFilters, _) if !ui.runs.query.is_empty() => {
            ui.runs.query.clear();
            ui.runs.selected = 0;
            ui.flash("filter cleared", false);
        }
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
