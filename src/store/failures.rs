//! The failures list of plexus's own runs: every failed, timed-out or partial
//! invocation, and every one with error codes (those are the ones retried), for one run
//! or across all runs — one row each, without request or response bodies except the
//! first error's message.

use rusqlite::params;
use serde::Serialize;

use super::read::Store;
use super::StoreError;

/// Which failures to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailureFilter {
    /// One run (an exact id); every run when `None`.
    pub run_id: Option<String>,
    /// Read each row's first error message from its stored response (slower: the
    /// response is read after the request in the row).
    pub messages: bool,
    /// At most this many rows (the first written).
    pub limit: Option<usize>,
}

/// One failed, timed-out, partial or retried invocation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureRow {
    /// Run.
    pub run_id: String,
    /// Task.
    pub task_id: String,
    /// Invocation.
    pub invocation_id: String,
    /// Attempt (1 first).
    pub attempt: i64,
    /// Agent.
    pub agent: String,
    /// `failed`, `timeout`, `partial`, `success` (with errors) or `cancelled`.
    pub status: Option<String>,
    /// The first error code (e.g. `E005`).
    pub error_code: Option<String>,
    /// All error codes, comma-separated.
    pub error_codes: Option<String>,
    /// The first error's message (when asked for).
    pub message: Option<String>,
    /// The worst grade of its atoms (`D` worst).
    pub grade: Option<String>,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// Wall time, ms.
    pub execution_time_ms: Option<i64>,
    /// Whether a later attempt of the same task followed it.
    pub retried: bool,
}

const COLUMNS: &str = "i.run_id, i.task_id, i.invocation_id, i.attempt, i.agent, i.status, i.error_codes, i.started_at, i.execution_time_ms,
    (SELECT MAX(q.grade) FROM quality_records q WHERE q.invocation_id = i.invocation_id AND q.run_id = i.run_id),
    EXISTS (SELECT 1 FROM invocations j WHERE j.run_id = i.run_id AND j.task_id = i.task_id AND j.attempt > i.attempt)";
const MESSAGE: &str = "CASE WHEN json_valid(i.response_json) THEN json_extract(i.response_json, '$.errors[0].message') END";
const FAILED: &str = "(i.status IN ('failed', 'timeout', 'partial') OR i.error_codes IS NOT NULL)";

impl Store {
    /// The failures that `filter` selects, in the order the invocations were written.
    /// A run's rows are found through the `invocations_by_task` index; all runs' by one
    /// scan of the invocations table (no index on status: see the benchmark).
    pub fn failure_rows(&self, filter: &FailureFilter) -> Result<Vec<FailureRow>, StoreError> {
        let message = if filter.messages { MESSAGE } else { "NULL" };
        let limit = filter
            .limit
            .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let run_clause = if filter.run_id.is_some() {
            "i.run_id = ?1 AND"
        } else {
            "?1 IS NULL AND"
        };
        let sql = format!(
            "SELECT {COLUMNS}, {message} FROM invocations i
             WHERE {run_clause} {FAILED} ORDER BY i.rowid LIMIT ?2"
        );
        let mut st = self.conn().prepare_cached(&sql)?;
        let rows = st.query_map(params![filter.run_id, limit], |r| {
            let codes: Option<String> = r.get(6)?;
            Ok(FailureRow {
                run_id: r.get(0)?,
                task_id: r.get(1)?,
                invocation_id: r.get(2)?,
                attempt: r.get(3)?,
                agent: r.get(4)?,
                status: r.get(5)?,
                error_code: codes
                    .as_deref()
                    .and_then(|c| c.split(',').map(str::trim).find(|c| !c.is_empty()))
                    .map(str::to_string),
                error_codes: codes,
                started_at: r.get(7)?,
                execution_time_ms: r.get(8)?,
                grade: r.get(9)?,
                retried: r.get(10)?,
                message: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
