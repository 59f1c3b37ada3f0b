//! The one writer thread: owns the write connection, applies operations in batches (one
//! transaction per batch, group commit), and only then hands the batch's events to the
//! subscriber, so every event a consumer sees is already durable.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::{params, CachedStatement, Connection, Transaction};

use super::{open_connection, StoreError};
use crate::event::Envelope;

/// Most operations applied in one transaction.
const MAX_BATCH: usize = 8192;

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
        plan: &crate::plan::Plan,
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
                .map(|t| (t.task_id.clone(), t.agent.clone()))
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
    /// Barrier: answered once everything sent before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
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
    /// `success`, `partial`, `failed`, `timeout` or `cancelled`.
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
    pub provider_usage: Option<crate::provider::Usage>,
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

/// Counters of the writer, readable while it runs.
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Events committed.
    pub events: AtomicU64,
    /// Transactions committed.
    pub batches: AtomicU64,
    /// Operations queued but not yet committed.
    pub backlog: AtomicUsize,
    /// Histogram of event commit latency (ms after the event's timestamp), 0..=1000.
    pub latency_ms: Mutex<Vec<u64>>,
}

impl WriterStats {
    /// Latency (ms) at quantile `q` in [0, 1] of committed events.
    pub fn latency_quantile(&self, q: f64) -> u64 {
        let h = self
            .latency_ms
            .lock()
            .map(|h| h.clone())
            .unwrap_or_default();
        let total: u64 = h.iter().sum();
        if total == 0 {
            return 0;
        }
        let target = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (ms, n) in h.iter().enumerate() {
            acc += n;
            if acc >= target {
                return ms as u64;
            }
        }
        h.len() as u64
    }
}

/// Handle to the writer thread. Dropping every handle stops the thread after a final commit.
#[derive(Clone)]
pub struct Writer {
    tx: Sender<WriteOp>,
    stats: Arc<WriterStats>,
    failure: Arc<Mutex<Option<String>>>,
}

/// Where committed events go.
pub type Subscriber = tokio::sync::mpsc::UnboundedSender<Vec<Arc<Envelope>>>;

impl Writer {
    /// Queues an operation.
    pub fn send(&self, op: WriteOp) -> Result<(), StoreError> {
        self.stats.backlog.fetch_add(1, Ordering::Relaxed);
        self.tx
            .send(op)
            .map_err(|_| StoreError::WriterGone(self.failure().unwrap_or_else(|| "stopped".into())))
    }

    /// Waits until everything queued so far is committed.
    pub fn flush(&self) -> Result<(), StoreError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.send(WriteOp::Flush(tx))?;
        rx.recv()
            .map_err(|_| StoreError::WriterGone(self.failure().unwrap_or_else(|| "stopped".into())))
    }

    /// Counters.
    pub fn stats(&self) -> &Arc<WriterStats> {
        &self.stats
    }

    /// The error that stopped the writer, if any.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }
}

/// Starts the writer thread on `path`; committed events go to `subscriber` if given.
pub fn spawn_writer(
    path: &std::path::Path,
    subscriber: Option<Subscriber>,
) -> Result<(Writer, JoinHandle<()>), StoreError> {
    let conn = open_connection(path)?;
    // Checkpoints (copying the WAL into the database and syncing it) run on a thread of
    // their own, so the writer never waits for them.
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    let checkpointer = Checkpointer::start(path)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let stats = Arc::new(WriterStats {
        latency_ms: Mutex::new(vec![0; 1001]),
        ..Default::default()
    });
    let failure = Arc::new(Mutex::new(None));
    let writer = Writer {
        tx,
        stats: stats.clone(),
        failure: failure.clone(),
    };
    let handle = std::thread::Builder::new()
        .name("plexus-store".into())
        .spawn(move || {
            if let Err(e) = run_writer(conn, rx, subscriber, &stats) {
                tracing::error!("store writer stopped: {e}");
                if let Ok(mut f) = failure.lock() {
                    *f = Some(e.to_string());
                }
            }
            checkpointer.stop();
        })
        .map_err(|e| StoreError::WriterGone(e.to_string()))?;
    Ok((writer, handle))
}

/// Runs `PRAGMA wal_checkpoint(PASSIVE)` every [`CHECKPOINT_EVERY`] on its own
/// connection (passive checkpoints never block the writer), and a last one on stop.
struct Checkpointer {
    stop: std::sync::mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

/// Interval between background checkpoints.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

impl Checkpointer {
    fn start(path: &std::path::Path) -> Result<Checkpointer, StoreError> {
        let conn = open_connection(path)?;
        let (stop, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("plexus-checkpoint".into())
            .spawn(move || loop {
                let last = !matches!(
                    rx.recv_timeout(CHECKPOINT_EVERY),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                let mode = if last { "TRUNCATE" } else { "PASSIVE" };
                if let Err(e) =
                    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()))
                {
                    tracing::warn!("checkpoint failed: {e}");
                }
                if last {
                    return;
                }
            })
            .map_err(|e| StoreError::WriterGone(e.to_string()))?;
        Ok(Checkpointer { stop, thread })
    }

    fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

/// What the writer keeps between operations.
struct WriterState {
    /// Payload bytes of the batch's events, back to back.
    payload: Vec<u8>,
    /// System prompts already stored.
    prompts: HashSet<String>,
    /// Events of the current batch, inserted together before the commit.
    events: Vec<Arc<Envelope>>,
    /// Barriers answered after the commit.
    flushes: Vec<std::sync::mpsc::Sender<()>>,
    /// Run numbers of event ids (`log_runs`), by run id.
    run_nos: rustc_hash::FxHashMap<Arc<str>, i64>,
}

fn run_writer(
    mut conn: Connection,
    rx: Receiver<WriteOp>,
    subscriber: Option<Subscriber>,
    stats: &WriterStats,
) -> Result<(), StoreError> {
    let mut batch: Vec<WriteOp> = Vec::with_capacity(MAX_BATCH);
    let mut state = WriterState {
        payload: Vec::with_capacity(1 << 16),
        prompts: HashSet::new(),
        events: Vec::new(),
        flushes: Vec::new(),
        run_nos: Default::default(),
    };
    let mut subscriber = subscriber;
    loop {
        match rx.recv() {
            Ok(op) => batch.push(op),
            Err(_) => return Ok(()),
        }
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(op) => batch.push(op),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        let n = batch.len();
        {
            let tx = conn.transaction()?;
            {
                let mut stmts = Stmts::default();
                for op in batch.drain(..) {
                    apply(&tx, op, &mut state, &mut stmts)?;
                }
            }
            insert_events(&tx, &state.events, &mut state.payload, &mut state.run_nos)?;
            tx.commit()?;
        }
        let events = std::mem::take(&mut state.events);
        stats.backlog.fetch_sub(n, Ordering::Relaxed);
        stats.batches.fetch_add(1, Ordering::Relaxed);
        stats
            .events
            .fetch_add(events.len() as u64, Ordering::Relaxed);
        if !events.is_empty() {
            let now = chrono::Utc::now().timestamp_millis();
            if let Ok(mut h) = stats.latency_ms.lock() {
                for e in &events {
                    let ms = (now - e.ts).clamp(0, 1000) as usize;
                    h[ms] += 1;
                }
            }
            if let Some(sub) = &subscriber {
                if sub.send(events).is_err() {
                    subscriber = None; // the consumer went away; keep persisting
                }
            }
        }
        for f in state.flushes.drain(..) {
            let _ = f.send(());
        }
    }
}

/// Rows per multi-row INSERT of events.
const EVENT_ROWS: usize = 32;
// Parameters per row besides the shared run id: the event id, then the event.
const ROW_PARAMS: usize = 8;
// `OR FAIL`: a multi-row INSERT that may abort half way makes SQLite keep a statement
// journal (copies of the pages it touches, spilled to a temporary file past 64 KiB) so
// that it can undo just that statement. The writer never continues a batch after a
// failed statement (the whole transaction is rolled back), so that undo is not needed.
const EVENT_COLUMNS: &str = "INSERT OR FAIL INTO execution_logs (event_id, run_id, seq, ts, kind, task_id, invocation_id, agent, payload) VALUES ";

/// An INSERT of `rows` events. Their run id is parameter 1, bound once for the whole
/// statement (a text parameter is copied at every bind); row `r`'s other columns are
/// parameters `2 + 8r ..= 9 + 8r`.
fn multi_row_sql(rows: usize) -> String {
    use std::fmt::Write as _;
    let mut sql = String::from(EVENT_COLUMNS);
    for r in 0..rows {
        let p = 2 + r * ROW_PARAMS;
        let _ = write!(
            sql,
            "{}(?{p},?1,?{},?{},?{},?{},?{},?{},?{})",
            if r > 0 { "," } else { "" },
            p + 1,
            p + 2,
            p + 3,
            p + 4,
            p + 5,
            p + 6,
            p + 7
        );
    }
    sql
}

/// Inserts a batch's events, `EVENT_ROWS` rows per statement.
fn insert_events(
    tx: &Transaction<'_>,
    events: &[Arc<Envelope>],
    buf: &mut Vec<u8>,
    run_nos: &mut rustc_hash::FxHashMap<Arc<str>, i64>,
) -> Result<(), StoreError> {
    static FULL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static ONE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if events.is_empty() {
        return Ok(());
    }
    buf.clear();
    let mut ends = Vec::with_capacity(events.len());
    for e in events {
        e.event
            .append_payload(buf)
            .map_err(|err| StoreError::Json {
                what: "event payload".into(),
                source: err,
            })?;
        ends.push(buf.len());
    }
    let text = std::str::from_utf8(buf)
        .map_err(|e| StoreError::WriterGone(format!("event payload is not UTF-8: {e}")))?;
    let payload = |k: usize| &text[if k == 0 { 0 } else { ends[k - 1] }..ends[k]];
    // Whole groups of EVENT_ROWS events of one run in one statement each, the rest one
    // row at a time. Each statement is taken from the cache once per batch: every
    // parameter is bound again before each execution, so nothing needs clearing.
    let mut many = None;
    let mut one = None;
    let mut k = 0;
    while k < events.len() {
        let one_run = |g: &[Arc<Envelope>]| {
            g.iter()
                .all(|e| Arc::ptr_eq(&e.run_id, &g[0].run_id) || e.run_id == g[0].run_id)
        };
        let rows = if events.get(k..k + EVENT_ROWS).is_some_and(one_run) {
            EVENT_ROWS
        } else {
            1
        };
        let st = if rows == EVENT_ROWS {
            held(
                &mut many,
                tx,
                FULL.get_or_init(|| multi_row_sql(EVENT_ROWS)),
            )?
        } else {
            held(&mut one, tx, ONE.get_or_init(|| multi_row_sql(1)))?
        };
        st.raw_bind_parameter(1, &*events[k].run_id)?;
        for (r, e) in events[k..k + rows].iter().enumerate() {
            let p = 2 + r * ROW_PARAMS;
            st.raw_bind_parameter(p, event_id(tx, run_nos, e)?)?;
            st.raw_bind_parameter(p + 1, e.seq as i64)?;
            st.raw_bind_parameter(p + 2, e.ts)?;
            st.raw_bind_parameter(p + 3, e.event.kind())?;
            st.raw_bind_parameter(p + 4, e.task_id.as_deref())?;
            st.raw_bind_parameter(p + 5, e.invocation_id.as_deref())?;
            st.raw_bind_parameter(p + 6, e.agent.as_deref())?;
            st.raw_bind_parameter(p + 7, payload(k + r))?;
        }
        st.raw_execute()?;
        k += rows;
    }
    Ok(())
}

/// The `execution_logs` key of `e`: its run's number (from `log_runs`, numbered on the
/// run's first event) and its sequence number.
fn event_id(
    tx: &Transaction<'_>,
    run_nos: &mut rustc_hash::FxHashMap<Arc<str>, i64>,
    e: &Envelope,
) -> Result<i64, StoreError> {
    if e.seq > super::schema::MAX_SEQ {
        return Err(StoreError::LogFull {
            run_id: e.run_id.to_string(),
            limit: super::schema::MAX_SEQ,
        });
    }
    let run_no = match run_nos.get(&e.run_id) {
        Some(n) => *n,
        None => {
            tx.prepare_cached("INSERT OR IGNORE INTO log_runs (run_id) VALUES (?1)")?
                .execute([&*e.run_id])?;
            let n: i64 = tx
                .prepare_cached("SELECT run_no FROM log_runs WHERE run_id = ?1")?
                .query_row([&*e.run_id], |r| r.get(0))?;
            run_nos.insert(e.run_id.clone(), n);
            n
        }
    };
    Ok(super::schema::event_base(run_no) | e.seq as i64)
}

/// The per-row statements of one transaction, prepared on first use and kept until the
/// batch ends: taking a statement from rusqlite's cache for every row (a hash of its SQL,
/// then a reset and clear on return) cost as much as some of the inserts.
#[derive(Default)]
struct Stmts<'t> {
    task_state: Option<CachedStatement<'t>>,
    invocation: Option<CachedStatement<'t>>,
    atom: Option<CachedStatement<'t>>,
    quality: Option<CachedStatement<'t>>,
    relation: Option<CachedStatement<'t>>,
}

/// The statement in `slot`, preparing `sql` the first time.
fn held<'s, 't>(
    slot: &'s mut Option<CachedStatement<'t>>,
    conn: &'t Connection,
    sql: &str,
) -> Result<&'s mut CachedStatement<'t>, StoreError> {
    if slot.is_none() {
        *slot = Some(conn.prepare_cached(sql)?);
    }
    Ok(slot.as_mut().expect("prepared above"))
}

fn apply<'t>(
    tx: &'t Transaction<'_>,
    op: WriteOp,
    state: &mut WriterState,
    stmts: &mut Stmts<'t>,
) -> Result<(), StoreError> {
    match op {
        WriteOp::Event(env) => state.events.push(env),
        WriteOp::CreateRun(run) => {
            tx.execute(
                "INSERT INTO runs (run_id, plan_id, plan_source, plan_json, provider, config_json, status, created_at, task_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8)",
                params![run.run_id, run.plan_id, run.plan_source, run.plan_json, run.provider, run.config_json, run.created_at, run.task_count as i64],
            )?;
            let mut st = tx.prepare_cached(
                "INSERT INTO tasks (run_id, task_id, agent, status, updated_at) VALUES (?1, ?2, ?3, 'pending', ?4)",
            )?;
            for (task, agent) in &run.tasks {
                st.execute(params![run.run_id, task, agent, run.created_at])?;
            }
        }
        WriteOp::RunStatus {
            run_id,
            status,
            finished_at,
        } => {
            tx.execute(
                "UPDATE runs SET status = ?2, finished_at = COALESCE(?3, finished_at) WHERE run_id = ?1",
                params![run_id, status, finished_at],
            )?;
        }
        WriteOp::TaskState {
            run_id,
            task_id,
            status,
            attempts,
            atoms,
            error_code,
            final_invocation_id,
        } => {
            held(&mut stmts.task_state, tx,
                "UPDATE tasks SET status = ?3, attempts = ?4, atoms = ?5, error_code = ?6, final_invocation_id = COALESCE(?7, final_invocation_id), updated_at = ?8 WHERE run_id = ?1 AND task_id = ?2",
            )?
            .execute(params![
                &*run_id,
                &*task_id,
                status,
                attempts,
                atoms,
                error_code,
                final_invocation_id.as_deref(),
                now_rfc3339()
            ])?;
        }
        WriteOp::Invocation(r) => {
            if !state.prompts.contains(&r.system_prompt.0) {
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO prompts (prompt_hash, text) VALUES (?1, ?2)",
                )?
                .execute(params![r.system_prompt.0, &*r.system_prompt.1])?;
                state.prompts.insert(r.system_prompt.0.clone());
            }
            held(&mut stmts.invocation, tx,
                "INSERT INTO invocations (invocation_id, run_id, task_id, agent, attempt, status, started_at, execution_time_ms, prompt_tokens, output_tokens, error_codes, request_json, response_json, provider_prompt_tokens, provider_output_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            )?
            .execute(params![
                &*r.invocation_id,
                &*r.run_id,
                &*r.task_id,
                &*r.agent,
                r.attempt,
                r.status,
                r.started_at,
                r.execution_time_ms as i64,
                r.prompt_tokens as i64,
                r.output_tokens as i64,
                if r.error_codes.is_empty() { None } else { Some(&r.error_codes) },
                r.request_json,
                r.response_json,
                r.provider_usage
                    .map(|u| i64::try_from(u.prompt_tokens).unwrap_or(i64::MAX)),
                r.provider_usage
                    .map(|u| i64::try_from(u.completion_tokens).unwrap_or(i64::MAX))
            ])?;
        }
        WriteOp::Atoms { run_id, atoms } => {
            let now = now_rfc3339();
            for a in atoms {
                held(&mut stmts.atom, tx,
                    "INSERT INTO knowledge_atoms (atom_id, run_id, task_id, invocation_id, agent, atom_type, category, data_status, paper_id, content, confidence, grade, score, provenance, delta_audit, metadata, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                )?
                .execute(params![
                    a.atom_id,
                    &*run_id,
                    a.task_id,
                    a.invocation_id,
                    a.agent,
                    a.atom_type,
                    a.category,
                    a.data_status,
                    a.paper_id,
                    a.content,
                    a.confidence,
                    a.grade,
                    a.score,
                    a.provenance,
                    a.delta_audit,
                    a.metadata,
                    now
                ])?;
                held(&mut stmts.quality, tx,
                    "INSERT INTO quality_records (run_id, task_id, invocation_id, atom_id, grade, score, issues, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )?
                .execute(params![&*run_id, a.task_id, a.invocation_id, a.atom_id, a.grade, a.score, a.issues, now])?;
                for target in &a.relations {
                    held(&mut stmts.relation, tx,
                        "INSERT INTO relations (source_atom_id, target_atom_id, relation_type, run_id, invocation_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )?
                    .execute(params![
                        a.atom_id,
                        target,
                        if a.contradiction { "contradicts" } else { "builds_on" },
                        &*run_id,
                        a.invocation_id,
                        now
                    ])?;
                }
            }
        }
        WriteOp::Import { papers, assets } => {
            let now = now_rfc3339();
            for p in papers {
                tx.execute(
                    "INSERT OR IGNORE INTO papers (paper_id, title, authors, year, domain, abstract, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![p.paper_id, p.title, p.authors, p.year, p.domain, p.abstract_text, now],
                )?;
            }
            for (id, ty, domain, paper, content) in assets {
                tx.execute(
                    "INSERT INTO knowledge_atoms (atom_id, atom_type, domain, paper_id, content, grade, score, created_at) SELECT ?1, ?2, ?3, ?4, ?5, 'A', 1.0, ?6 WHERE NOT EXISTS (SELECT 1 FROM knowledge_atoms WHERE atom_id = ?1)",
                    params![id, ty, domain, paper, content, now],
                )?;
            }
        }
        WriteOp::Flush(f) => state.flushes.push(f),
    }
    Ok(())
}

/// Current time in RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    crate::clock::now_rfc3339()
}
