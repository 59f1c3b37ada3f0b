//! Calls a run's log shows started and never ended: in flight when the process running
//! them died. A resume closes each (see the engine's resume), so they are read once, with
//! what the log knows of them: the prompt counted at the start and the output streamed.

use std::collections::HashMap;

use rusqlite::params;

use super::schema::{run_events_sql, RUN_BASE_SQL};
use super::{Store, StoreError};
use crate::model::event::{EngineEvent, InvocationStarted};

/// A call of a run that started and never ended.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenCall {
    /// Its id.
    pub invocation_id: String,
    /// Its task.
    pub task_id: String,
    /// Its agent, as the log names it.
    pub agent: Option<String>,
    /// Its attempt number.
    pub attempt: u32,
    /// Tokens of its prompt, counted when it started.
    pub prompt_tokens: u64,
    /// Seq of its `invocation_started` event.
    pub started_seq: u64,
    /// When it started, ms since the Unix epoch.
    pub started_ts: i64,
    /// Its last event in the log, ms since the Unix epoch.
    pub last_ts: i64,
    /// The text it streamed that reached the log.
    pub text: String,
    /// Its chunk events.
    pub chunks: u64,
}

impl Store {
    /// The calls of `run_id` that started and never ended (no stored invocation, no
    /// `invocation_finished` event), in the order they started. One read of the started
    /// events without a row, then one read of the log from the oldest of them on.
    pub fn open_calls(&self, run_id: &str) -> Result<Vec<OpenCall>, StoreError> {
        let mut open: Vec<OpenCall> = Vec::new();
        {
            let mut st = self.conn().prepare(&format!(
                "SELECT e.seq, e.ts, e.task_id, e.invocation_id, e.agent, e.payload
                   FROM execution_logs e
                  WHERE {} AND e.kind = 'invocation_started' AND e.invocation_id IS NOT NULL
                    AND e.task_id IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM invocations i
                                     WHERE i.run_id = e.run_id AND i.invocation_id = e.invocation_id)
                  ORDER BY e.event_id",
                run_events_sql(RUN_BASE_SQL)
            ))?;
            let mut rows = st.query([run_id])?;
            let mut seen = std::collections::HashSet::new();
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                // An id started twice (a log written before ids came from the database)
                // is closed once.
                let id: String = r.get(3)?;
                if !seen.insert(id) {
                    continue;
                }
                let payload: String = r.get(5)?;
                let started: Option<InvocationStarted> =
                    match EngineEvent::from_parts("invocation_started", &payload) {
                        Ok(EngineEvent::InvocationStarted(s)) => Some(s),
                        Ok(_) | Err(_) => {
                            tracing::warn!(
                                "event {seq} of {run_id}: unreadable invocation_started"
                            );
                            None
                        }
                    };
                let ts: i64 = r.get(1)?;
                open.push(OpenCall {
                    started_seq: u64::try_from(seq).unwrap_or(0),
                    started_ts: ts,
                    last_ts: ts,
                    task_id: r.get(2)?,
                    invocation_id: r.get(3)?,
                    agent: r.get(4)?,
                    attempt: started.as_ref().map_or(0, |s| s.attempt),
                    prompt_tokens: started.as_ref().map_or(0, |s| s.prompt_tokens),
                    text: String::new(),
                    chunks: 0,
                });
            }
        }
        let Some(from) = open.iter().map(|c| c.started_seq).min() else {
            return Ok(open);
        };
        let index: HashMap<String, usize> = open
            .iter()
            .enumerate()
            .map(|(i, c)| (c.invocation_id.clone(), i))
            .collect();
        let mut finished = vec![false; open.len()];
        let mut st = self.conn().prepare(&format!(
            "SELECT seq, ts, kind, invocation_id, payload FROM execution_logs
              WHERE event_id BETWEEN {RUN_BASE_SQL} + ?2 AND ({RUN_BASE_SQL}) | {}
                AND kind IN ('chunk', 'invocation_finished', 'invocation_lost')
                AND invocation_id IS NOT NULL
              ORDER BY event_id",
            super::schema::MAX_SEQ
        ))?;
        let mut rows = st.query(params![run_id, i64::try_from(from).unwrap_or(i64::MAX)])?;
        while let Some(r) = rows.next()? {
            let id: String = r.get(3)?;
            let Some(&i) = index.get(&id) else { continue };
            let kind: String = r.get(2)?;
            let ts: i64 = r.get(1)?;
            if kind != "chunk" {
                finished[i] = true;
                continue;
            }
            let payload: String = r.get(4)?;
            if let Ok(EngineEvent::Chunk(c)) = EngineEvent::from_parts("chunk", &payload) {
                let call = &mut open[i];
                call.text.push_str(&c.text);
                call.chunks += 1;
                call.last_ts = call.last_ts.max(ts);
            }
        }
        Ok(open
            .into_iter()
            .zip(finished)
            .filter(|(_, f)| !f)
            .map(|(c, _)| c)
            .collect())
    }
}
