//! Finding the work on the Run screen: follow mode (the selection stays on the running
//! task nearest the front of the DAG, else on the latest failure), jumps to the next
//! task in a state (running, blocked, failed), and paging within a long layer.

use super::effect::Effect;
use super::select::select_task;
use super::ui_state::UiState;
use crate::model::event::TaskStatus;
use crate::model::state::{RunState, TaskView};

/// Where follow mode puts the selection: the running task nearest the front (lowest
/// layer, then leftmost), else the task that failed last.
pub fn follow_target(run: &RunState) -> Option<usize> {
    run.layers
        .iter()
        .flatten()
        .copied()
        .find(|&i| {
            run.tasks
                .get(i)
                .is_some_and(|t| t.status == TaskStatus::Running)
        })
        .or(run.last_failure)
}

/// Moves the selection to the follow target when follow mode is on.
pub fn apply(ui: &mut UiState, run: &RunState, fx: &mut Vec<Effect>) {
    if !ui.follow || ui.overlay.is_some() {
        return;
    }
    if let Some(t) = follow_target(run) {
        if t != ui.task {
            select_task(ui, run, t, fx);
        }
    }
}

/// Turns follow mode on or off.
pub fn toggle(ui: &mut UiState, run: &RunState, fx: &mut Vec<Effect>) {
    ui.follow = !ui.follow;
    if ui.follow {
        ui.flash(
            "following the work: the front running task, else the latest failure (F stops)",
            false,
        );
        apply(ui, run, fx);
    } else {
        ui.flash("follow off (F follows again)", false);
    }
}

/// A person moved the selection: follow mode stops, and says so.
pub fn stop(ui: &mut UiState) {
    if ui.follow {
        ui.follow = false;
        ui.flash(
            "follow off: you moved the selection (F follows again)",
            false,
        );
    }
}

/// Selects the next (`forward`) or previous task in DAG order (layer by layer) for
/// which `want` holds, wrapping; says which of how many it is, or that there is none.
pub fn jump(
    ui: &mut UiState,
    run: &RunState,
    forward: bool,
    what: &str,
    want: impl Fn(&TaskView) -> bool,
    fx: &mut Vec<Effect>,
) {
    let order: Vec<usize> = run.layers.iter().flatten().copied().collect();
    let hits: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| run.tasks.get(i).is_some_and(|t| want(t)))
        .collect();
    if hits.is_empty() {
        ui.flash(format!("no {what} task (yet)"), false);
        return;
    }
    stop(ui);
    let rank = |i: usize| order.iter().position(|&x| x == i).unwrap_or(0);
    let pos = rank(ui.task);
    let pick = if forward {
        hits.iter()
            .copied()
            .find(|&i| rank(i) > pos)
            .unwrap_or(hits[0])
    } else {
        hits.iter()
            .rev()
            .copied()
            .find(|&i| rank(i) < pos)
            .unwrap_or(hits[hits.len() - 1])
    };
    let k = hits.iter().position(|&i| i == pick).unwrap_or(0);
    select_task(ui, run, pick, fx);
    if let Some(t) = run.tasks.get(pick) {
        let code = t.error.map(|c| c.as_str()).unwrap_or("");
        ui.flash(
            format!(
                "{what} {}/{} · {} · {}{}{}",
                k + 1,
                hits.len(),
                t.id,
                t.status.as_str(),
                if code.is_empty() { "" } else { " · " },
                code
            ),
            false,
        );
    }
}

/// Moves the selection a page (eight lines of the DAG pane) left or right within its
/// layer.
pub fn page_in_layer(ui: &mut UiState, run: &RunState, right: bool, fx: &mut Vec<Effect>) {
    let Some(task) = run.tasks.get(ui.task) else {
        return;
    };
    let Some(row) = run.layers.get(task.layer as usize) else {
        return;
    };
    let pos = row.iter().position(|&t| t == ui.task).unwrap_or(0);
    let step = ui.dag_per_line.max(1) * 8;
    let next = if right {
        (pos + step).min(row.len().saturating_sub(1))
    } else {
        pos.saturating_sub(step)
    };
    if next != pos {
        stop(ui);
        select_task(ui, run, row[next], fx);
    }
}
