//! Appending a batch's events to `execution_logs`: payloads serialised back to back,
//! rows inserted 32 to a statement, each keyed by its run's number and its sequence
//! number (schema version 3).

use std::sync::Arc;

use rusqlite::{CachedStatement, Connection, Transaction};

use super::StoreError;
use crate::model::event::Envelope;

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
pub(super) fn insert_events(
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
    for e in events.iter().filter(|e| is_clock_kind(e.event.kind())) {
        note_clock_event(tx, event_id(tx, run_nos, e)?, e.event.kind(), e.ts)?;
    }
    // One big event (a run's start lists every task: 17 MB for 100,000) leaves no buffer
    // of its size behind for the rest of the run.
    if buf.capacity() > KEPT_PAYLOAD_BYTES {
        *buf = Vec::new();
    }
    Ok(())
}

/// Whether events of `kind` start or stop a run's clock.
pub fn is_clock_kind(kind: &str) -> bool {
    super::schema::CLOCK_KINDS.contains(&kind)
}

/// Keeps event `event_id` (of `kind`, at `ts`), which starts or stops its run's clock, in
/// `run_clock_events`: every writer of the log calls it for those events.
pub fn note_clock_event(
    conn: &Connection,
    event_id: i64,
    kind: &str,
    ts: i64,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO run_clock_events (event_id, kind, ts) VALUES (?1, ?2, ?3)",
    )?
    .execute(rusqlite::params![event_id, kind, ts])?;
    Ok(())
}

/// The largest payload buffer the writer keeps between batches.
const KEPT_PAYLOAD_BYTES: usize = 4 << 20;

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

/// The statement in `slot`, preparing `sql` the first time.
pub(super) fn held<'s, 't>(
    slot: &'s mut Option<CachedStatement<'t>>,
    conn: &'t Connection,
    sql: &str,
) -> Result<&'s mut CachedStatement<'t>, StoreError> {
    if slot.is_none() {
        *slot = Some(conn.prepare_cached(sql)?);
    }
    Ok(slot.as_mut().expect("prepared above"))
}
