//! Moving between a task's attempts (`[` / `]`) and between failed tasks (`n` / `N`) on
//! the Run screen. An earlier attempt is shown whole: its stream read back from the log,
//! its request, atoms and issues; the latest attempt is the live one.

use super::effect::Effect;
use super::select::{ask, request_docs};
use super::ui_state::{DocKey, OutputView, Scroll, UiState};
use crate::model::event::TaskStatus;
use crate::model::state::{RunState, TaskView};

/// Moves the selected attempt of the selected task by `step` (−1 or +1).
pub fn move_attempt(ui: &mut UiState, run: &RunState, step: isize, fx: &mut Vec<Effect>) {
    let Some(task) = run.tasks.get(ui.task) else {
        return;
    };
    let n = task.invocations.len();
    if n == 0 {
        ui.flash(format!("{} has not started an attempt yet", task.id), true);
        return;
    }
    let cur = ui.attempt.filter(|&k| k < n).unwrap_or(n - 1);
    let next = cur as isize + step;
    if next < 0 || next >= n as isize {
        let which = if next < 0 { "first" } else { "latest" };
        ui.flash(format!("attempt {}/{n} is the {which}", cur + 1), false);
        return;
    }
    let next = next as usize;
    super::follow::stop(ui);
    ui.attempt = (next + 1 < n).then_some(next);
    let inv = task.invocations[next].clone();
    ui.flash(format!("attempt {}/{n} · {inv}", next + 1), false);
    show_attempt(ui, task, &inv, fx);
    request_docs(ui, run, fx);
}

/// Points the output pane at attempt `inv`: an earlier attempt's stream comes from the
/// log; the latest is the live buffer, scrolled to where the attempt starts.
fn show_attempt(
    ui: &mut UiState,
    task: &TaskView,
    inv: &std::sync::Arc<str>,
    fx: &mut Vec<Effect>,
) {
    if ui.view != OutputView::Raw {
        ui.scroll = Scroll {
            top: 0,
            follow: false,
        };
        return;
    }
    if ui.earlier_attempt(task) {
        ui.scroll = Scroll {
            top: 0,
            follow: false,
        };
        ask(ui, DocKey::Stream(inv.clone()), fx);
        return;
    }
    let start = (0..task.output.len()).rev().find(|&i| {
        let l = task.output.line(i);
        l.starts_with("── attempt ") && l.contains(&**inv)
    });
    ui.scroll = match start {
        Some(top) => Scroll { top, follow: false },
        None => Scroll::default(),
    };
}

/// Whether a task counts as a failure for `n` / `N`: it failed, timed out or ended
/// partial, or one of its attempts was retried.
pub fn is_failure(t: &TaskView) -> bool {
    matches!(
        t.status,
        TaskStatus::Failed | TaskStatus::Timeout | TaskStatus::Partial
    ) || t.retries > 0
}

/// Selects the next (`forward`) or previous failure in DAG order (layer by layer),
/// wrapping around.
pub fn jump_failure(ui: &mut UiState, run: &RunState, forward: bool, fx: &mut Vec<Effect>) {
    super::follow::jump(ui, run, forward, "failure", is_failure, fx);
}
