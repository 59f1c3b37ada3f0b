//! What a run is given and what it gives back: the spec that starts it, the state a
//! resumed run carries over, the commands it takes while it runs, its handle and its
//! outcome.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::{EngineConfig, EngineError};
use crate::base::protocol::{GradeCounts, ResponseOutput};
use crate::data::provider::Provider;
use crate::data::store::Writer;
use crate::model::event::{LeaseTakenOver, RunStatus, TaskStatus};
use crate::model::plan::Plan;

/// A command to a running run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Stop dispatching new tasks.
    Pause,
    /// Dispatch again.
    Resume,
    /// Stop everything; unfinished tasks end `cancelled`.
    Cancel(String),
    /// Stop everything but leave the run resumable (quit, Ctrl-C).
    Interrupt,
    /// Run a failed or timed-out task again (and the tasks it blocked).
    Retry(String),
    /// A person's decision on a task stopped for review (E007): accepted atoms are
    /// stored and the tasks it blocked run; the request's reply slot gets the outcome.
    Review(crate::run::review::ReviewRequest),
}

/// State of a run being resumed.
#[derive(Debug, Clone, Default)]
pub struct ResumeState {
    /// Status the run had.
    pub previous_status: Option<RunStatus>,
    /// Final tasks: status, attempts, atoms.
    pub finished: HashMap<String, (TaskStatus, u32, u32)>,
    /// Attempts made by unfinished tasks.
    pub attempts: HashMap<String, u32>,
    /// Tasks that were running when the process died.
    pub interrupted: Vec<String>,
    /// Calls in flight when the process died, in the order they started: the resume
    /// closes each as lost.
    pub lost: Vec<crate::data::store::OpenCall>,
    /// Outputs of finished tasks.
    pub outputs: HashMap<String, ResponseOutput>,
    /// Successful calls of unfinished tasks (by task and batch): the process stopped
    /// between a call's end and its task's end, so the resume ends the task with them.
    pub recorded: HashMap<(String, Option<u32>), RecordedSuccess>,
    /// Next event seq.
    pub next_seq: u64,
    /// Last event (seq, ts) before the resume.
    pub last_event: (u64, i64),
    /// Grades of the atoms accepted before the resume.
    pub grades: GradeCounts,
    /// The owner this process took the run over from, when it was gone.
    pub taken_over: Option<LeaseTakenOver>,
    /// Retries already scheduled by unfinished tasks since they last started afresh,
    /// in order: their budget and adjustments carry over.
    pub retries: HashMap<String, Vec<crate::model::event::RetryScheduled>>,
    /// When the last retry each unfinished task (each batch of it) scheduled was due, ms
    /// since the Unix epoch: a retry whose attempt had not started at the crash still
    /// waits until then.
    pub retry_due: HashMap<(String, Option<u32>), i64>,
    /// The retry policy the run had before this resume: when the resumed process keeps
    /// it, a backoff owed from before is waited whole; when it was changed for the
    /// resume, never longer than the new policy would wait for that retry.
    pub recorded_retry: Option<crate::run::engine::retry::RetryPolicy>,
    /// Blocked tasks a person's acceptance of a review freed since the run last ran:
    /// they go back to pending (absent from `finished`).
    pub unblocked: Vec<String>,
    /// Failed tasks whose review nobody has decided yet: the run still waits for them.
    pub awaiting_review: std::collections::HashSet<String>,
    /// US dollars the run's calls cost before this resume (what counts against its
    /// money budget).
    pub spent_usd: f64,
}

/// A successful call the log holds for a task that had not finished.
#[derive(Debug, Clone)]
pub struct RecordedSuccess {
    /// The call.
    pub invocation_id: String,
    /// Its attempt number.
    pub attempt: u32,
    /// Its accepted atoms and summary.
    pub output: ResponseOutput,
    /// The grades of its atoms.
    pub grades: GradeCounts,
}

/// Everything a run needs.
pub struct RunSpec {
    /// Run id.
    pub run_id: String,
    /// The validated plan.
    pub plan: Arc<Plan>,
    /// Provider.
    pub provider: Arc<dyn Provider>,
    /// Settings.
    pub config: EngineConfig,
    /// Store writer.
    pub writer: Writer,
    /// Asset ids that already exist in the store.
    pub known_assets: crate::model::gate::known::AssetIds,
    /// Set when resuming.
    pub resume: Option<ResumeState>,
    /// The database file `db_query` references read (None: such references fail).
    pub db: Option<std::path::PathBuf>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Run id.
    pub run_id: String,
    /// Final status.
    pub status: RunStatus,
    /// Tasks by status.
    pub tasks: BTreeMap<TaskStatus, u32>,
    /// Atoms accepted.
    pub atoms: u32,
    /// Their grades.
    pub grades: GradeCounts,
    /// What the engine held in memory for finished tasks, sampled every
    /// [`RETAINED_EVERY`] tasks its workers finished.
    pub retained: Vec<Retained>,
}

/// How many finished tasks apart the engine samples what it retains.
pub const RETAINED_EVERY: u32 = 1000;

/// What the engine held in memory for finished tasks when `finished` tasks had ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Retained {
    /// Tasks the run's workers had finished.
    pub finished: u32,
    /// Outputs of finished tasks held for tasks still to run.
    pub outputs: u32,
}

/// A started run.
pub struct RunHandle {
    /// Send commands here.
    pub control: mpsc::UnboundedSender<Control>,
    /// Resolves when the run ends.
    pub join: tokio::task::JoinHandle<Result<RunOutcome, EngineError>>,
}
