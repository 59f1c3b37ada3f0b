//! Keys of the Failures screen and of its attempt overlay: move, filter, sort, search,
//! `n` / `N` between rows, Enter to open an attempt (its stream, request, atoms and
//! issues), `[` / `]` to the task's other failed attempts, Enter again to find the
//! task in the run on screen.

use std::sync::Arc;

use super::action::{Action, Screen};
use super::effect::Effect;
use super::failures_list::{cycle, status_of, Window};
use super::nav::{move_in_list, scroll_value};
use super::select::{ask, select_task};
use super::ui_state::{AttemptView, OutputView, Overlay, UiState};
use crate::state::RunState;
use crate::store::FailedInvocation;

/// The clock the time filter counts back from.
fn now(ui: &UiState) -> i64 {
    if ui.now_ms > 0 {
        ui.now_ms
    } else {
        chrono::Utc::now().timestamp_millis()
    }
}

/// Asks for the list: of the run on screen, or of every run.
pub fn load(ui: &mut UiState, fx: &mut Vec<Effect>) {
    load_for(ui, None, fx);
}

/// Asks for the list, of `run` when only this run's failures are shown.
pub fn load_for(ui: &mut UiState, run: Option<&str>, fx: &mut Vec<Effect>) {
    let f = &mut ui.failures;
    f.loading = true;
    f.stale = false;
    f.asked_ms = now_ms_of(ui.now_ms);
    let scope = run.map(str::to_string).or_else(|| ui.failures_run.clone());
    fx.push(Effect::LoadFailures(
        scope.filter(|_| ui.failures.this_run_only),
    ));
}

fn now_ms_of(n: i64) -> i64 {
    if n > 0 {
        n
    } else {
        chrono::Utc::now().timestamp_millis()
    }
}

/// Handles an action on the Failures screen.
pub fn failures_screen(ui: &mut UiState, run: &RunState, action: Action, fx: &mut Vec<Effect>) {
    if action == Action::ReviewQueue {
        ui.failures.review = !ui.failures.review;
        if ui.failures.review {
            let scope = ui
                .failures_run
                .clone()
                .filter(|_| ui.failures.this_run_only);
            fx.push(Effect::LoadReviews(scope));
        }
        return;
    }
    if ui.failures.review && super::review_keys::review_action(ui, action, fx) {
        return;
    }
    let n = ui.failures.view.len();
    let page = ui.list_rows.max(1);
    if let Some(sel) = move_in_list(ui.failures.selected, n, action, page) {
        ui.failures.selected = sel;
        return;
    }
    let t = now(ui);
    let f = &mut ui.failures;
    match action {
        Action::NextFailure | Action::PrevFailure if n > 0 => {
            f.selected = if action == Action::NextFailure {
                (f.selected + 1) % n
            } else {
                (f.selected + n - 1) % n
            };
        }
        Action::Sort => {
            // Only by a column on screen.
            f.query.sort = f.next_sort();
            f.refilter(t);
        }
        Action::SortReverse => {
            f.query.reverse = !f.query.reverse;
            f.refilter(t);
        }
        Action::FilterGrade => {
            let codes = f.values(|r| r.error_codes.clone());
            f.query.code = cycle(&f.query.code, &codes);
            f.selected = 0;
            f.refilter(t);
        }
        Action::FilterAgent => {
            let agents = f.values(|r| vec![r.agent.clone()]);
            f.query.agent = cycle(&f.query.agent, &agents);
            f.selected = 0;
            f.refilter(t);
        }
        Action::FilterType => {
            let statuses = f.values(|r| vec![status_of(r).to_string()]);
            f.query.status = cycle(&f.query.status, &statuses);
            f.selected = 0;
            f.refilter(t);
        }
        Action::FilterTime => {
            let i = Window::ALL
                .iter()
                .position(|&w| w == f.query.window)
                .unwrap_or(0);
            f.query.window = Window::ALL[(i + 1) % Window::ALL.len()];
            f.selected = 0;
            f.refilter(t);
        }
        Action::FilterRun => {
            // This run → every run → each run in the list in turn → this run again.
            let here = (!run.run_id.is_empty())
                .then(|| run.run_id.clone())
                .or_else(|| ui.failures_run.clone());
            f.selected = 0;
            if f.this_run_only {
                f.this_run_only = false;
                f.query.run = None;
                load_for(ui, None, fx);
                return;
            }
            let runs = f.values(|r| vec![r.run_id.clone()]);
            let next = cycle(&f.query.run, &runs);
            if next.is_none() && here.is_some() {
                f.this_run_only = true;
                f.query.run = None;
                ui.failures_run = here.clone();
                load_for(ui, here.as_deref(), fx);
            } else {
                f.query.run = next;
                f.refilter(t);
            }
        }
        Action::ClearFilters => {
            f.query = Default::default();
            f.selected = 0;
            f.refilter(t);
        }
        Action::Open => {
            if let Some(row) = f.selected_row().cloned() {
                open_attempt(ui, &row, OutputView::Issues, fx);
            }
        }
        _ => {}
    }
}

/// Opens the attempt overlay on `row`.
fn open_attempt(ui: &mut UiState, row: &FailedInvocation, view: OutputView, fx: &mut Vec<Effect>) {
    let v = AttemptView {
        invocation: Arc::from(row.invocation_id.as_str()),
        title: format!(
            "{} · {} · attempt {}/{} · {} · {}",
            row.run_id,
            row.task_id,
            row.attempt,
            row.attempts,
            row.agent,
            status_of(row)
        ),
        view,
        top: 0,
    };
    ask(ui, v.doc(), fx);
    ui.overlay = Some(Overlay::Attempt(v));
}

/// Handles an action while the attempt overlay is open.
pub fn attempt_action(
    ui: &mut UiState,
    run: &RunState,
    mut v: AttemptView,
    action: Action,
    fx: &mut Vec<Effect>,
) {
    let switch = match action {
        Action::ViewRaw => Some(OutputView::Raw),
        Action::ViewRequest => Some(OutputView::Request),
        Action::ViewAtoms => Some(OutputView::Atoms),
        Action::ViewIssues => Some(OutputView::Issues),
        _ => None,
    };
    if let Some(view) = switch {
        v.view = view;
        v.top = 0;
        ask(ui, v.doc(), fx);
        ui.overlay = Some(Overlay::Attempt(v));
        return;
    }
    match action {
        Action::Back | Action::Quit => ui.overlay = None,
        Action::NextFailure | Action::PrevFailure => {
            let n = ui.failures.view.len();
            if n > 0 {
                let f = &mut ui.failures;
                f.selected = if action == Action::NextFailure {
                    (f.selected + 1) % n
                } else {
                    (f.selected + n - 1) % n
                };
                if let Some(row) = f.selected_row().cloned() {
                    open_attempt(ui, &row, v.view, fx);
                }
            }
        }
        Action::PrevAttempt | Action::NextAttempt => {
            let Some(cur) = ui.failures.selected_row().cloned() else {
                return;
            };
            let rows = ui.failures.rows.clone().unwrap_or_default();
            // The same task's other failed attempts in the view, by attempt number.
            let mut same: Vec<(u32, usize)> = ui
                .failures
                .view
                .iter()
                .enumerate()
                .filter(|(_, &i)| rows[i].run_id == cur.run_id && rows[i].task_id == cur.task_id)
                .map(|(p, &i)| (rows[i].attempt, p))
                .collect();
            same.sort();
            let k = same
                .iter()
                .position(|&(a, _)| a == cur.attempt)
                .unwrap_or(0);
            let next = if action == Action::NextAttempt {
                same.get(k + 1)
            } else {
                k.checked_sub(1).and_then(|j| same.get(j))
            };
            match next {
                Some(&(_, p)) => {
                    ui.failures.selected = p;
                    if let Some(row) = ui.failures.selected_row().cloned() {
                        open_attempt(ui, &row, v.view, fx);
                    }
                }
                None => ui.flash(
                    format!(
                        "no {} failed attempt of {} in the list",
                        if action == Action::NextAttempt {
                            "later"
                        } else {
                            "earlier"
                        },
                        cur.task_id
                    ),
                    false,
                ),
            }
        }
        Action::Open => {
            // Find the task in the run on screen.
            let Some(row) = ui.failures.selected_row().cloned() else {
                return;
            };
            if row.run_id != run.run_id {
                ui.flash(
                    format!(
                        "{} is another run: open it from the Runs screen (3) to see its DAG",
                        row.run_id
                    ),
                    true,
                );
                return;
            }
            let Some(t) = run.tasks.iter().position(|t| *t.id == *row.task_id) else {
                return;
            };
            ui.overlay = None;
            ui.screen = Screen::Run;
            super::follow::stop(ui);
            select_task(ui, run, t, fx);
            let task = &run.tasks[t];
            let k = task
                .invocations
                .iter()
                .position(|i| **i == *row.invocation_id);
            ui.attempt = k.filter(|&k| k + 1 < task.invocations.len());
            ui.view = v.view;
            super::select::request_docs(ui, run, fx);
        }
        _ => {
            v.top = scroll_value(v.top, action, ui.list_rows);
            ui.overlay = Some(Overlay::Attempt(v));
        }
    }
}
