//! The SQLite schema, its version and forward migrations, and the column whitelist of
//! the tables that `db_query` references may read (seed 000 §2.4).

use rusqlite::Connection;

use super::StoreError;

/// Current schema version (stored in `PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 13;

/// Migrations, in order: `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    run_id       TEXT PRIMARY KEY,
    plan_id      TEXT NOT NULL,
    plan_source  TEXT NOT NULL,          -- file the plan came from
    plan_json    TEXT NOT NULL,          -- the plan snapshot, as loaded
    provider     TEXT NOT NULL,
    config_json  TEXT NOT NULL,          -- engine config of the run (seed, concurrency, faults)
    status       TEXT NOT NULL,          -- running | paused | succeeded | partial | failed | cancelled | interrupted
    created_at   TEXT NOT NULL,          -- RFC 3339
    finished_at  TEXT,
    task_count   INTEGER NOT NULL
);

CREATE TABLE tasks (
    run_id        TEXT NOT NULL REFERENCES runs(run_id),
    task_id       TEXT NOT NULL,
    agent         TEXT NOT NULL,
    status        TEXT NOT NULL,         -- pending | success | partial | failed | timeout | blocked | cancelled (in flight: see execution_logs)
    attempts      INTEGER NOT NULL DEFAULT 0,
    atoms         INTEGER NOT NULL DEFAULT 0,
    error_code    TEXT,
    final_invocation_id TEXT,            -- its response_json holds the task's output
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (run_id, task_id)
);

CREATE TABLE invocations (
    invocation_id   TEXT NOT NULL,       -- unique within its run
    run_id          TEXT NOT NULL REFERENCES runs(run_id),
    task_id         TEXT NOT NULL,
    agent           TEXT NOT NULL,
    attempt         INTEGER NOT NULL,
    status          TEXT,                -- success | partial | failed | timeout | cancelled (written when it ends)
    started_at      TEXT NOT NULL,
    execution_time_ms INTEGER,
    prompt_tokens   INTEGER NOT NULL,
    output_tokens   INTEGER,
    error_codes     TEXT,                -- comma-separated, e.g. "E002"
    request_json    TEXT NOT NULL,       -- the whole AgentRequest (system prompt by reference, see prompts)
    response_json   TEXT,                -- the whole AgentResponse, quality_check computed by plexus
    UNIQUE (run_id, invocation_id)
);
CREATE INDEX invocations_by_task ON invocations(run_id, task_id);

CREATE TABLE prompts (
    prompt_hash  TEXT PRIMARY KEY,       -- hex of a 64-bit hash of the text
    text         TEXT NOT NULL
);

CREATE TABLE papers (
    paper_id     TEXT PRIMARY KEY,
    title        TEXT,
    authors      TEXT,
    year         INTEGER,
    venue        TEXT,
    domain       TEXT,
    pdf_path     TEXT,
    arxiv_url    TEXT,
    abstract     TEXT,
    created_at   TEXT NOT NULL
);

CREATE TABLE knowledge_atoms (
    atom_id       TEXT NOT NULL,         -- the atom's asset_id
    run_id        TEXT,                  -- NULL for imported assets
    task_id       TEXT,
    invocation_id TEXT,
    agent         TEXT,
    atom_type     TEXT,
    category      TEXT,
    data_status   TEXT,
    paper_id      TEXT,
    domain        TEXT,
    content       TEXT NOT NULL,         -- JSON
    confidence    REAL,
    grade         TEXT,
    score         REAL,
    provenance    TEXT,                  -- JSON
    delta_audit   TEXT,                  -- JSON
    metadata      TEXT,                  -- JSON
    created_at    TEXT NOT NULL
);
CREATE INDEX knowledge_atoms_by_id ON knowledge_atoms(atom_id);
CREATE INDEX knowledge_atoms_by_run ON knowledge_atoms(run_id, task_id);

CREATE TABLE relations (
    relation_id    INTEGER PRIMARY KEY,
    source_atom_id TEXT NOT NULL,
    target_atom_id TEXT NOT NULL,
    relation_type  TEXT NOT NULL,        -- builds_on | contradicts
    run_id         TEXT,
    invocation_id  TEXT,
    note           TEXT,
    created_at     TEXT NOT NULL
);
CREATE INDEX relations_by_source ON relations(source_atom_id);

CREATE TABLE quality_records (
    record_id     INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    atom_id       TEXT NOT NULL,
    grade         TEXT NOT NULL,
    score         REAL NOT NULL,
    issues        TEXT NOT NULL,         -- JSON array of quality issues
    created_at    TEXT NOT NULL
);
CREATE INDEX quality_records_by_invocation ON quality_records(invocation_id);

CREATE TABLE execution_logs (
    run_id        TEXT NOT NULL,
    seq           INTEGER NOT NULL,      -- dense per run, from 1
    ts            INTEGER NOT NULL,      -- milliseconds since the Unix epoch
    kind          TEXT NOT NULL,
    task_id       TEXT,
    invocation_id TEXT,
    agent         TEXT,
    payload       TEXT NOT NULL,         -- JSON of the event without its kind
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"#,
    r#"
-- Usage as the provider reported it, beside plexus's own counts (NULL when not reported).
ALTER TABLE invocations ADD COLUMN provider_prompt_tokens INTEGER;
ALTER TABLE invocations ADD COLUMN provider_output_tokens INTEGER;
"#,
    r#"
-- The event log keyed by one integer, (run number << 32) | seq: the events of the run
-- numbered last go to the end of a rowid table, whose pages SQLite fills whole without
-- rebalancing, where the text key (run_id, seq) made every append a search and every
-- full page a split. (Events of an older run, resumed, go in the middle as before.)
-- The CHECK keeps a writer that does not know the key (an older plexus still running)
-- from filing events under an id SQLite picks.
CREATE TABLE log_runs (
    run_no  INTEGER PRIMARY KEY,         -- a run's number in event ids
    run_id  TEXT NOT NULL UNIQUE
);
INSERT INTO log_runs (run_id) SELECT DISTINCT run_id FROM execution_logs ORDER BY run_id;
CREATE TABLE execution_logs_v3 (
    event_id      INTEGER PRIMARY KEY,   -- (log_runs.run_no << 32) | seq
    run_id        TEXT NOT NULL,
    seq           INTEGER NOT NULL,      -- dense per run, from 1
    ts            INTEGER NOT NULL,      -- milliseconds since the Unix epoch
    kind          TEXT NOT NULL,
    task_id       TEXT,
    invocation_id TEXT,
    agent         TEXT,
    payload       TEXT NOT NULL,         -- JSON of the event without its kind
    CHECK ((event_id & 4294967295) = seq)
);
INSERT INTO execution_logs_v3
    SELECT (l.run_no << 32) | e.seq, e.run_id, e.seq, e.ts, e.kind, e.task_id, e.invocation_id, e.agent, e.payload
    FROM execution_logs e JOIN log_runs l ON l.run_id = e.run_id;
DROP TABLE execution_logs;
ALTER TABLE execution_logs_v3 RENAME TO execution_logs;
"#,
    r#"
-- Who executes a run: one live process at a time (see store/lease.rs).
CREATE TABLE run_leases (
    run_id        TEXT PRIMARY KEY,
    token         INTEGER NOT NULL,      -- random number naming the holder
    pid           INTEGER NOT NULL,
    host          TEXT NOT NULL,
    started_at    TEXT NOT NULL,         -- RFC 3339, when the lease was taken
    heartbeat_ms  INTEGER NOT NULL       -- refreshed every 2 s; ms since the Unix epoch
);
"#,
    r#"
-- A person's decision on a task stopped for review by a hallucination (E007): one per
-- invocation reviewed. The decision's event in the run's log is the record; this row
-- makes the review queue one indexed read.
CREATE TABLE reviews (
    run_id        TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    invocation_id TEXT NOT NULL,         -- whose atoms were reviewed
    decision      TEXT NOT NULL,         -- accepted | rejected
    reviewer      TEXT NOT NULL,
    note          TEXT,                  -- the note of an acceptance, the reason of a rejection
    decided_at    TEXT NOT NULL,         -- RFC 3339
    seq           INTEGER NOT NULL,      -- the decision's event in the run's log
    PRIMARY KEY (run_id, invocation_id)
);
-- Atoms stored by a person's acceptance say who accepted them and when (NULL for atoms
-- the quality gate accepted).
ALTER TABLE knowledge_atoms ADD COLUMN reviewed_by TEXT;
ALTER TABLE knowledge_atoms ADD COLUMN reviewed_at TEXT;
"#,
    r#"
-- The Failures screen's list in one read: the first error's message and the mean score
-- of an attempt (computed from its response, never stored twice), and an index over the
-- attempts that failed, timed out or ended partial that holds every column the list
-- shows, newest first.
ALTER TABLE invocations ADD COLUMN error_message TEXT GENERATED ALWAYS AS (
    CASE WHEN json_valid(response_json)
         THEN json_extract(response_json, '$.errors[0].message') END) VIRTUAL;
ALTER TABLE invocations ADD COLUMN avg_score REAL GENERATED ALWAYS AS (
    CASE WHEN json_valid(response_json)
          AND json_extract(response_json, '$.quality_check.atoms_generated') > 0
         THEN json_extract(response_json, '$.quality_check.avg_quality_score') END) VIRTUAL;
CREATE INDEX invocations_failed ON invocations(
    started_at, invocation_id, run_id, task_id, attempt, agent, status, error_codes,
    execution_time_ms, error_message, avg_score)
    WHERE status IN ('failed', 'timeout', 'partial');
"#,
    r#"
-- Invocation ids unique in the whole file: the SEQ of each agent's ids comes from this
-- counter, handed out in blocks inside the writer's transaction (see store/ids.rs). It is
-- seeded from the ids already in the file when this version is applied.
CREATE TABLE IF NOT EXISTS id_counters (
    name  TEXT PRIMARY KEY,              -- an agent's short name, as ids spell it
    next  INTEGER NOT NULL               -- the first SEQ not handed out yet
);
-- A call in flight when its process died is closed by the resume that finds it, with the
-- status `lost`; the Failures screen lists it with the attempts that failed.
DROP INDEX IF EXISTS invocations_failed;
CREATE INDEX invocations_failed ON invocations(
    started_at, invocation_id, run_id, task_id, attempt, agent, status, error_codes,
    execution_time_ms, error_message, avg_score)
    WHERE status IN ('failed', 'timeout', 'partial', 'lost');
"#,
    r#"
-- A run's plan text in a table of its own: updating a run's row (its status, its end)
-- made SQLite read and write the whole row, the plan's text with it (52 MB for a plan of
-- 100,000 tasks). A new run's `runs.plan_json` is empty and its text is here; a run made
-- before this version keeps its text in its row, where an older plexus still running on
-- the file reads it (readers take this table's text, else the row's: see PLAN_JSON).
CREATE TABLE run_plans (
    run_id     TEXT PRIMARY KEY REFERENCES runs(run_id),
    plan_json  TEXT NOT NULL             -- the plan snapshot, as loaded
);
"#,
    r#"
-- What each call cost: the prompt tokens the provider read from its cache (NULL when it
-- reported no usage) and the cost in US dollars at the price of the call's model (NULL
-- when the model had no price: unknown, never 0).
ALTER TABLE invocations ADD COLUMN provider_cached_tokens INTEGER;
ALTER TABLE invocations ADD COLUMN cost_usd REAL;
-- A run's and an agent's cost summed from this index alone, without reading the rows
-- (whose request and response text sit before the cost).
CREATE INDEX invocations_cost ON invocations(run_id, agent, cost_usd);
"#,
    r#"
-- Evaluations over a dataset (see eval/record.rs): an eval is one run of the plan's
-- copies, one per sample and epoch; these tables keep its samples, each sample's
-- attempts (one per epoch) and one row per check result. (`IF NOT EXISTS`: a file
-- whose version number was set back keeps the tables it has.)
CREATE TABLE IF NOT EXISTS evals (
    eval_id      TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    eval_key     TEXT NOT NULL,          -- hash of what makes re-issuing the command the same eval
    kind         TEXT NOT NULL,          -- run | rerun | rescore
    run_id       TEXT,                   -- the run of the plan's copies (a rescore: the parent's)
    parent_id    TEXT,                   -- the eval a rerun or a rescore comes from
    iteration    INTEGER NOT NULL,
    spec_path    TEXT NOT NULL,
    spec_json    TEXT NOT NULL,          -- the spec as run: checks, epochs, reducer, gates
    dataset_path TEXT NOT NULL,
    out_dir      TEXT,                   -- where the failure tree is written
    status       TEXT NOT NULL,          -- running | finished | interrupted | failed
    created_at   TEXT NOT NULL,
    finished_at  TEXT,
    sample_count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS evals_by_key ON evals(eval_key);
CREATE TABLE IF NOT EXISTS eval_samples (
    eval_id        TEXT NOT NULL,
    sample_id      TEXT NOT NULL,
    ord            INTEGER NOT NULL,     -- position in the dataset
    file_id        TEXT NOT NULL,        -- the sample's name in the failure tree
    hash           TEXT NOT NULL,        -- SHA-256 of the row's content
    line           INTEGER NOT NULL,
    content        TEXT NOT NULL,        -- JSON: input, expected, vars, metadata
    status         TEXT NOT NULL,        -- pending | passed | failed | error
    score          REAL,
    inherited_from TEXT,                 -- the eval whose attempts this sample's result is
    PRIMARY KEY (eval_id, sample_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS eval_attempts (
    eval_id    TEXT NOT NULL,
    sample_id  TEXT NOT NULL,
    epoch      INTEGER NOT NULL,
    run_id     TEXT NOT NULL,            -- the run its copy of the plan ran in
    status     TEXT NOT NULL,            -- passed | failed | error
    score      REAL NOT NULL,
    tokens     INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    cost_usd   REAL,
    error      TEXT,                     -- why it could not be scored
    PRIMARY KEY (eval_id, sample_id, epoch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS eval_checks (
    eval_id    TEXT NOT NULL,
    sample_id  TEXT NOT NULL,
    epoch      INTEGER NOT NULL,
    check_name TEXT NOT NULL,
    passed     INTEGER,                  -- 1 or 0; NULL when it could not be scored
    score      REAL,
    result     TEXT,                     -- JSON: expected, found, at, why
    PRIMARY KEY (eval_id, sample_id, epoch, check_name)
) WITHOUT ROWID;
"#,
    r#"
-- Each scored sample's result per check over its epochs, one letter per check of the
-- eval's scoring in its order (p passed, f failed, e not scored): what the Eval screen
-- and `eval compare` read, one row per sample instead of one per check and epoch.
ALTER TABLE eval_samples ADD COLUMN marks TEXT;
-- What the LLM judges of an attempt's `judge` checks spent, kept apart from the
-- sample's own tokens and cost.
ALTER TABLE eval_attempts ADD COLUMN judge_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE eval_attempts ADD COLUMN judge_cost_usd REAL;
-- Judges' answers by what was asked (rubric, judge model, vote, input, expected and
-- output, hashed): the same question is not asked again.
CREATE TABLE IF NOT EXISTS judge_cache (
    key        TEXT PRIMARY KEY,
    judge      TEXT NOT NULL,
    answer     TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
"#,
    r#"
-- The events that start and stop a run's own clock, found without reading its log: the
-- Runs screen shows each run's running time (its pauses and the gaps before a resume
-- left out, as the run's clock counts it), not the time from its start to its end.
CREATE INDEX IF NOT EXISTS execution_logs_lifecycle ON execution_logs(event_id, kind, ts)
    WHERE kind IN ('run_started', 'run_resumed', 'run_paused', 'run_unpaused', 'run_finished');
"#,
    r#"
-- The events that start and stop a run's clock, in a table of their own that the writer
-- fills beside the log: the partial index of version 12 made every event's insert about
-- twice as slow, though it holds five kinds of rare events. Filled from the log once
-- here (through that index), which then goes.
CREATE TABLE IF NOT EXISTS run_clock_events (
    event_id  INTEGER PRIMARY KEY,       -- the event's id in execution_logs
    kind      TEXT NOT NULL,             -- run_started | run_resumed | run_paused | run_unpaused | run_finished
    ts        INTEGER NOT NULL           -- milliseconds since the Unix epoch
);
INSERT OR IGNORE INTO run_clock_events (event_id, kind, ts)
    SELECT event_id, kind, ts FROM execution_logs
     WHERE kind IN ('run_started', 'run_resumed', 'run_paused', 'run_unpaused', 'run_finished');
DROP INDEX IF EXISTS execution_logs_lifecycle;
"#,
];

/// SQL for the plan text of the run whose `runs` row is named `r` in the query: from
/// `run_plans`, or from the row itself for a run made before schema version 8. The text
/// is written in place as bytes (see `store::in_place`), so it is read back as text.
pub const PLAN_JSON: &str =
    "CAST(COALESCE((SELECT p.plan_json FROM run_plans p WHERE p.run_id = r.run_id), r.plan_json) AS TEXT)";

/// The version whose migration creates the id counters, seeded from the file's ids.
const ID_COUNTERS_VERSION: usize = 7;

/// The kinds of the events that start and stop a run's clock, kept in
/// `run_clock_events` beside the log.
pub const CLOCK_KINDS: [&str; 5] = [
    "run_started",
    "run_resumed",
    "run_paused",
    "run_unpaused",
    "run_finished",
];

/// The first event id of run `run_no`'s log; its event `seq` has id `base | seq`.
pub fn event_base(run_no: i64) -> i64 {
    run_no << 32
}

/// Largest `seq` an event id can hold.
pub const MAX_SEQ: u64 = (1 << 32) - 1;

/// SQL for the first event id of the run named by parameter `?1` (NULL when the run
/// has no events).
pub const RUN_BASE_SQL: &str = "((SELECT run_no FROM log_runs WHERE run_id = ?1) << 32)";

/// SQL that keeps the events of the run whose first event id is the SQL `base`: the
/// one id range every read of a run's log searches.
pub fn run_events_sql(base: &str) -> String {
    format!("event_id BETWEEN {base} AND ({base}) | {MAX_SEQ}")
}

/// Refuses a `user_version` this build does not know: negative, or newer than
/// [`SCHEMA_VERSION`].
pub fn check_version(v: i64) -> Result<(), StoreError> {
    if v < 0 {
        return Err(StoreError::BadVersion(v));
    }
    if v > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found: v,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

fn user_version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Brings `conn` to [`SCHEMA_VERSION`]. The version is read again and every missing
/// migration applied inside one `BEGIN IMMEDIATE` transaction (which waits for the busy
/// timeout), so processes opening one file together never both migrate it. A file at
/// version 0 that already has tables was not made by plexus and is refused.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// [`migrate`] up to `target` only (tests make files of older versions with it).
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<(), StoreError> {
    let target = target.clamp(0, SCHEMA_VERSION);
    let seen = user_version(conn)?;
    check_version(seen)?;
    if seen >= target {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current = user_version(&tx)?;
    check_version(current)?;
    if current == 0 {
        let tables: i64 = tx.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(StoreError::NotPlexus {
                path: tx.path().map(std::path::PathBuf::from).unwrap_or_default(),
                empty: false,
            });
        }
    }
    for (i, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .take(target as usize)
        .skip(current as usize)
    {
        tx.execute_batch(sql)?;
        if i + 1 == ID_COUNTERS_VERSION {
            super::ids::seed_counters(&tx)?;
        }
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()?;
    Ok(())
}

pub use crate::base::protocol::refs::{queryable_columns, QUERYABLE};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_database_migrates_forward_keeping_its_rows() {
        let mut conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(MIGRATIONS[0]).expect("v1");
        conn.pragma_update(None, "user_version", 1)
            .expect("version");
        conn.execute(
            "INSERT INTO runs VALUES ('R1','P','f','{}','simulated','{}','succeeded','t',NULL,1)",
            [],
        )
        .expect("row");
        for (run, seq) in [("R1", 1), ("R1", 2), ("R0", 1)] {
            conn.execute(
                "INSERT INTO execution_logs VALUES (?1, ?2, 5, 'task_ready', 'T', NULL, NULL, '{}')",
                rusqlite::params![run, seq],
            )
            .expect("event");
        }
        migrate(&mut conn).expect("migrate");
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(v, SCHEMA_VERSION);
        conn.execute(
            "INSERT INTO invocations (invocation_id, run_id, task_id, agent, attempt, started_at, prompt_tokens, request_json, provider_prompt_tokens, provider_output_tokens) VALUES ('I','R1','T','A',1,'t',5,'{}',7,3)",
            [],
        )
        .expect("new columns exist");
        let runs: i64 = conn
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .expect("count");
        assert_eq!(runs, 1);
        // Every event kept, keyed by its run's number and its sequence number.
        let events: Vec<(i64, String, i64)> = conn
            .prepare("SELECT e.event_id, e.run_id, e.seq FROM execution_logs e ORDER BY e.event_id")
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(
            events,
            vec![
                (event_base(1) | 1, "R0".to_string(), 1),
                (event_base(2) | 1, "R1".to_string(), 1),
                (event_base(2) | 2, "R1".to_string(), 2),
            ]
        );
        migrate(&mut conn).expect("idempotent");
    }

    #[test]
    fn a_version_12_file_keeps_its_clock_events_apart_and_loses_the_index() {
        let mut conn = Connection::open_in_memory().expect("db");
        migrate_to(&mut conn, 12).expect("v12");
        conn.execute("INSERT INTO log_runs (run_id) VALUES ('R1')", [])
            .expect("run");
        for (seq, kind) in [(1, "run_started"), (2, "chunk"), (3, "run_paused")] {
            conn.execute(
                "INSERT INTO execution_logs VALUES (?1, 'R1', ?2, ?2, ?3, NULL, NULL, NULL, '{}')",
                rusqlite::params![event_base(1) | seq, seq, kind],
            )
            .expect("event");
        }
        migrate(&mut conn).expect("migrate");
        let kept: Vec<(i64, String)> = conn
            .prepare("SELECT event_id & 4294967295, kind FROM run_clock_events ORDER BY event_id")
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(kept, [(1, "run_started".into()), (3, "run_paused".into())]);
        let indexes: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'execution_logs'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(indexes, 0, "no index slows the log's inserts");
    }
}
