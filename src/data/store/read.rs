//! Read queries over the database (a connection of its own; WAL lets it read while the
//! writer thread writes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::schema::{run_events_sql, MAX_SEQ, PLAN_JSON, RUN_BASE_SQL};
use super::{open_read_only, StoreError};
use crate::model::event::{EngineEvent, EventDecodeError};

/// A read handle on the database.
pub struct Store {
    pub(super) conn: Connection,
    path: PathBuf,
}

/// One task row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    /// Task.
    pub task_id: String,
    /// Agent.
    pub agent: String,
    /// Status.
    pub status: String,
    /// Attempts.
    pub attempts: i64,
    /// Atoms.
    pub atoms: i64,
    /// Error code.
    pub error_code: Option<String>,
}

/// One invocation row (without request and response bodies).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvocationRow {
    /// Id.
    pub invocation_id: String,
    /// Task.
    pub task_id: String,
    /// Agent.
    pub agent: String,
    /// Attempt.
    pub attempt: i64,
    /// Status.
    pub status: Option<String>,
    /// Time.
    pub execution_time_ms: Option<i64>,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Output tokens.
    pub output_tokens: Option<i64>,
    /// Errors.
    pub error_codes: Option<String>,
}

/// One decoded event of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// Seq.
    pub seq: u64,
    /// Ms timestamp.
    pub ts: i64,
    /// Task.
    pub task_id: Option<String>,
    /// Invocation.
    pub invocation_id: Option<String>,
    /// Agent.
    pub agent: Option<String>,
    /// Event, or why it did not decode.
    pub event: Result<EngineEvent, EventDecodeError>,
}

impl Store {
    /// Opens the database at `path` read-only (see [`open_read_only`]: nothing is
    /// created, and the file must already have this build's schema).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Ok(Store {
            conn: open_read_only(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying connection, for queries not covered here.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// `PRAGMA integrity_check` result (`ok` when healthy).
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    /// The plan snapshot and config of a run: `(plan_source, plan_json, config_json)`.
    pub fn run_plan(&self, run_id: &str) -> Result<(String, String, String), StoreError> {
        self.conn
            .query_row(
                &format!(
                    "SELECT r.plan_source, {PLAN_JSON}, r.config_json FROM runs r WHERE r.run_id = ?1"
                ),
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?
            .ok_or_else(|| StoreError::NoSuchRun(run_id.into()))
    }

    /// Tasks of a run in plan order: the order of the `tasks` array of the plan the run
    /// stored (tasks it does not list, if any, last, in the order they were inserted).
    pub fn tasks(&self, run_id: &str) -> Result<Vec<TaskRow>, StoreError> {
        let plan_json: Option<String> = self
            .conn
            .query_row(
                &format!("SELECT {PLAN_JSON} FROM runs r WHERE r.run_id = ?1"),
                [run_id],
                |r| r.get(0),
            )
            .optional()?;
        let order = crate::model::plan::task_order(plan_json.as_deref().unwrap_or(""));
        let mut st = self.conn.prepare(
            "SELECT task_id, agent, status, attempts, atoms, error_code FROM tasks WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let rows = st.query_map([run_id], |r| {
            Ok(TaskRow {
                task_id: r.get(0)?,
                agent: r.get(1)?,
                status: r.get(2)?,
                attempts: r.get(3)?,
                atoms: r.get(4)?,
                error_code: r.get(5)?,
            })
        })?;
        let mut tasks: Vec<TaskRow> = rows.collect::<Result<_, _>>()?;
        // Stable: tasks the plan does not list keep their insertion order, at the end.
        tasks.sort_by_key(|t| order.get(&t.task_id).copied().unwrap_or(usize::MAX));
        Ok(tasks)
    }

    /// The output (`{atoms, summary}` of the final response) of each task that ended
    /// success or partial: `(task_id, output_json)`.
    pub fn task_outputs(&self, run_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT t.task_id, json_extract(i.response_json, '$.output') FROM tasks t
             JOIN invocations i ON i.run_id = t.run_id AND i.invocation_id = t.final_invocation_id
             WHERE t.run_id = ?1 AND t.status IN ('success', 'partial') AND i.response_json IS NOT NULL",
        )?;
        let rows = st.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Successful calls of the tasks of `run_id` that have not finished: (task, batch,
    /// invocation, attempt, output JSON, grades JSON), the last of each task and batch.
    #[allow(clippy::type_complexity)]
    pub fn unfinished_successes(
        &self,
        run_id: &str,
    ) -> Result<Vec<(String, Option<u32>, String, u32, String, String)>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT i.task_id, json_extract(i.response_json, '$.batch'), i.invocation_id, i.attempt,
                    json_extract(i.response_json, '$.output'),
                    json_extract(i.response_json, '$.quality_check.grades')
             FROM invocations i JOIN tasks t ON t.run_id = i.run_id AND t.task_id = i.task_id
             WHERE i.run_id = ?1 AND i.status = 'success'
               AND t.status IN ('pending', 'ready', 'running')
               AND i.response_json IS NOT NULL
             ORDER BY i.attempt",
        )?;
        let rows = st.query_map([run_id], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<i64>>(1)?
                    .and_then(|b| u32::try_from(b).ok()),
                r.get(2)?,
                r.get::<_, i64>(3)?.clamp(0, i64::from(u32::MAX)) as u32,
                r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                r.get::<_, Option<String>>(5)?.unwrap_or_default(),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The output of task `task_id` as [`Store::task_outputs`] gives it, if it ended
    /// success or partial.
    pub fn task_output(&self, run_id: &str, task_id: &str) -> Result<Option<String>, StoreError> {
        let mut st = self.conn.prepare_cached(
            "SELECT json_extract(i.response_json, '$.output') FROM tasks t
             JOIN invocations i ON i.run_id = t.run_id AND i.invocation_id = t.final_invocation_id
             WHERE t.run_id = ?1 AND t.task_id = ?2 AND t.status IN ('success', 'partial') AND i.response_json IS NOT NULL",
        )?;
        let mut rows = st.query(params![run_id, task_id])?;
        match rows.next()? {
            Some(r) => Ok(r.get(0)?),
            None => Ok(None),
        }
    }

    /// Invocations of a run in start order.
    pub fn invocations(&self, run_id: &str) -> Result<Vec<InvocationRow>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT invocation_id, task_id, agent, attempt, status, execution_time_ms, prompt_tokens, output_tokens, error_codes
             FROM invocations WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let rows = st.query_map([run_id], |r| {
            Ok(InvocationRow {
                invocation_id: r.get(0)?,
                task_id: r.get(1)?,
                agent: r.get(2)?,
                attempt: r.get(3)?,
                status: r.get(4)?,
                execution_time_ms: r.get(5)?,
                prompt_tokens: r.get(6)?,
                output_tokens: r.get(7)?,
                error_codes: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The whole stored request of an invocation, system prompt restored.
    pub fn invocation_request(
        &self,
        invocation_id: &str,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT request_json FROM invocations WHERE invocation_id = ?1",
                [invocation_id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(text) = text else { return Ok(None) };
        let mut v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| StoreError::Json {
                what: format!("request of {invocation_id}"),
                source: e,
            })?;
        if let Some(hash) = v
            .get("system_prompt_ref")
            .and_then(|h| h.as_str())
            .map(str::to_string)
        {
            let prompt: Option<String> = self
                .conn
                .query_row(
                    "SELECT text FROM prompts WHERE prompt_hash = ?1",
                    [&hash],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(obj) = v.as_object_mut() {
                obj.remove("system_prompt_ref");
                obj.insert(
                    "system_prompt".into(),
                    serde_json::Value::String(prompt.unwrap_or_default()),
                );
            }
        }
        Ok(Some(v))
    }

    /// The whole stored response of an invocation.
    pub fn invocation_response(
        &self,
        invocation_id: &str,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        let text: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT response_json FROM invocations WHERE invocation_id = ?1",
                [invocation_id],
                |r| r.get(0),
            )
            .optional()?;
        match text.flatten() {
            None => Ok(None),
            Some(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| StoreError::Json {
                    what: format!("response of {invocation_id}"),
                    source: e,
                }),
        }
    }

    /// Events of a run with `seq` in `from..=to`, in order.
    pub fn events(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<EventRow>, StoreError> {
        self.events_where(run_id, from, to, "", &[])
    }

    /// Events `from..=to` of a run of the given kinds only (the others are not
    /// decoded).
    pub fn events_of_kinds(
        &self,
        run_id: &str,
        kinds: &[&str],
        from: u64,
        to: u64,
    ) -> Result<Vec<EventRow>, StoreError> {
        let kinds = serde_json::to_string(kinds).map_err(|e| StoreError::Json {
            what: "event kinds".into(),
            source: e,
        })?;
        let filter = " AND kind IN (SELECT value FROM json_each(?4))";
        self.events_where(run_id, from, to, filter, &[&kinds])
    }

    /// Events `from..=to` of a run that name task `task` or no task at all (the run's
    /// own): what a task's text is folded from, without reading the other tasks'.
    pub fn task_events(
        &self,
        run_id: &str,
        task: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<EventRow>, StoreError> {
        let filter = " AND (task_id = ?4 OR task_id IS NULL)";
        self.events_where(run_id, from, to, filter, &[&task])
    }

    /// Events `from..=to` of a run that pass `filter` (SQL after the range, whose
    /// parameters from `?4` on are `extra`), in order.
    fn events_where(
        &self,
        run_id: &str,
        from: u64,
        to: u64,
        filter: &str,
        extra: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<EventRow>, StoreError> {
        let sql = format!(
            "SELECT seq, ts, kind, task_id, invocation_id, agent, payload FROM execution_logs
             WHERE event_id BETWEEN {RUN_BASE_SQL} + ?2 AND {RUN_BASE_SQL} + ?3{filter}
             ORDER BY event_id"
        );
        let (from, to) = (from.min(MAX_SEQ) as i64, to.min(MAX_SEQ) as i64);
        let mut args: Vec<&dyn rusqlite::ToSql> = vec![&run_id, &from, &to];
        args.extend_from_slice(extra);
        let mut st = self.conn.prepare_cached(&sql)?;
        let rows = st.query_map(rusqlite::params_from_iter(args), |r| {
            let kind: String = r.get(2)?;
            let payload: String = r.get(6)?;
            Ok(EventRow {
                seq: r.get::<_, i64>(0)? as u64,
                ts: r.get(1)?,
                task_id: r.get(3)?,
                invocation_id: r.get(4)?,
                agent: r.get(5)?,
                event: EngineEvent::from_parts(&kind, &payload),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Last `(seq, ts)` of a run's log, `(0, 0)` when empty.
    pub fn last_event(&self, run_id: &str) -> Result<(u64, i64), StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT seq, ts FROM execution_logs
                     WHERE {} ORDER BY event_id DESC LIMIT 1",
                    run_events_sql(RUN_BASE_SQL)
                ),
                [run_id],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
            )
            .optional()?
            .unwrap_or((0, 0)))
    }

    /// Every asset id in `knowledge_atoms` (as the gate holds them: hashed).
    pub fn known_asset_ids(&self) -> Result<crate::model::gate::known::AssetIds, StoreError> {
        asset_ids(
            &self.conn,
            "SELECT DISTINCT atom_id FROM knowledge_atoms",
            [],
        )
    }

    /// Tasks with an invocation that started (in the log) but never ended (no row).
    pub fn in_flight_tasks(&self, run_id: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self.conn.prepare(&format!(
            "SELECT DISTINCT e.task_id FROM execution_logs e
             WHERE {} AND e.kind = 'invocation_started'
               AND NOT EXISTS (SELECT 1 FROM invocations i WHERE i.run_id = e.run_id AND i.invocation_id = e.invocation_id)
             ORDER BY e.task_id",
            run_events_sql(RUN_BASE_SQL)
        ))?;
        let rows = st.query_map([run_id], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The retries each task scheduled since it last started afresh (a reset by a
    /// person's retry starts a task afresh), in log order.
    pub fn retry_history(
        &self,
        run_id: &str,
    ) -> Result<HashMap<String, Vec<crate::model::event::RetryScheduled>>, StoreError> {
        Ok(self
            .retry_history_timed(run_id)?
            .into_iter()
            .map(|(task, list)| (task, list.into_iter().map(|(_, r)| r).collect()))
            .collect())
    }

    /// [`Store::retry_history`] with each retry's time (ms since the Unix epoch): a retry
    /// is due at that time plus its delay.
    pub fn retry_history_timed(
        &self,
        run_id: &str,
    ) -> Result<HashMap<String, Vec<(i64, crate::model::event::RetryScheduled)>>, StoreError> {
        let mut st = self.conn.prepare(&format!(
            "SELECT seq, kind, task_id, payload, ts FROM execution_logs e
             WHERE {} AND e.kind IN ('retry_scheduled', 'task_reset') AND e.task_id IS NOT NULL
             ORDER BY e.event_id",
            run_events_sql(RUN_BASE_SQL)
        ))?;
        let rows = st.query_map([run_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })?;
        let mut out: HashMap<String, Vec<(i64, crate::model::event::RetryScheduled)>> =
            HashMap::new();
        for row in rows {
            let (seq, kind, task, payload, ts) = row?;
            match EngineEvent::from_parts(&kind, &payload) {
                Ok(EngineEvent::RetryScheduled(r)) => out.entry(task).or_default().push((ts, r)),
                Ok(_) => {
                    out.remove(&task);
                }
                Err(e) => tracing::warn!("event {seq} of {run_id} skipped: {e}"),
            }
        }
        Ok(out)
    }

    /// Grades of the atoms a run accepted.
    pub fn run_grades(
        &self,
        run_id: &str,
    ) -> Result<crate::base::protocol::GradeCounts, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT grade, COUNT(*) FROM knowledge_atoms WHERE run_id = ?1 GROUP BY grade",
        )?;
        let mut g = crate::base::protocol::GradeCounts::default();
        let rows = st.query_map([run_id], |r| {
            Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (grade, n) = row?;
            match grade
                .as_deref()
                .and_then(crate::base::protocol::Grade::parse)
            {
                Some(crate::base::protocol::Grade::A) => g.a += n as u32,
                Some(crate::base::protocol::Grade::B) => g.b += n as u32,
                Some(crate::base::protocol::Grade::C) => g.c += n as u32,
                Some(crate::base::protocol::Grade::D) => g.d += n as u32,
                None => {}
            }
        }
        Ok(g)
    }

    /// Invocation counts per task in a run.
    pub fn invocation_counts(&self, run_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT task_id, COUNT(*) FROM invocations WHERE run_id = ?1 GROUP BY task_id ORDER BY task_id",
        )?;
        let rows = st.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The asset ids the first column of `sql`'s rows names, hashed as they are read (no
/// set of their text is ever held).
pub fn asset_ids<P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
) -> Result<crate::model::gate::known::AssetIds, StoreError> {
    let mut ids = crate::model::gate::known::AssetIds::default();
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query(params)?;
    while let Some(r) = rows.next()? {
        if let rusqlite::types::ValueRef::Text(t) = r.get_ref(0)? {
            ids.insert(&String::from_utf8_lossy(t));
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_two_runs_started_in_the_same_second_latest_is_the_one_stored_last() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("t.db");
        let conn = crate::data::store::open_connection(&db).expect("create");
        for id in ["R20260101-000000-ffff", "R20260101-000000-0000"] {
            conn.execute(
                "INSERT INTO runs (run_id, plan_id, plan_source, plan_json, provider, config_json, status, created_at, task_count)
                 VALUES (?1, 'P', 'f', '{}', 'simulated', '{}', 'succeeded', '2026-01-01T00:00:00Z', 0)",
                [id],
            )
            .expect("run");
        }
        drop(conn);
        let store = Store::open(&db).expect("store");
        assert_eq!(
            store.run("latest").expect("latest").run_id,
            "R20260101-000000-0000"
        );
    }
}
