//! The writes the store thread performs: one operation per message, with the rows they
//! carry.

use std::sync::Arc;

use crate::base::clock::now_rfc3339;
use crate::model::event::Envelope;

/// A run row, written once when the run is created.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Run id.
    pub run_id: String,
    /// Plan id.
    pub plan_id: String,
    /// Plan file.
    pub plan_source: String,
    /// Plan JSON snapshot.
    pub plan_json: String,
    /// Provider name.
    pub provider: String,
    /// Engine config JSON.
    pub config_json: String,
    /// RFC 3339.
    pub created_at: String,
    /// Task count.
    pub task_count: usize,
    /// (task_id, agent) of every task, inserted as `pending`.
    pub tasks: Vec<(String, String)>,
}

impl RunRow {
    /// The row of a new run of `plan`, created now, with every task `pending`.
    pub fn for_plan(
        run_id: &str,
        plan: &crate::model::plan::Plan,
        provider: &str,
        config_json: String,
    ) -> RunRow {
        RunRow {
            run_id: run_id.to_string(),
            plan_id: plan.plan_id.clone(),
            plan_source: plan.source.clone(),
            plan_json: plan.json.clone(),
            provider: provider.to_string(),
            config_json,
            created_at: now_rfc3339(),
            task_count: plan.tasks.len(),
            tasks: plan
                .tasks
                .iter()
                .map(|t| (t.task_id.clone(), t.agent.to_string()))
                .collect(),
        }
    }
}

/// One row of `knowledge_atoms` with its quality record.
#[derive(Debug, Clone)]
pub struct AtomRow {
    /// asset_id.
    pub atom_id: String,
    /// Task.
    pub task_id: String,
    /// Invocation.
    pub invocation_id: String,
    /// Agent.
    pub agent: String,
    /// Atom type.
    pub atom_type: String,
    /// Category.
    pub category: Option<String>,
    /// Data status.
    pub data_status: Option<String>,
    /// Paper.
    pub paper_id: Option<String>,
    /// Content JSON.
    pub content: String,
    /// Confidence.
    pub confidence: Option<f64>,
    /// Grade.
    pub grade: String,
    /// Score.
    pub score: f64,
    /// Provenance JSON.
    pub provenance: String,
    /// Delta audit JSON.
    pub delta_audit: String,
    /// Metadata JSON.
    pub metadata: String,
    /// Issues JSON array.
    pub issues: String,
    /// Existing assets referenced (rows in `relations`), with `contradicts` flag.
    pub relations: Vec<String>,
    /// Whether the atom marks a contradiction.
    pub contradiction: bool,
}

/// Rows written by a closure in the writer's transaction (see [`WriteOp::Rows`]).
pub struct RowsWrite(pub Box<RowsFn>);

/// The closure of a [`RowsWrite`].
pub type RowsFn = dyn FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<()> + Send;

impl std::fmt::Debug for RowsWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RowsWrite(..)")
    }
}

/// A write the store thread performs, in order.
#[derive(Debug)]
pub enum WriteOp {
    /// Append one event to `execution_logs`.
    Event(Arc<Envelope>),
    /// Create a run and its task rows.
    CreateRun(Box<RunRow>),
    /// Set a run's status (and finish time when final).
    RunStatus {
        /// Run.
        run_id: String,
        /// New status.
        status: String,
        /// RFC 3339 finish time, for final statuses.
        finished_at: Option<String>,
    },
    /// Update a task row.
    TaskState {
        /// Run.
        run_id: Arc<str>,
        /// Task.
        task_id: Arc<str>,
        /// New status.
        status: &'static str,
        /// Attempts so far.
        attempts: u32,
        /// Accepted atoms.
        atoms: u32,
        /// Deciding error.
        error_code: Option<&'static str>,
        /// Final invocation.
        final_invocation_id: Option<Arc<str>>,
    },
    /// Add a task to a run that grows as it goes (a debate: one task per agent turn),
    /// `pending`; the run's task count follows.
    AddTask {
        /// Run.
        run_id: Arc<str>,
        /// Task.
        task_id: Arc<str>,
        /// Agent.
        agent: Arc<str>,
    },
    /// Store a finished (or cancelled) invocation: request and response whole.
    Invocation(Box<InvocationRecord>),
    /// Accepted atoms of a task (knowledge_atoms, quality_records, relations).
    Atoms {
        /// Run.
        run_id: Arc<str>,
        /// Rows.
        atoms: Vec<AtomRow>,
    },
    /// Insert papers / imported assets (JSON rows) if absent.
    Import {
        /// Papers.
        papers: Vec<PaperRow>,
        /// Imported atoms: (atom_id, atom_type, domain, paper_id, content JSON).
        assets: Vec<AssetRow>,
    },
    /// A person's review decision with everything it changes, in one transaction.
    Review(Box<ReviewWrite>),
    /// A write and the event that tells of it, in one transaction (an ended call's row
    /// and its event: never one without the other after a crash).
    WithEvent(Box<WriteOp>, Arc<Envelope>),
    /// Several writes in the order given, in the same transaction (a call's row and the
    /// atoms it was accepted with, under the event that ends it).
    Many(Vec<WriteOp>),
    /// Rows of a layer above the store (an eval's results), written by a closure inside
    /// the batch's transaction: all of them or, after a crash, none.
    Rows(RowsWrite),
    /// Barrier: answered once everything sent before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
    /// The same barrier for an async waiter (a call that may start only once its start
    /// is durable).
    Committed(tokio::sync::oneshot::Sender<()>),
    /// Hands out `count` invocation numbers of the agent short name `name` from the
    /// file's counter (see [`super::ids`]); the first is sent once the batch holding the
    /// reservation is committed.
    ReserveIds {
        /// The agent's short name.
        name: String,
        /// How many numbers.
        count: u64,
        /// Where the first number goes.
        reply: tokio::sync::oneshot::Sender<u64>,
    },
}

/// A person's decision on a task stopped for review (E007), written in one transaction:
/// its event, its `reviews` row and, for an acceptance, the atoms (marked as reviewed)
/// and the task's new status. The run, task and invocation are the event's.
#[derive(Debug)]
pub struct ReviewWrite {
    /// The `review_accepted` or `review_rejected` event.
    pub event: Arc<Envelope>,
    /// Whether the atoms were accepted (else rejected).
    pub accepted: bool,
    /// Who decided.
    pub reviewer: String,
    /// The note of an acceptance, the reason of a rejection.
    pub note: Option<String>,
    /// When (RFC 3339; the event's time).
    pub decided_at: String,
    /// Atoms an acceptance stores (none for a rejection).
    pub atoms: Vec<AtomRow>,
    /// The task's status and atom count after an acceptance.
    pub task_status: Option<(&'static str, u32)>,
    /// A `run_finished` event and the run's new status, when the decision changes how a
    /// run that nobody executes any more ended (nothing is left for a resume to run).
    pub run_end: Option<(Arc<Envelope>, &'static str)>,
}

/// An imported atom: (atom_id, atom_type, domain, paper_id, content JSON).
pub type AssetRow = (String, String, Option<String>, Option<String>, String);

/// One row of `invocations`, written once when the invocation ends.
#[derive(Debug, Clone)]
pub struct InvocationRecord {
    /// Id (unique within the run).
    pub invocation_id: Arc<str>,
    /// Run.
    pub run_id: Arc<str>,
    /// Task.
    pub task_id: Arc<str>,
    /// Agent.
    pub agent: Arc<str>,
    /// Attempt number.
    pub attempt: u32,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Request JSON with the system prompt replaced by its hash.
    pub request_json: String,
    /// (hash, text) of the system prompt, stored once per database.
    pub system_prompt: (String, Arc<str>),
    /// `success`, `partial`, `failed`, `timeout`, `cancelled`, or `lost` (in flight
    /// when its process died, closed by the resume).
    pub status: &'static str,
    /// Wall time.
    pub execution_time_ms: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Comma-separated error codes.
    pub error_codes: String,
    /// Whole response JSON.
    pub response_json: String,
    /// Usage the provider reported, if any.
    pub provider_usage: Option<crate::base::protocol::provider::Usage>,
    /// What the call cost, US dollars (`None`: no price for its model).
    pub cost_usd: Option<f64>,
}

/// One `papers` row to import.
#[derive(Debug, Clone)]
pub struct PaperRow {
    /// Id.
    pub paper_id: String,
    /// Title.
    pub title: String,
    /// Authors.
    pub authors: Option<String>,
    /// Year.
    pub year: Option<i64>,
    /// Domain.
    pub domain: Option<String>,
    /// Abstract.
    pub abstract_text: Option<String>,
}
