//! One attempt of a task read back from the log: the text it streamed, for the
//! per-attempt drill-down (the run's live buffer keeps only what fits its budget).

use rusqlite::{params, OptionalExtension};

use super::schema::{MAX_SEQ, RUN_BASE_SQL};
use super::{Store, StoreError};
use crate::model::event::EngineEvent;

/// Most bytes of one attempt's stream read back (a runaway answer is cut, and says so).
pub const MAX_STREAM_BYTES: usize = 8 << 20;

impl Store {
    /// The text invocation `invocation_id` streamed, in order, from its chunk events;
    /// `None` when no run has that invocation.
    pub fn invocation_stream(&self, invocation_id: &str) -> Result<Option<String>, StoreError> {
        let run: Option<String> = self
            .conn()
            .query_row(
                "SELECT run_id FROM invocations WHERE invocation_id = ?1",
                [invocation_id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(run) = run else { return Ok(None) };
        let sql = format!(
            "SELECT kind, payload FROM execution_logs
             WHERE event_id BETWEEN {RUN_BASE_SQL} + 1 AND {RUN_BASE_SQL} + ?2
               AND invocation_id = ?3 ORDER BY event_id"
        );
        let mut st = self.conn().prepare_cached(&sql)?;
        let mut rows = st.query(params![run, MAX_SEQ as i64, invocation_id])?;
        let mut text = String::new();
        while let Some(r) = rows.next()? {
            let kind: String = r.get(0)?;
            if kind != "chunk" {
                if kind == "invocation_finished" {
                    break;
                }
                continue;
            }
            let payload: String = r.get(1)?;
            if let Ok(EngineEvent::Chunk(c)) = EngineEvent::from_parts(&kind, &payload) {
                if text.len() + c.text.len() > MAX_STREAM_BYTES {
                    text.push_str("\n… cut: the rest of this attempt's stream is in the log\n");
                    break;
                }
                text.push_str(&c.text);
            }
        }
        Ok(Some(text))
    }
}
