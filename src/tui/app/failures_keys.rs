//! Keys of the Failures screen and of its attempt overlay: move, filter, sort, search,
//! `n` / `N` between rows, Enter to open an attempt (its stream, request, atoms and
//! issues), `[` / `]` to the task's other failed attempts, Enter again to find the
//! task in the run on screen.

pub use super::views::Find;
use std::sync::Arc;

use super::action::{Action, Screen};
use super::effect::Effect;
use super::failures_list::{cycle, status_of, FailuresList, Window};
use super::nav::{move_in_list, scroll_value};
use super::select::{ask, select_task};
use super::ui_state::{AttemptView, OutputView, Overlay, Scroll, UiState};
use crate::data::store::FailedInvocation;
use crate::model::state::RunState;

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
            fx.push(Effect::LoadReviews(ui.review_scope()));
        }
        return;
    }
    if ui.failures.review && super::review_keys::review_action(ui, action) {
        return;
    }
    let n = ui.failures.view.len();
    let page = ui.list_rows.max(1);
    if let Some(sel) = move_in_list(ui.failures.selected, n, action, page) {
        ui.failures.selected = sel;
        return;
    }
    let t = now(ui);
    match action {
        Action::NextFailure | Action::PrevFailure if n > 0 => {
            let f = &mut ui.failures;
            f.selected = if action == Action::NextFailure {
                (f.selected + 1) % n
            } else {
                (f.selected + n - 1) % n
            };
        }
        Action::FilterRun => filter_run(ui, run, t, fx),
        Action::Open => {
            if let Some(row) = ui.failures.selected_row().cloned() {
                open_attempt(ui, &row, OutputView::Issues, fx);
            }
        }
        _ => sort_or_filter(&mut ui.failures, action, t),
    }
}

/// Sorts the list or cycles one of its filters (`t` the clock the time filter counts
/// back from); other actions do nothing.
fn sort_or_filter(f: &mut FailuresList, action: Action, t: i64) {
    match action {
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
        Action::ClearFilters => {
            f.query = Default::default();
            f.selected = 0;
            f.refilter(t);
        }
        _ => {}
    }
}

/// The run filter: this run → every run → each run in the list in turn → this run
/// again (a change of scope loads the list anew).
fn filter_run(ui: &mut UiState, run: &RunState, t: i64, fx: &mut Vec<Effect>) {
    let here = (!run.run_id.is_empty())
        .then(|| run.run_id.clone())
        .or_else(|| ui.failures_run.clone());
    let f = &mut ui.failures;
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
            step_attempt(ui, v.view, action == Action::NextAttempt, fx);
        }
        Action::Open => {
            // Find the task in the run: the one on screen, or the row's run opened.
            let Some(row) = ui.failures.selected_row().cloned() else {
                return;
            };
            let find = Find {
                run_id: row.run_id.clone(),
                task_id: row.task_id.clone(),
                invocation_id: row.invocation_id.clone(),
                view: v.view,
            };
            ui.overlay = None;
            if row.run_id == run.run_id {
                find_in_run(ui, run, &find, fx);
            } else {
                ui.flash(
                    format!("opening {} at its end to find {}…", row.run_id, row.task_id),
                    false,
                );
                ui.failures.find = Some(find);
                fx.push(Effect::FindInRun(row.run_id));
            }
        }
        _ => {
            v.top = scroll_value(v.top, action, ui.list_rows);
            ui.overlay = Some(Overlay::Attempt(v));
        }
    }
}

/// `[` / `]` in the attempt overlay: to the same task's previous or next attempt in the
/// list, saying which attempts those are, and why a later one that did not fail is not.
fn step_attempt(ui: &mut UiState, view: OutputView, forward: bool, fx: &mut Vec<Effect>) {
    let Some(cur) = ui.failures.selected_row().cloned() else {
        return;
    };
    let rows = ui.failures.rows.clone().unwrap_or_default();
    // The same task's attempts in the view, by attempt number.
    let mut same: Vec<(u32, usize)> = ui
        .failures
        .view
        .iter()
        .enumerate()
        .filter(|(_, &i)| rows[i].run_id == cur.run_id && rows[i].task_id == cur.task_id)
        .map(|(p, &i)| (rows[i].attempt, p))
        .collect();
    same.sort();
    let listed: Vec<String> = same.iter().map(|(a, _)| a.to_string()).collect();
    let listed = format!("listed attempts {}", listed.join(", "));
    // Attempts after the last listed one did not fail (or are filtered out).
    let last_listed = same.last().map_or(0, |&(a, _)| a);
    let k = same
        .iter()
        .position(|&(a, _)| a == cur.attempt)
        .unwrap_or(0);
    let next = if forward {
        same.get(k + 1)
    } else {
        k.checked_sub(1).and_then(|j| same.get(j))
    };
    let n = cur.attempts;
    let say = match next {
        Some(&(a, p)) => {
            ui.failures.selected = p;
            if let Some(row) = ui.failures.selected_row().cloned() {
                open_attempt(ui, &row, view, fx);
            }
            format!("attempt {a}/{n} · {listed}")
        }
        None if forward && last_listed < n => {
            let later: Vec<String> = (last_listed + 1..=n).map(|a| a.to_string()).collect();
            format!(
                "attempt {} of {n} not listed: it did not fail (or is filtered out) · Enter opens the task in its run",
                later.join(", ")
            )
        }
        None if forward => format!("attempt {}/{n} is the last · {listed}", cur.attempt),
        None => format!("attempt {}/{n} is the first listed · {listed}", cur.attempt),
    };
    ui.flash(say, false);
}

/// Selects `find`'s task on the Run screen with its attempt shown; false when the run on
/// screen is another one or has no such task (yet).
pub fn find_in_run(ui: &mut UiState, run: &RunState, find: &Find, fx: &mut Vec<Effect>) -> bool {
    if run.run_id != find.run_id {
        return false;
    }
    let Some(t) = run.tasks.iter().position(|t| *t.id == *find.task_id) else {
        return false;
    };
    ui.overlay = None;
    ui.screen = Screen::Run;
    super::follow::stop(ui);
    select_task(ui, run, t, fx);
    let task = &run.tasks[t];
    let n = task.invocations.len();
    let k = task
        .invocations
        .iter()
        .position(|i| **i == *find.invocation_id);
    ui.attempt = k.filter(|&k| k + 1 < n);
    ui.view = find.view;
    // The document from its top: it leads with what went wrong.
    ui.scroll = Scroll {
        top: 0,
        follow: find.view == OutputView::Raw,
    };
    if let Some(k) = k {
        ui.flash(
            format!("{} · attempt {}/{n} · {}", find.task_id, k + 1, find.run_id),
            false,
        );
    }
    super::select::request_docs(ui, run, fx);
    true
}
