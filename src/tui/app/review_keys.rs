//! The review queue on the Failures screen (`v`): the tasks a hallucination stopped for
//! a person, with their evidence (`Enter`), accepted with `Y` (after a confirmation) or
//! rejected with `X` and a reason, from the list or from inside the evidence. A decision on the run this session executes goes to its engine (the task's
//! dependents run at once); on any other run it is written to the database directly,
//! and its dependents run on `plexus resume`.

use std::sync::Arc;

use super::action::Action;
use super::effect::Effect;
use super::nav::move_in_list;
use super::ui_state::{Overlay, Question, UiState};
use crate::run::review::{ReviewItem, Verdict};

/// Handles an action while the review queue is shown; `false` when it is not one of
/// the queue's.
pub fn review_action(ui: &mut UiState, action: Action) -> bool {
    let n = ui.failures.queue.as_ref().map_or(0, Vec::len);
    let page = ui.list_rows.max(1);
    if let Some(sel) = move_in_list(ui.failures.queue_selected, n, action, page) {
        ui.failures.queue_selected = sel;
        return true;
    }
    let item = selected(ui).cloned();
    match (action, item) {
        (Action::NextFailure | Action::PrevFailure, _) if n > 0 => {
            let f = &mut ui.failures;
            f.queue_selected = if action == Action::NextFailure {
                (f.queue_selected + 1) % n
            } else {
                (f.queue_selected + n - 1) % n
            };
        }
        (Action::Open, Some(item)) => {
            ui.overlay = Some(Overlay::Evidence {
                lines: Arc::new(evidence(&item)),
                top: 0,
            });
        }
        (Action::ReviewAccept, Some(item)) => {
            if let Some(why) = decided(&item) {
                ui.flash(why, true);
            } else {
                // Accepting stores atoms a check called made up: asked first.
                ui.accept_pending = Some((item.run_id, item.task_id));
                ui.overlay = Some(Overlay::Confirm(Question::Accept));
            }
        }
        (Action::ReviewReject, Some(item)) => {
            if let Some(why) = decided(&item) {
                ui.flash(why, true);
            } else {
                ui.reason_for = Some((item.run_id, item.task_id));
                ui.input = Some(String::new());
            }
        }
        (Action::ReviewAccept | Action::ReviewReject | Action::Open, None) => {
            ui.flash("nothing waits for review", false);
        }
        _ => return false,
    }
    true
}

/// Sends the acceptance a person confirmed (the review in [`UiState::accept_pending`]).
pub fn accept_confirmed(ui: &mut UiState, fx: &mut Vec<Effect>) {
    if let Some((run, task)) = ui.accept_pending.take() {
        ui.flash(format!("accepting {task}…"), false);
        fx.push(Effect::Review {
            run,
            task,
            verdict: Verdict::Accept { note: None },
        });
    }
}

/// The item selected in the queue.
pub fn selected(ui: &UiState) -> Option<&ReviewItem> {
    ui.failures
        .queue
        .as_ref()
        .and_then(|q| q.get(ui.failures.queue_selected))
}

/// Why no decision can be made on `item` (decided already, or retried since), if so.
fn decided(item: &ReviewItem) -> Option<String> {
    if item.retried && item.decision.is_none() {
        return Some(format!(
            "{}'s answer of try {} was retried: the later attempt stands, nothing to decide here",
            item.task_id, item.attempt
        ));
    }
    item.decision.as_ref().map(|d| {
        format!(
            "{} was already {} by {} at {}: a decision is final",
            item.task_id,
            match d.decision {
                crate::run::review::DecisionKind::Accepted => "accepted",
                crate::run::review::DecisionKind::Rejected => "rejected",
            },
            d.reviewer,
            d.decided_at
        )
    })
}

/// The evidence of an item, as lines to read.
pub fn evidence(item: &ReviewItem) -> Vec<String> {
    let mut out = vec![
        format!(
            "{} · {} · attempt {} · {} · {}",
            item.task_id, item.agent, item.attempt, item.invocation_id, item.status
        ),
        format!(
            "why it stopped: {}",
            item.message
                .as_deref()
                .unwrap_or("a reference to an asset that does not exist")
        ),
        format!(
            "mean score {:.2} · grades A {} B {} C {} D {}",
            item.avg_score, item.grades.a, item.grades.b, item.grades.c, item.grades.d
        ),
        String::new(),
        format!(
            "references to assets that do not exist ({}):",
            item.fabricated.len()
        ),
    ];
    for f in &item.fabricated {
        out.push(format!("  {} names {}", f.atom_id, f.reference));
    }
    if !item.issues.is_empty() {
        out.push(String::new());
        out.push(format!("quality issues ({}):", item.issues.len()));
        for i in &item.issues {
            out.push(format!(
                "  {} · {:?} · {} · {}",
                i.atom_id, i.severity, i.issue_type, i.message
            ));
        }
    }
    if !item.summary.is_empty() {
        out.push(String::new());
        out.push(format!("summary: {}", item.summary));
    }
    out.push(String::new());
    out.push(format!("atoms as parsed ({}):", item.atoms.len()));
    for a in &item.atoms {
        let text = serde_json::to_string_pretty(a).unwrap_or_default();
        out.extend(text.lines().map(|l| format!("  {l}")));
    }
    out.push(String::new());
    match &item.decision {
        Some(d) => out.push(format!(
            "decided: {:?} by {} at {}{}",
            d.decision,
            d.reviewer,
            d.decided_at,
            d.note.as_deref().map(|n| format!(" — {n}")).unwrap_or_default()
        )),
        None if item.retried => out.push(
            "retried: the task ran again after this answer; the later attempt stands · Esc closes"
                .into(),
        ),
        None => out.push(
            "Y accepts the atoms (asks first; the task's dependents run) · X rejects with a reason · Esc closes"
                .into(),
        ),
    }
    out
}
