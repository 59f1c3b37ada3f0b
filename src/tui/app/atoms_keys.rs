//! The Atoms screen's keys: moving, sorting and filtering the table, opening an atom.

use std::sync::Arc;

use super::action::Action;
use super::atoms_view::atom_view;
use super::effect::Effect;
use super::nav::move_in_list;
use super::select::ask;
use super::ui_state::{AtomSort, DocKey, Overlay, UiState};
use crate::base::protocol::Grade;
use crate::model::state::RunState;

/// Applies an action on the Atoms screen.
pub fn atoms_screen(ui: &mut UiState, run: &RunState, action: Action, fx: &mut Vec<Effect>) {
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
