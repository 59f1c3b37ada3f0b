//! What a task's run ends with: the signal that stops a worker early, the outcome it
//! reports to the coordinator, and the outcome of a batched task aggregated from its
//! batches (seed 000 §6.2).

use std::sync::Arc;

use tokio::sync::watch;

use super::run_ctx::RunCtx;
use crate::base::protocol::{Atom, ErrorCode, GradeCounts, ResponseOutput};
use crate::model::event::TaskStatus;

/// Why a worker stops before its task finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// Keep going.
    None,
    /// Cancel: the task ends `cancelled`.
    Cancel,
    /// Interrupt: the task goes back to pending, to run again on resume.
    Interrupt,
}

impl StopSignal {
    /// The task status a stop leaves behind.
    pub(super) fn task_status(self) -> TaskStatus {
        if self == StopSignal::Cancel {
            TaskStatus::Cancelled
        } else {
            TaskStatus::Pending
        }
    }
}

/// What a worker reports back.
#[derive(Debug, Clone)]
pub struct TaskOutcome {
    /// Final status (`Cancelled` for cancel, `Pending` for interrupt).
    pub status: TaskStatus,
    /// Invocations made.
    pub attempts: u32,
    /// Atoms accepted.
    pub atoms: u32,
    /// Deciding error.
    pub error_code: Option<ErrorCode>,
    /// Atoms and summary when the task produced usable output.
    pub output: Option<Arc<ResponseOutput>>,
    /// Grades of accepted atoms.
    pub grades: GradeCounts,
    /// The task's last invocation.
    pub invocation_id: Option<Arc<str>>,
    /// Why the task failed, when no invocation says it (it failed before any call).
    pub error_message: Option<String>,
}

impl TaskOutcome {
    pub(super) fn stopped(
        signal: StopSignal,
        attempts: u32,
        error_code: Option<ErrorCode>,
        invocation_id: Arc<str>,
    ) -> TaskOutcome {
        TaskOutcome {
            status: signal.task_status(),
            attempts,
            atoms: 0,
            error_code,
            output: None,
            grades: GradeCounts::default(),
            invocation_id: Some(invocation_id),
            error_message: None,
        }
    }

    /// A task stopped because its facts cannot be written (the store's writer failed):
    /// it goes back to pending for a resume, and no further call of it is made.
    pub(super) fn not_recorded(
        attempts: u32,
        invocation_id: Arc<str>,
        why: &crate::data::store::StoreError,
    ) -> TaskOutcome {
        tracing::error!("a task stops: its facts cannot be written: {why}");
        TaskOutcome {
            error_message: Some(format!("the run's log cannot be written: {why}")),
            ..TaskOutcome::stopped(StopSignal::Interrupt, attempts, None, invocation_id)
        }
    }

    /// A task that fails before calling the provider (E008: a reference failure with
    /// `abort`, a prompt over the agent's input limit), for `why`.
    pub(super) fn failed_before_call(attempts: u32, why: String) -> TaskOutcome {
        TaskOutcome {
            status: TaskStatus::Failed,
            attempts,
            atoms: 0,
            error_code: Some(ErrorCode::E008),
            output: None,
            grades: GradeCounts::default(),
            invocation_id: None,
            error_message: Some(why),
        }
    }
}

/// Resolves once the coordinator asks the worker to stop.
pub(super) async fn stopped(rx: &mut watch::Receiver<StopSignal>) -> StopSignal {
    loop {
        let v = *rx.borrow_and_update();
        if v != StopSignal::None {
            return v;
        }
        if rx.changed().await.is_err() {
            // the coordinator is gone: never resolve
            std::future::pending::<()>().await;
        }
    }
}

/// Combines the outcomes of a task's batches: the atoms of usable batches aggregated by
/// the strategy; success when every batch succeeded, partial when some did, failed when
/// none did. A stop (cancel, interrupt) wins.
pub(super) fn aggregate_batches(
    ctx: &RunCtx,
    idx: usize,
    outcomes: Vec<TaskOutcome>,
    strategy: &str,
) -> TaskOutcome {
    let attempts = outcomes.last().map_or(0, |o| o.attempts);
    let invocation_id = outcomes.iter().rev().find_map(|o| o.invocation_id.clone());
    if let Some(o) = outcomes
        .iter()
        .find(|o| matches!(o.status, TaskStatus::Pending | TaskStatus::Cancelled))
    {
        return TaskOutcome {
            status: o.status,
            attempts,
            atoms: 0,
            error_code: None,
            output: None,
            grades: GradeCounts::default(),
            invocation_id,
            error_message: None,
        };
    }
    let usable: Vec<&TaskOutcome> = outcomes
        .iter()
        .filter(|o| o.status.satisfies_dependents())
        .collect();
    let error_code = outcomes.iter().find_map(|o| o.error_code);
    if usable.is_empty() {
        return TaskOutcome {
            status: outcomes.last().map_or(TaskStatus::Failed, |o| o.status),
            attempts,
            atoms: 0,
            error_code,
            output: None,
            grades: GradeCounts::default(),
            invocation_id,
            error_message: outcomes.iter().rev().find_map(|o| o.error_message.clone()),
        };
    }
    let per_batch: Vec<Vec<serde_json::Value>> = usable
        .iter()
        .map(|o| {
            o.output
                .as_ref()
                .map(|out| {
                    out.atoms
                        .iter()
                        .filter_map(|a| serde_json::to_value(a).ok())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let merged = match super::context::batch::aggregate(strategy, &per_batch) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("task {}: {e}; merging", ctx.plan.tasks[idx].task_id);
            super::context::batch::aggregate("merge", &per_batch).unwrap_or_default()
        }
    };
    let atoms: Vec<Atom> = merged
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    let mut grades = GradeCounts::default();
    for o in &usable {
        grades.merge(&o.grades);
    }
    let all_ok =
        usable.len() == outcomes.len() && usable.iter().all(|o| o.status == TaskStatus::Success);
    let summary = format!(
        "{} atom(s) aggregated ({strategy}) from {} of {} batches",
        atoms.len(),
        usable.len(),
        outcomes.len()
    );
    TaskOutcome {
        status: if all_ok {
            TaskStatus::Success
        } else {
            TaskStatus::Partial
        },
        attempts,
        atoms: atoms.len() as u32,
        error_code: if all_ok { None } else { error_code },
        output: Some(Arc::new(ResponseOutput {
            atoms,
            summary,
            extra: Default::default(),
        })),
        grades,
        invocation_id,
        // A batch that failed before any call says why; the others' invocations do.
        error_message: outcomes.iter().find_map(|o| o.error_message.clone()),
    }
}

/// The message a panic carried.
pub(super) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
