//! The events of a run's life: its start (with the tasks and agents it announces), a
//! crash found on resume, a takeover, pausing, cancelling and its end.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{RunStatus, TaskStatus};
use crate::base::protocol::GradeCounts;

/// A task as announced at run start: enough to draw the DAG from the log alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// Task id.
    pub task_id: String,
    /// Full agent name.
    pub agent: String,
    /// Upstream ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
}

/// Budget facts about an agent announced at run start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Full name.
    pub name: String,
    /// Most input tokens.
    pub max_input_tokens: u64,
    /// Data area.
    pub data_area_tokens: u64,
}

/// The run started (or a resumed run re-announced itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStarted {
    /// Plan id.
    pub plan_id: String,
    /// Execution mode.
    pub execution_mode: String,
    /// Provider name (`simulated`, …).
    pub provider: String,
    /// Seed of the simulated provider.
    pub seed: u64,
    /// Concurrency limit.
    pub concurrency: usize,
    /// Agents used.
    pub agents: Vec<AgentInfo>,
    /// Tasks and edges.
    pub tasks: Vec<TaskInfo>,
}

/// A crash was found when resuming: the run was left `running` with no process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashDetected {
    /// Last event seq found in the log.
    pub last_seq: u64,
    /// Timestamp of that event (ms).
    pub last_ts: i64,
    /// Tasks that were in flight and will be restarted.
    pub interrupted_tasks: Vec<String>,
}

/// A resuming process took the run over from an owner that was gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseTakenOver {
    /// The previous owner's process id.
    pub previous_pid: u32,
    /// Its host.
    pub previous_host: String,
    /// When it took the run (RFC 3339).
    pub previous_since: String,
    /// Its last heartbeat, ms since the Unix epoch.
    pub previous_heartbeat_ms: i64,
    /// Why it counts as gone: `process_gone` or `heartbeat_stale`.
    pub reason: String,
}

/// The run resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResumed {
    /// Status the run had before.
    pub previous_status: RunStatus,
    /// Tasks already finished (not run again).
    pub finished_tasks: u32,
    /// Tasks that will run.
    pub remaining_tasks: u32,
}

/// Empty payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// A cancel was requested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelRequested {
    /// Why.
    pub reason: String,
}

/// The run's calls cost its whole money budget: no new call starts, the calls in flight
/// end, and the run ends `budget_reached`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetReached {
    /// The budget, US dollars.
    pub limit_usd: f64,
    /// What the run's calls had cost when it was reached, US dollars.
    pub spent_usd: f64,
}

/// The run stopped dispatching and ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    /// Final status.
    pub status: RunStatus,
    /// Tasks by final status.
    pub tasks: BTreeMap<TaskStatus, u32>,
    /// Atoms accepted.
    pub atoms: u32,
    /// Grades of accepted atoms.
    pub grades: GradeCounts,
}
