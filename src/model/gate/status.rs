//! Invocation status by seed 001 §4.3, exactly.

use crate::base::protocol::{ErrorInfo, InvocationStatus};

/// Decides the status of an invocation.
///
/// - `timeout`: `execution_time_ms > timeout_seconds × 1000` (checked first);
/// - `failed`: `atoms_generated == 0` or an unrecoverable error;
/// - `partial`: atoms > 0 and (`avg_quality_score < 0.7` or errors present);
/// - `success`: atoms > 0, avg ≥ 0.7, no errors.
pub fn decide_status(
    atoms_generated: u32,
    avg_quality_score: f64,
    errors: &[ErrorInfo],
    execution_time_ms: u64,
    timeout_seconds: f64,
) -> InvocationStatus {
    if execution_time_ms as f64 > timeout_seconds * 1000.0 {
        InvocationStatus::Timeout
    } else if atoms_generated == 0 || errors.iter().any(|e| !e.recoverable) {
        InvocationStatus::Failed
    } else if avg_quality_score < 0.7 || !errors.is_empty() {
        InvocationStatus::Partial
    } else {
        InvocationStatus::Success
    }
}

/// The status of a run whose tasks are all final, each with whether it waits for a
/// person's review: failed when a task failed or timed out without waiting for review;
/// awaiting review when tasks failed but each of them waits for review (the blocked ones
/// then sit below those); partial when one ended partial; succeeded otherwise.
pub fn run_status_of(
    tasks: impl IntoIterator<Item = (crate::model::event::TaskStatus, bool)>,
) -> crate::model::event::RunStatus {
    use crate::model::event::{RunStatus, TaskStatus};
    let mut partial = false;
    let mut waiting = false;
    let mut blocked = false;
    for (t, awaiting_review) in tasks {
        match t {
            TaskStatus::Failed if awaiting_review => waiting = true,
            TaskStatus::Failed | TaskStatus::Timeout => return RunStatus::Failed,
            TaskStatus::Blocked => blocked = true,
            TaskStatus::Partial => partial = true,
            TaskStatus::Pending
            | TaskStatus::Ready
            | TaskStatus::Running
            | TaskStatus::Success
            | TaskStatus::Cancelled => {}
        }
    }
    if waiting {
        // A task is blocked only below a failed one, and every failed one waits.
        RunStatus::AwaitingReview
    } else if blocked {
        RunStatus::Failed
    } else if partial {
        RunStatus::Partial
    } else {
        RunStatus::Succeeded
    }
}

#[cfg(test)]
mod tests {
    use super::run_status_of;
    use crate::model::event::{RunStatus, TaskStatus};

    #[test]
    fn a_run_whose_only_failures_wait_for_review_awaits_review() {
        use TaskStatus::*;
        assert_eq!(
            run_status_of([(Success, false), (Failed, true), (Blocked, false)]),
            RunStatus::AwaitingReview
        );
        // One failure that does not wait makes it failed, whatever the order.
        assert_eq!(
            run_status_of([(Failed, true), (Failed, false)]),
            RunStatus::Failed
        );
        assert_eq!(
            run_status_of([(Timeout, false), (Failed, true)]),
            RunStatus::Failed
        );
        // A rejected review leaves a failure that waits for nobody.
        assert_eq!(
            run_status_of([(Partial, false), (Failed, false)]),
            RunStatus::Failed
        );
        assert_eq!(
            run_status_of([(Partial, false), (Success, false)]),
            RunStatus::Partial
        );
        assert_eq!(run_status_of([(Blocked, false)]), RunStatus::Failed);
    }
}
