//! The status of a task and of a run, as events carry them and the store keeps them.

use serde::{Deserialize, Serialize};

use crate::base::protocol::InvocationStatus;

/// Status of a task in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Waiting for dependencies.
    Pending,
    /// Dependencies met, waiting for a slot.
    Ready,
    /// An invocation is in flight.
    Running,
    /// Finished: success.
    Success,
    /// Finished: partial.
    Partial,
    /// Finished: failed.
    Failed,
    /// Finished: over time.
    Timeout,
    /// Not run because a dependency failed (E006).
    Blocked,
    /// Stopped by a cancel.
    Cancelled,
}

impl TaskStatus {
    /// Every status, in display order.
    pub const ALL: [TaskStatus; 9] = [
        TaskStatus::Pending,
        TaskStatus::Ready,
        TaskStatus::Running,
        TaskStatus::Success,
        TaskStatus::Partial,
        TaskStatus::Failed,
        TaskStatus::Timeout,
        TaskStatus::Blocked,
        TaskStatus::Cancelled,
    ];

    /// The status as text.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Ready => "ready",
            TaskStatus::Running => "running",
            TaskStatus::Success => "success",
            TaskStatus::Partial => "partial",
            TaskStatus::Failed => "failed",
            TaskStatus::Timeout => "timeout",
            TaskStatus::Blocked => "blocked",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Whether the task will not run again in this run.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Success
                | TaskStatus::Partial
                | TaskStatus::Failed
                | TaskStatus::Timeout
                | TaskStatus::Blocked
        )
    }

    /// Whether downstream tasks may use this task's output.
    pub fn satisfies_dependents(self) -> bool {
        matches!(self, TaskStatus::Success | TaskStatus::Partial)
    }

    /// The task status an invocation status leads to.
    pub fn from_invocation(s: InvocationStatus) -> TaskStatus {
        match s {
            InvocationStatus::Success => TaskStatus::Success,
            InvocationStatus::Partial => TaskStatus::Partial,
            InvocationStatus::Failed => TaskStatus::Failed,
            InvocationStatus::Timeout => TaskStatus::Timeout,
        }
    }
}

/// Status of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Dispatching tasks.
    Running,
    /// Not dispatching new tasks.
    Paused,
    /// Every task succeeded.
    Succeeded,
    /// Every task finished with success or partial, some partial.
    Partial,
    /// Some task failed, timed out or was blocked.
    Failed,
    /// Every task ended, and the only obstacles left are decisions waiting for a person:
    /// each failed task waits for review (a hallucination, E007) and each blocked one is
    /// below such a task. `plexus review` decides; `plexus resume` runs what an
    /// acceptance unblocked.
    AwaitingReview,
    /// Cancelled by a person.
    Cancelled,
    /// Stopped before the end (quit or crash); `plexus resume` continues it.
    Interrupted,
    /// Its calls cost the whole money budget (`--max-cost`): no new call started, the
    /// calls in flight ended, and the rest waits; `plexus resume RUN --max-cost USD`
    /// continues it with a larger budget.
    BudgetReached,
}

impl RunStatus {
    /// The status as text.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::AwaitingReview => "awaiting_review",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
            RunStatus::BudgetReached => "budget_reached",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Paused,
            RunStatus::Succeeded,
            RunStatus::Partial,
            RunStatus::Failed,
            RunStatus::AwaitingReview,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
            RunStatus::BudgetReached,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// The status as words for a person (`awaiting review`).
    pub fn label(self) -> &'static str {
        match self {
            RunStatus::AwaitingReview => "awaiting review",
            RunStatus::BudgetReached => "budget reached",
            other => other.as_str(),
        }
    }

    /// Whether the run ended failed or waiting for a review: a decision (a review, or a
    /// retry) may still change its outcome.
    pub fn is_failed_or_waiting(self) -> bool {
        matches!(self, RunStatus::Failed | RunStatus::AwaitingReview)
    }

    /// Whether a process exiting with this status should exit non-zero.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            RunStatus::Failed
                | RunStatus::AwaitingReview
                | RunStatus::Cancelled
                | RunStatus::Interrupted
                | RunStatus::BudgetReached
        )
    }
}
