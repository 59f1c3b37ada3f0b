//! Comparing two stored runs task by task: what `plexus diff RUN_A RUN_B` reports.
//!
//! The comparison is in three steps, kept apart so that other views (a TUI pane, a
//! test) can reuse any of them:
//!
//! 1. [`load`] reads a run from the read-only store into a [`RunSnapshot`]: its tasks,
//!    each task's invocations, retries, context plans, reference failures and accepted
//!    atoms — only what the comparison looks at.
//! 2. [`compare`] is a pure function of two snapshots: it returns a [`RunDiff`] listing
//!    each field that differs, with the value in run A and in run B.
//! 3. [`render`] puts a [`RunDiff`] into aligned text lines; `--json` is the serde form
//!    of the same [`RunDiff`].
//!
//! # What counts as a difference
//!
//! Tasks are aligned by task id. A task present in one run only is a run-level
//! difference (`tasks`), and is not compared further. Run-level fields are `plan_id`,
//! `status` and `tasks`. For a task present in both runs these fields are compared
//! exactly:
//!
//! | field | what |
//! |---|---|
//! | `agent` | the agent the task ran on |
//! | `status` | final task status |
//! | `attempts` | invocations the task made |
//! | `error_code` | the error that decided the task's outcome |
//! | `atoms` | atoms accepted |
//! | `blocked_by` | the failed upstream task that blocked it |
//! | `retries` | each scheduled retry: attempt number, error code, adjustment |
//! | `context` | each planned input: name, action (keep, summarize, …), tokens before and after |
//! | `references` | data references that failed: index, reference kind, error code |
//! | `attempt[N]` | the task's Nth invocation exists in one run only |
//! | `attempt[N].status`, `.errors`, `.prompt_tokens`, `.output_tokens`, `.grades` | the Nth invocation of both runs: status, error codes, tokens, the grade of each atom the gate graded |
//! | `atom[ID]` | an accepted atom with this asset id exists in one run only |
//! | `atom[ID].grade`, `.score`, `.content` | an accepted atom of both runs: grade, score (to 1e-9), content |
//!
//! `N` counts a task's invocations in the order they ended, from 1 (it is the attempt
//! number, except for a task run in batches, whose batches each count their own
//! attempts). Accepted atoms are aligned by asset id (a repeated id by its occurrence:
//! `ID#2`): a replayed answer and the simulated provider at the same settings give the
//! same ids.
//!
//! Never compared, because they differ between any two runs: run and invocation ids,
//! timestamps, retry delays (jittered against real APIs), streamed chunk counts and the
//! plan text itself (only its id; what a changed plan changes shows in the fields
//! above). Wall-clock time is reported (run and per task, from the first invocation's
//! start to the task's end) but only compared when asked ([`DiffOptions::timing`]),
//! and then only beyond a tolerance: `|a − b| > max(min_ms, pct% of the larger)`.

pub mod compare;
pub mod load;
pub mod render;

use serde::Serialize;

pub use compare::compare;
pub use load::load;

/// Default of [`TimingTolerance::pct`].
pub const DEFAULT_TIMING_PCT: f64 = 25.0;
/// Default of [`TimingTolerance::min_ms`].
pub const DEFAULT_TIMING_MIN_MS: u64 = 100;

/// What [`compare`] treats as a difference beyond the fixed rules.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiffOptions {
    /// Compare wall-clock times within this tolerance (`None`: report them only).
    pub timing: Option<TimingTolerance>,
}

/// How far two times may be apart and still count as the same.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimingTolerance {
    /// Percent of the larger time.
    pub pct: f64,
    /// Milliseconds, whatever the percentage gives.
    pub min_ms: u64,
}

impl Default for TimingTolerance {
    fn default() -> Self {
        TimingTolerance {
            pct: DEFAULT_TIMING_PCT,
            min_ms: DEFAULT_TIMING_MIN_MS,
        }
    }
}

impl TimingTolerance {
    /// Whether `a` and `b` are further apart than the tolerance (one missing: they are).
    pub fn exceeded(&self, a: Option<u64>, b: Option<u64>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => {
                let allowed = (self.pct / 100.0 * a.max(b) as f64).max(self.min_ms as f64);
                a.abs_diff(b) as f64 > allowed
            }
            (None, None) => false,
            _ => true,
        }
    }
}

/// A run as loaded for comparison.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSnapshot {
    /// Run id.
    pub run_id: String,
    /// Plan id.
    pub plan_id: String,
    /// Run status.
    pub status: String,
    /// Provider profile.
    pub provider: String,
    /// When the run was created (RFC 3339).
    pub created_at: String,
    /// Milliseconds from the first to the last logged event.
    pub wall_ms: Option<u64>,
    /// Tasks in plan order.
    pub tasks: Vec<TaskSnapshot>,
}

/// One task of a [`RunSnapshot`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskSnapshot {
    /// Task id.
    pub task_id: String,
    /// Agent.
    pub agent: String,
    /// Final (or current) status.
    pub status: String,
    /// Invocations made.
    pub attempts: i64,
    /// Atoms accepted.
    pub atoms: i64,
    /// The error that decided the outcome.
    pub error_code: Option<String>,
    /// The upstream task that blocked it.
    pub blocked_by: Option<String>,
    /// Scheduled retries: `attempt N after CODE: adjustment`.
    pub retries: Vec<String>,
    /// Planned inputs: `name: action tokens -> tokens_after`.
    pub context: Vec<String>,
    /// Failed data references: `#index ref_type error_code`.
    pub references: Vec<String>,
    /// Invocations, in the order they ended.
    pub calls: Vec<CallSnapshot>,
    /// Accepted atoms, in the order they were stored.
    pub accepted: Vec<AtomSnapshot>,
    /// Milliseconds from the first invocation's start to the task's end.
    pub wall_ms: Option<u64>,
}

/// One invocation of a [`TaskSnapshot`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallSnapshot {
    /// Invocation status (`None`: cancelled or never ended).
    pub status: Option<String>,
    /// Error codes, in order.
    pub errors: Vec<String>,
    /// Tokens of the prompt as plexus counted them.
    pub prompt_tokens: i64,
    /// Tokens of the output.
    pub output_tokens: Option<i64>,
    /// Grade of each atom the gate graded, in order.
    pub grades: Vec<String>,
}

/// One accepted atom of a [`TaskSnapshot`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AtomSnapshot {
    /// Asset id.
    pub asset_id: String,
    /// Grade.
    pub grade: Option<String>,
    /// Score.
    pub score: Option<f64>,
    /// Content (the atom's `content` object).
    pub content: serde_json::Value,
}

/// The result of [`compare`]: every difference, run-level and per task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDiff {
    /// Run A.
    pub a: RunInfo,
    /// Run B.
    pub b: RunInfo,
    /// Whether the runs have no difference at all.
    pub same: bool,
    /// How many fields differ, run-level and per task.
    pub differences: usize,
    /// Run-level differences.
    pub run: Vec<FieldDiff>,
    /// Tasks of both runs that differ, in plan order.
    pub tasks: Vec<TaskDiff>,
    /// Wall-clock times: reported always, compared only when asked.
    pub timing: Timing,
}

/// Who a run of a [`RunDiff`] is.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunInfo {
    /// Run id.
    pub run_id: String,
    /// Plan id.
    pub plan_id: String,
    /// Run status.
    pub status: String,
    /// Provider profile.
    pub provider: String,
    /// When it was created.
    pub created_at: String,
    /// Tasks.
    pub tasks: usize,
}

/// One field that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldDiff {
    /// Field name (see the module docs).
    pub field: String,
    /// Value in run A (`null`: absent).
    pub a: serde_json::Value,
    /// Value in run B (`null`: absent).
    pub b: serde_json::Value,
}

/// A task whose fields differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskDiff {
    /// Task id.
    pub task_id: String,
    /// Agent (in run A).
    pub agent: String,
    /// The fields that differ, in a fixed order.
    pub fields: Vec<FieldDiff>,
}

/// Wall-clock times of the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Whether times were compared (and can make the runs differ).
    pub compared: bool,
    /// The tolerance used when compared.
    pub tolerance: Option<TimingTolerance>,
    /// The whole run, first to last event: A, B.
    pub run_ms: [Option<u64>; 2],
    /// Each task of both runs, in plan order.
    pub tasks: Vec<TaskTiming>,
}

/// Wall-clock time of one task in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskTiming {
    /// Task id.
    pub task_id: String,
    /// Milliseconds in run A.
    pub a_ms: Option<u64>,
    /// Milliseconds in run B.
    pub b_ms: Option<u64>,
}
