//! Human review of hallucinations (E007). A task whose answer refers to assets that do
//! not exist ends failed and waits for a person: they read the evidence (the review
//! queue, [`crate::data::store::Store::review_queue`]) and accept the atoms or reject them
//! with a reason. Each decision is an event in the run's log.
//!
//! - **Accept**: the invocation's atoms are stored (marked with who accepted them and
//!   when), the task counts as finished — `success` when the answer's mean score is at
//!   least 0.7 and no other error was found, else `partial` (the status it would have
//!   had without the flagged references) — and its blocked dependents go back to
//!   pending: they run at once in the process that executes the run, or on
//!   `plexus resume` for a run nobody executes.
//! - **Reject**: the reason is recorded; the task stays failed, its dependents blocked.
//!
//! A decision is final: a second one on the same invocation is refused. Two ways in:
//! [`decide`] for a run no live process executes (it takes the run's lease for the time
//! of one transaction), and [`crate::run::engine::Control::Review`] for a run this process
//! executes (the terminal UI holding its run open).

mod accept;
mod offline;

use std::sync::{Arc, Mutex};

use serde::Serialize;

pub use accept::{accepted, unblocked_tasks, Accepted};
pub use offline::decide;

pub use crate::data::store::review::{Decision, DecisionKind, FabricatedRef, ReviewItem};
use crate::data::store::{Store, StoreError};
use crate::model::event::{RunStatus, TaskStatus};

/// What a person decided about a task stopped for review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Store the atoms; the task's dependents may run.
    Accept {
        /// A note kept with the decision.
        note: Option<String>,
    },
    /// Keep the task failed.
    Reject {
        /// Why (required).
        reason: String,
    },
}

/// A decision for the engine of a run this process executes
/// ([`crate::run::engine::Control::Review`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRequest {
    /// The task.
    pub task: String,
    /// The decision.
    pub verdict: Verdict,
    /// Who decides.
    pub reviewer: String,
    /// Where the engine answers (optional).
    pub reply: Reply,
}

impl ReviewRequest {
    /// A request nobody waits an answer for (its outcome shows as an event, or not at
    /// all when refused).
    pub fn new(task: impl Into<String>, verdict: Verdict, reviewer: impl Into<String>) -> Self {
        ReviewRequest {
            task: task.into(),
            verdict,
            reviewer: reviewer.into(),
            reply: Reply::default(),
        }
    }

    /// The request with a reply slot, and where the answer arrives.
    pub fn with_reply(
        mut self,
    ) -> (
        ReviewRequest,
        tokio::sync::oneshot::Receiver<Result<Decided, ReviewError>>,
    ) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.reply = Reply(Some(Arc::new(Mutex::new(Some(tx)))));
        (self, rx)
    }
}

/// Where the engine answers a [`ReviewRequest`]. Not part of what a request says: two
/// requests compare equal whatever their reply slots.
#[derive(Clone, Default)]
pub struct Reply(Option<Arc<Mutex<Option<Answer>>>>);

type Answer = tokio::sync::oneshot::Sender<Result<Decided, ReviewError>>;

impl Reply {
    /// Sends the answer, once (later calls and an absent slot do nothing).
    pub fn send(&self, answer: Result<Decided, ReviewError>) {
        let Some(slot) = &self.0 else { return };
        let tx = match slot.lock() {
            Ok(mut s) => s.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(tx) = tx {
            let _ = tx.send(answer);
        }
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Reply" } else { "NoReply" })
    }
}

impl PartialEq for Reply {
    fn eq(&self, _: &Reply) -> bool {
        true
    }
}

impl Eq for Reply {}

/// What a decision did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decided {
    /// Run.
    pub run_id: String,
    /// Task.
    pub task_id: String,
    /// The invocation whose atoms were reviewed.
    pub invocation_id: String,
    /// Accepted or rejected.
    pub decision: DecisionKind,
    /// Who decided.
    pub reviewer: String,
    /// When (RFC 3339).
    pub decided_at: String,
    /// The decision's event in the run's log.
    pub seq: u64,
    /// The task's status now.
    pub status: TaskStatus,
    /// Atoms stored.
    pub atoms: u32,
    /// Tasks the acceptance unblocked: queued at once in a run this process executes,
    /// run by `plexus resume` otherwise.
    pub unblocked: Vec<String>,
    /// The run's status when the decision changed how a run nobody executes ended
    /// (an acceptance that leaves nothing to run).
    pub run_status: Option<RunStatus>,
}

/// Why a decision was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The run has no such task.
    #[error("run {run_id} has no task `{task}`")]
    NoSuchTask {
        /// Run.
        run_id: String,
        /// The id given.
        task: String,
    },
    /// The task did not stop for review.
    #[error("task `{task}` of run {run_id} is not waiting for review: it is {status}{}; only a task that failed with E007 (a hallucination) is", .error_code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    NotInReview {
        /// Run.
        run_id: String,
        /// Task.
        task: String,
        /// Its status.
        status: String,
        /// Its deciding error.
        error_code: Option<String>,
    },
    /// A decision was made already.
    #[error("task `{task}` was already {} by {reviewer} at {decided_at}; a decision is final", match .decision { DecisionKind::Accepted => "accepted", DecisionKind::Rejected => "rejected" })]
    AlreadyDecided {
        /// Task.
        task: String,
        /// The decision.
        decision: DecisionKind,
        /// Who made it.
        reviewer: String,
        /// When.
        decided_at: String,
    },
    /// The answer has no atoms to accept.
    #[error("invocation {invocation} of task `{task}` has no atoms to accept")]
    NothingToAccept {
        /// Task.
        task: String,
        /// Invocation.
        invocation: String,
    },
    /// A rejection without a reason.
    #[error("a rejection needs a reason")]
    NoReason,
    /// An empty reviewer name.
    #[error("the reviewer's name is empty")]
    NoReviewer,
    /// A request that does not make sense as given.
    #[error("{0}")]
    Usage(String),
    /// Another live process executes the run.
    #[error("run {run_id} is being executed by {owner}; decide in that process's terminal UI, or once it has ended")]
    Owned {
        /// Run.
        run_id: String,
        /// Who.
        owner: String,
    },
    /// The run is being cancelled or interrupted.
    #[error("the run is stopping; decide once it has stopped")]
    Stopping,
    /// The engine runs without a database to read the evidence from.
    #[error("this run has no database to read the evidence from")]
    NoDatabase,
    /// The stored plan did not parse.
    #[error("the stored plan of run {run_id} no longer validates: {message}")]
    Plan {
        /// Run.
        run_id: String,
        /// Why.
        message: String,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ReviewError {
    /// The exit code of a command refused with this error (see [`crate::data::exit`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            ReviewError::NoSuchTask { .. }
            | ReviewError::NotInReview { .. }
            | ReviewError::AlreadyDecided { .. }
            | ReviewError::NothingToAccept { .. }
            | ReviewError::NoReason
            | ReviewError::NoReviewer
            | ReviewError::Usage(_) => crate::data::exit::INVALID,
            ReviewError::Owned { .. } => crate::data::exit::OWNED,
            ReviewError::Store(StoreError::Owned { .. }) => crate::data::exit::OWNED,
            ReviewError::Stopping
            | ReviewError::NoDatabase
            | ReviewError::Plan { .. }
            | ReviewError::Store(_) => crate::data::exit::ERROR,
        }
    }
}

/// The name set by `[review] reviewer` in the configuration, once loaded.
static CONFIGURED_REVIEWER: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Records the configuration's reviewer name for [`default_reviewer`] (the first call
/// wins; the binary calls it once, after loading the configuration).
pub fn set_configured_reviewer(name: &str) {
    let name = name.trim();
    if !name.is_empty() {
        let _ = CONFIGURED_REVIEWER.set(name.to_string());
    }
}

/// The reviewer's name when none is given: the configuration's `[review] reviewer`,
/// else `$USER`, else `$LOGNAME`, else the login name of the user the process runs as,
/// else `uid N`.
pub fn default_reviewer() -> String {
    if let Some(name) = CONFIGURED_REVIEWER.get() {
        return name.clone();
    }
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|v| v.trim().to_string())
        .find(|v| !v.is_empty())
        .unwrap_or_else(login_name)
}

/// The name of the user the process runs as, from the system's user database.
#[cfg(target_os = "linux")]
fn login_name() -> String {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(user)) if !user.name.trim().is_empty() => user.name,
        _ => format!("uid {uid}"),
    }
}

/// The name of the user the process runs as (no user database read here).
#[cfg(not(target_os = "linux"))]
fn login_name() -> String {
    "unknown user".into()
}

/// Checks what a decision says on its own: a reviewer, and a reason for a rejection.
pub fn check_verdict(verdict: &Verdict, reviewer: &str) -> Result<(), ReviewError> {
    if reviewer.trim().is_empty() {
        return Err(ReviewError::NoReviewer);
    }
    match verdict {
        Verdict::Reject { reason } if reason.trim().is_empty() => Err(ReviewError::NoReason),
        Verdict::Accept { .. } | Verdict::Reject { .. } => Ok(()),
    }
}

/// The review item of `task` in run `run_id` if a decision on it may be made now;
/// otherwise why not (no such task, not stopped for review, decided already).
pub fn check(store: &Store, run_id: &str, task: &str) -> Result<ReviewItem, ReviewError> {
    match store.review_item(run_id, task)? {
        Some(item) => match &item.decision {
            None => Ok(item),
            Some(d) => Err(ReviewError::AlreadyDecided {
                task: task.to_string(),
                decision: d.decision,
                reviewer: d.reviewer.clone(),
                decided_at: d.decided_at.clone(),
            }),
        },
        None => match store.tasks(run_id)?.into_iter().find(|t| t.task_id == task) {
            None => Err(ReviewError::NoSuchTask {
                run_id: run_id.to_string(),
                task: task.to_string(),
            }),
            Some(t) => Err(ReviewError::NotInReview {
                run_id: run_id.to_string(),
                task: task.to_string(),
                status: t.status,
                error_code: t.error_code,
            }),
        },
    }
}

/// A decision's time (ms since the Unix epoch) as stored: RFC 3339, UTC, to the
/// millisecond.
pub fn decided_at(ts_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ts_ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}
