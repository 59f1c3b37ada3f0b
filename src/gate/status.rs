//! Invocation status by seed 001 §4.3, exactly.

use crate::protocol::{ErrorInfo, InvocationStatus};

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

/// The status of a run whose tasks are all final: failed when one failed, timed out or
/// was blocked; partial when one ended partial; succeeded otherwise.
pub fn run_status_of(
    tasks: impl IntoIterator<Item = crate::event::TaskStatus>,
) -> crate::event::RunStatus {
    use crate::event::{RunStatus, TaskStatus};
    let mut partial = false;
    for t in tasks {
        match t {
            TaskStatus::Failed | TaskStatus::Timeout | TaskStatus::Blocked => {
                return RunStatus::Failed
            }
            TaskStatus::Partial => partial = true,
            TaskStatus::Pending
            | TaskStatus::Ready
            | TaskStatus::Running
            | TaskStatus::Success
            | TaskStatus::Cancelled => {}
        }
    }
    if partial {
        RunStatus::Partial
    } else {
        RunStatus::Succeeded
    }
}
