//! The folded state: `RunState` and its views of tasks, agents, atoms and notes.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::clock::RunClock;
use super::debate::DebateState;
use super::output::OutputBuffer;
use super::review_mark::ReviewMark;
use super::shared::Chunked;
use crate::base::protocol::{ErrorCode, Grade, GradeCounts, InvocationStatus};
use crate::model::event::{RunStatus, TaskStatus};

/// Most bytes of streamed text held across all tasks before finished tasks' text is
/// evicted (it stays in the log and is loaded back when looked at).
pub const DEFAULT_OUTPUT_BUDGET: usize = 64 << 20;

/// Everything the screens show about one run, folded from its events.
///
/// Serializable for stored snapshots (see `state::snapshot`): the indexes are rebuilt
/// and the text budget set when a snapshot is read back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Run id.
    pub run_id: String,
    /// Plan id.
    pub plan_id: String,
    /// Execution mode.
    pub execution_mode: String,
    /// Provider name ("simulated", …).
    pub provider: String,
    /// Concurrency limit.
    pub concurrency: usize,
    /// Run status; `None` before `run_started`.
    pub status: Option<RunStatus>,
    /// A cancel was requested and the run is winding down.
    pub cancelling: bool,
    /// Timestamp (ms) of the first event.
    pub started_ts: Option<i64>,
    /// Timestamp (ms) of the last event folded.
    pub last_ts: i64,
    /// Timestamp (ms) of `run_finished`.
    pub finished_ts: Option<i64>,
    /// Last seq folded.
    pub last_seq: u64,
    /// Events folded.
    pub events: u64,
    /// Events folded, by kind.
    pub kinds: std::collections::BTreeMap<String, u64>,
    /// Tasks in plan order. Shared: a clone of the state (a replay's snapshot) copies
    /// only the tasks that change afterwards.
    pub tasks: Vec<Arc<TaskView>>,
    /// Task id → index in `tasks` (set once, at the run's start).
    #[serde(skip)]
    pub task_index: Arc<HashMap<Arc<str>, usize>>,
    /// Dependency layers: task indices, roots first (set once, at the run's start).
    pub layers: Arc<Vec<Vec<usize>>>,
    /// Agents in first-seen order.
    pub agents: Vec<AgentView>,
    /// Agent name → index in `agents`.
    #[serde(skip)]
    pub agent_index: HashMap<Arc<str>, usize>,
    /// Tasks by status (indexed like `TaskStatus::ALL`).
    pub status_counts: [u32; 9],
    /// Quality of accepted work over all agents.
    pub quality: Quality,
    /// Every graded atom, in the order graded (shared in chunks between copies).
    pub atoms: Chunked<AtomView>,
    /// Run-level notes (crash detected, resumed, cancel…), oldest first.
    pub notes: VecDeque<Note>,
    /// Streamed text held, in bytes, over all tasks.
    pub output_bytes: usize,
    /// Most streamed text held before finished tasks' text is evicted.
    #[serde(skip)]
    pub output_budget: usize,
    /// When set, only this task's streamed text is kept (loading one task back).
    #[serde(skip)]
    pub output_only: Option<usize>,
    /// Tasks waiting for a person's review (those with `awaiting_review`).
    pub awaiting_review: u32,
    /// Time spent running (pauses and stops left out).
    pub clock: RunClock,
    /// The task that failed or timed out last.
    pub last_failure: Option<usize>,
    /// The debate session, folded from the same events, when the run is one
    /// (`run_started` with execution mode `debate`). Shared: a replay's snapshot copies
    /// it only when it changes afterwards.
    #[serde(with = "super::json_field")]
    pub debate: Option<Arc<DebateState>>,
    /// Finished tasks in finishing order: the eviction queue.
    #[serde(skip)]
    pub(super) evict_queue: VecDeque<usize>,
}

/// One task's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    /// Task id.
    #[serde(deserialize_with = "super::arc_str::one")]
    pub id: Arc<str>,
    /// Index of its agent in `RunState::agents`.
    pub agent: usize,
    /// Upstream task indices.
    pub deps: Box<[u32]>,
    /// Downstream task indices.
    pub dependents: Box<[u32]>,
    /// Layer (longest path from a root).
    pub layer: u32,
    /// Current status.
    pub status: TaskStatus,
    /// Invocations made.
    pub attempts: u32,
    /// Atoms accepted.
    pub atoms: u32,
    /// The error that decided the outcome.
    pub error: Option<ErrorCode>,
    /// Latest invocation id.
    #[serde(deserialize_with = "super::arc_str::maybe")]
    pub invocation: Option<Arc<str>>,
    /// Every invocation of the task, in the order they started (attempt order).
    #[serde(deserialize_with = "super::arc_str::list")]
    pub invocations: Box<[Arc<str>]>,
    /// When the latest invocation started (ms).
    pub running_since: Option<i64>,
    /// When the latest invocation last streamed text (ms).
    pub last_output_ts: Option<i64>,
    /// The latest invocation's time limit (ms; 0 when none).
    pub timeout_ms: u64,
    /// Prompt tokens of the latest invocation.
    pub prompt_tokens: u64,
    /// max_tokens sent with the latest invocation.
    pub max_tokens: u32,
    /// Outcome of the latest finished invocation.
    pub last: Option<InvocationSummary>,
    /// Retries scheduled.
    pub retries: u32,
    /// Task notes (retries, blocked by, reference failures), oldest first.
    pub notes: Box<[String]>,
    /// The task's context plan (inputs, modes, trimming), when it had inputs.
    #[serde(with = "super::json_field")]
    pub context: Option<Arc<crate::model::event::ContextPlanned>>,
    /// Streamed text of every attempt, with markers between attempts (not in a stored
    /// snapshot: it stays in the log).
    #[serde(skip, default = "OutputBuffer::new")]
    pub output: OutputBuffer,
    /// The tool-using loops of its invocations, whole (steps, calls, answers).
    #[serde(with = "super::json_field")]
    pub loops: Box<[super::loop_view::TaskLoop]>,
    /// Whether older text was evicted or dropped and lives only in the log.
    #[serde(skip)]
    pub spilled: bool,
    /// A person's decision on the task's hallucination (E007), once made.
    pub review: Option<Box<ReviewMark>>,
    /// Stopped for a person's review: the task failed with a hallucination (E007) and
    /// nobody has decided yet. Cleared by a decision or a reset.
    pub awaiting_review: bool,
    /// The first and the last event naming the task (0, 0 before any): where its text
    /// is in the log.
    pub span: (u64, u64),
}

/// What an invocation ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationSummary {
    /// Status (`None`: cancelled or interrupted).
    pub status: Option<InvocationStatus>,
    /// Wall time.
    pub execution_time_ms: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Atoms parsed.
    pub atoms: u32,
    /// Mean score.
    pub avg_score: f64,
    /// Grades.
    pub grades: GradeCounts,
    /// Quality issues.
    pub issues: u32,
    /// What went wrong, when something did (boxed apart: most invocations end without
    /// an error or a message).
    pub failure: Option<Box<InvocationFailure>>,
}

/// The errors an invocation ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationFailure {
    /// Error codes.
    pub errors: Vec<ErrorCode>,
    /// First error's message.
    pub error_message: Option<String>,
}

impl InvocationSummary {
    /// Its error codes (none when it ended well).
    pub fn errors(&self) -> &[ErrorCode] {
        self.failure.as_ref().map_or(&[], |f| &f.errors)
    }

    /// Its first error's message, if any.
    pub fn error_message(&self) -> Option<&str> {
        self.failure.as_ref()?.error_message.as_deref()
    }
}

impl InvocationFailure {
    /// `errors` and `message` as a summary holds them: nothing when both are empty.
    pub fn boxed(errors: Vec<ErrorCode>, message: Option<String>) -> Option<Box<Self>> {
        (!errors.is_empty() || message.is_some()).then(|| {
            Box::new(InvocationFailure {
                errors,
                error_message: message,
            })
        })
    }
}

/// One agent's budget and quality.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentView {
    /// Full name.
    #[serde(deserialize_with = "super::arc_str::one")]
    pub name: Arc<str>,
    /// Context limit (most input tokens).
    pub max_input_tokens: u64,
    /// Data area of the context.
    pub data_area_tokens: u64,
    /// max_tokens of the latest invocation.
    pub max_tokens: u32,
    /// Prompt tokens of the latest invocation.
    pub last_prompt: u64,
    /// Output tokens of the latest finished invocation.
    pub last_output: u64,
    /// The latest call while it streams: its task and the bytes it has streamed so far
    /// (the output gauge estimates its tokens from them until the call ends and counts
    /// them). Not kept in stored snapshots: a state read back shows the last count.
    #[serde(skip)]
    pub streaming: Option<(usize, u64)>,
    /// Largest prompt so far.
    pub peak_prompt: u64,
    /// Largest output so far.
    pub peak_output: u64,
    /// Cumulative prompt tokens.
    pub tokens_in: u64,
    /// Cumulative output tokens.
    pub tokens_out: u64,
    /// Invocations started.
    pub invocations: u32,
    /// Invocations in flight.
    pub in_flight: u32,
    /// Trimming actions applied to this agent's contexts.
    pub trims: u32,
    /// Inputs passed to this agent in batches.
    pub batches: u32,
    /// Usage as the provider reported it, beside our counts of the same invocations.
    pub reported: ReportedUsage,
    /// Quality of this agent's accepted work.
    pub quality: Quality,
    /// What its ended calls cost (calls without a price counted apart).
    pub spend: crate::base::cost::Spend,
}

/// Provider-reported usage and plexus's own counts over the same invocations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedUsage {
    /// Invocations whose usage the provider reported.
    pub calls: u32,
    /// Prompt tokens the provider reported.
    pub prompt: u64,
    /// Output tokens the provider reported.
    pub output: u64,
    /// Our prompt count of those invocations.
    pub counted_prompt: u64,
    /// Our output count of those invocations.
    pub counted_output: u64,
}

impl ReportedUsage {
    /// Relative gap above which the two counts are flagged (tokenizers differ a
    /// little, chat templates add a few tokens per message; more means a wrong
    /// encoding or a budget that is not what it seems).
    pub const FLAG_RATIO: f64 = 0.25;
    /// Absolute gap (tokens) below which nothing is flagged.
    pub const FLAG_MIN: u64 = 50;

    /// The larger relative gap of prompt and output: |ours − theirs| / theirs.
    pub fn gap(&self) -> f64 {
        let rel = |ours: u64, theirs: u64| {
            if ours.abs_diff(theirs) < Self::FLAG_MIN {
                0.0
            } else {
                ours.abs_diff(theirs) as f64 / theirs.max(1) as f64
            }
        };
        rel(self.counted_prompt, self.prompt).max(rel(self.counted_output, self.output))
    }

    /// Whether our counts and the provider's disagree by more than [`Self::FLAG_RATIO`].
    pub fn disagrees(&self) -> bool {
        self.calls > 0 && self.gap() > Self::FLAG_RATIO
    }
}

/// Grades, scores and issues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    /// Grades of accepted atoms.
    pub grades: GradeCounts,
    /// Sum of accepted atoms' scores.
    pub score_sum: f64,
    /// Quality issues of finished tasks' final invocations.
    pub issues: u32,
}

impl Quality {
    /// Accepted atoms.
    pub fn atoms(&self) -> u32 {
        self.grades.a + self.grades.b + self.grades.c + self.grades.d
    }

    /// Mean score of accepted atoms, 0 when none.
    pub fn avg_score(&self) -> f64 {
        match self.atoms() {
            0 => 0.0,
            n => self.score_sum / n as f64,
        }
    }

    /// Count of one grade.
    pub fn count(&self, g: Grade) -> u32 {
        match g {
            Grade::A => self.grades.a,
            Grade::B => self.grades.b,
            Grade::C => self.grades.c,
            Grade::D => self.grades.d,
        }
    }
}

/// One graded atom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtomView {
    /// Asset id.
    #[serde(deserialize_with = "super::arc_str::one")]
    pub id: Arc<str>,
    /// Atom type.
    #[serde(deserialize_with = "super::arc_str::one")]
    pub atom_type: Arc<str>,
    /// Task index.
    pub task: usize,
    /// Agent index.
    pub agent: usize,
    /// Invocation that produced it.
    #[serde(deserialize_with = "super::arc_str::maybe")]
    pub invocation: Option<Arc<str>>,
    /// Grade.
    pub grade: Grade,
    /// Score.
    pub score: f64,
    /// Confidence.
    pub confidence: Option<f64>,
    /// Issues on the atom.
    pub issues: u32,
}

/// A run-level note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// When (ms).
    pub ts: i64,
    /// Text.
    pub text: String,
}

/// Most run-level notes kept.
pub const MAX_NOTES: usize = 200;

impl RunState {
    /// What the run's ended calls cost, every agent's together.
    pub fn spend(&self) -> crate::base::cost::Spend {
        let mut total = crate::base::cost::Spend::default();
        for a in &self.agents {
            total.merge(a.spend);
        }
        total
    }

    /// An empty state with the default output budget.
    pub fn new() -> RunState {
        RunState {
            output_budget: DEFAULT_OUTPUT_BUDGET,
            ..Default::default()
        }
    }

    /// Tasks with a status.
    pub fn count(&self, s: TaskStatus) -> u32 {
        self.status_counts[status_slot(s)]
    }

    /// Tasks that will not run again.
    pub fn finished(&self) -> u32 {
        TaskStatus::ALL
            .iter()
            .filter(|s| s.is_final() || **s == TaskStatus::Cancelled)
            .map(|&s| self.count(s))
            .sum()
    }

    /// Whether the run may still change (started and not ended).
    pub fn is_live(&self) -> bool {
        matches!(self.status, Some(RunStatus::Running | RunStatus::Paused))
    }

    /// The atom whether its invocation is the task's latest (not superseded by a retry).
    pub fn atom_is_current(&self, a: &AtomView) -> bool {
        self.tasks
            .get(a.task)
            .is_some_and(|t| t.invocation.is_some() && t.invocation == a.invocation)
    }

    /// Frees the streamed text of every finished task (it stays in the log and is
    /// loaded back when looked at), as the output budget would.
    pub fn spill_finished(&mut self) {
        for t in &mut self.tasks {
            if (t.status.is_final() || t.status == TaskStatus::Cancelled) && !t.output.is_empty() {
                let t = Arc::make_mut(t);
                let before = t.output.bytes();
                t.output.evict();
                // Added before taken: a clamp at zero would leave the total off.
                self.output_bytes = (self.output_bytes + t.output.bytes()).saturating_sub(before);
                t.spilled = true;
            }
        }
        // No finished task holds text now: nothing is left to evict in order.
        self.evict_queue.clear();
    }

    /// Replaces a task's evicted text with text loaded back from the log.
    pub fn restore_output(&mut self, task: usize, text: OutputBuffer) {
        let Some(t) = self.tasks.get_mut(task).map(Arc::make_mut) else {
            return;
        };
        let before = t.output.bytes();
        t.output = text;
        t.spilled = false;
        self.output_bytes = (self.output_bytes + t.output.bytes()).saturating_sub(before);
    }
}

/// Index of a status in `TaskStatus::ALL`.
pub fn status_slot(s: TaskStatus) -> usize {
    match s {
        TaskStatus::Pending => 0,
        TaskStatus::Ready => 1,
        TaskStatus::Running => 2,
        TaskStatus::Success => 3,
        TaskStatus::Partial => 4,
        TaskStatus::Failed => 5,
        TaskStatus::Timeout => 6,
        TaskStatus::Blocked => 7,
        TaskStatus::Cancelled => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run holds one view per task (100,000 in a large plan) for its whole life:
    /// growing these structs grows every large run's memory.
    #[test]
    fn a_task_view_stays_small() {
        use std::mem::size_of;
        // With the `Arc` that holds it, within a 320-byte allocation.
        assert!(size_of::<TaskView>() <= 304, "{}", size_of::<TaskView>());
        assert!(
            size_of::<InvocationSummary>() <= 64,
            "{}",
            size_of::<InvocationSummary>()
        );
        assert!(
            size_of::<OutputBuffer>() <= 16,
            "{}",
            size_of::<OutputBuffer>()
        );
        assert!(size_of::<Option<Box<ReviewMark>>>() <= 8);
    }
}
