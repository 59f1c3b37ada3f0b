//! One recorded invocation, read from the source database when a request asks for it:
//! the stored request (to compare prompts) and response (how the call ended), and the
//! text it streamed as the log's chunk events, each at its time since the invocation
//! started.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

use crate::data::provider::{ProviderError, ProviderOutput, StoredProviderError};
use crate::data::store::schema::{run_events_sql, MAX_SEQ, RUN_BASE_SQL};
use crate::data::store::{Store, StoreError};

/// How the engine words a call it cut at the timeout (see `engine::attempt`).
const ENGINE_TIMEOUT: &str = "no complete answer within ";
/// How the engine ends the message of a timeout: `; N bytes had streamed`.
const STREAMED_SUFFIX: &str = " bytes had streamed";

/// Where each invocation's events lie in the source log: `invocation id → (first seq,
/// last seq)`, from its `invocation_started` to its `invocation_finished` (to the end
/// of the log when it never finished). One scan of the log at start keeps only these
/// two numbers per invocation.
pub(super) fn index_events(
    store: &Store,
    run_id: &str,
) -> Result<HashMap<String, (u64, u64)>, StoreError> {
    let mut st = store.conn().prepare(&format!(
        "SELECT seq, kind, invocation_id FROM execution_logs
         WHERE {} AND kind IN ('invocation_started', 'invocation_finished')
           AND invocation_id IS NOT NULL",
        run_events_sql(RUN_BASE_SQL)
    ))?;
    let rows = st.query_map([run_id], |r| {
        Ok((
            r.get::<_, i64>(0)? as u64,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut out: HashMap<String, (u64, u64)> = HashMap::new();
    for row in rows {
        let (seq, kind, inv) = row?;
        let e = out.entry(inv).or_insert((seq, MAX_SEQ));
        if kind == "invocation_started" {
            e.0 = e.0.min(seq);
        } else {
            e.1 = seq;
        }
    }
    Ok(out)
}

/// How a recorded call ended, as the replay gives it back.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The text streamed, then the call returned this.
    Answer(ProviderOutput),
    /// The text streamed, then the provider failed with this error.
    Fail(ProviderError),
    /// The text streamed, then nothing more until the engine's timeout cut the call.
    Stall,
}

/// One recorded invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Its id in the source run.
    pub invocation_id: String,
    /// The stored request (system prompt by reference).
    pub request: Value,
    /// The stored response.
    pub response: Value,
    /// Chunk events in order: ms since the invocation started, and their text.
    pub chunks: Vec<(u64, String)>,
    /// Chunks the provider streamed (the log may group several into one event).
    pub chunk_count: Option<u64>,
    /// Ms from the invocation's start to its end, when the log has both.
    pub finished_after_ms: Option<u64>,
}

/// The first completed recording of `task` `attempt` in `run_id`: `Ok(None)` when there
/// is none, `Err(reason)` when there are only cancelled ones.
pub(super) fn load(
    store: &Store,
    run_id: &str,
    task: &str,
    attempt: u32,
    ranges: &HashMap<String, (u64, u64)>,
) -> Result<Result<Option<Recording>, String>, StoreError> {
    // The task's attempts that ended with an answer or an error, in order: a call the
    // recorded run was stopped in (`cancelled`) or lost to a crash (`lost`) was made
    // again under the next number, and a rerun, which is not stopped, counts it once.
    let row: Option<(String, String, String)> = store
        .conn()
        .query_row(
            "SELECT invocation_id, request_json, response_json FROM invocations
             WHERE run_id = ?1 AND task_id = ?2
               AND response_json IS NOT NULL
               AND COALESCE(status, '') NOT IN ('cancelled', 'lost')
             ORDER BY attempt, rowid LIMIT 1 OFFSET ?3",
            params![run_id, task, i64::from(attempt.max(1)) - 1],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((invocation_id, request, response)) = row else {
        let stopped: i64 = store.conn().query_row(
            "SELECT COUNT(*) FROM invocations WHERE run_id = ?1 AND task_id = ?2
               AND COALESCE(status, '') IN ('cancelled', 'lost')",
            params![run_id, task],
            |r| r.get(0),
        )?;
        return Ok(if stopped > 0 {
            Err(
                "the recorded run was stopped (or crashed) in that call and did not make it again"
                    .into(),
            )
        } else {
            Ok(None)
        });
    };
    let json = |text: &str, what: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| StoreError::Json {
            what: format!("{what} of {invocation_id}"),
            source: e,
        })
    };
    let mut rec = Recording {
        request: json(&request, "request")?,
        response: json(&response, "response")?,
        invocation_id: invocation_id.clone(),
        chunks: Vec::new(),
        chunk_count: None,
        finished_after_ms: None,
    };
    let (from, to) = ranges.get(&invocation_id).copied().unwrap_or((1, MAX_SEQ));
    let mut st = store.conn().prepare_cached(&format!(
        "SELECT ts, kind, payload FROM execution_logs
         WHERE event_id BETWEEN {RUN_BASE_SQL} + ?2 AND {RUN_BASE_SQL} + ?3
           AND invocation_id = ?4 ORDER BY event_id"
    ))?;
    let rows = st.query_map(
        params![run_id, from as i64, to as i64, invocation_id],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        },
    )?;
    let mut started: Option<i64> = None;
    for row in rows {
        let (ts, kind, payload) = row?;
        let since = |ts: i64| (ts - started.unwrap_or(ts)).max(0) as u64;
        match kind.as_str() {
            "invocation_started" => started = Some(ts),
            "chunk" => {
                let c: crate::model::event::Chunk =
                    serde_json::from_str(&payload).map_err(|e| StoreError::Json {
                        what: format!("a chunk of {invocation_id}"),
                        source: e,
                    })?;
                rec.chunks.push((since(ts), c.text));
            }
            "invocation_finished" => {
                rec.finished_after_ms = Some(since(ts));
                rec.chunk_count = serde_json::from_str::<Value>(&payload)
                    .ok()
                    .and_then(|v| v.get("chunks").and_then(Value::as_u64));
            }
            _ => {}
        }
    }
    Ok(Ok(Some(rec)))
}

impl Recording {
    /// How the recorded call ended. The stored response says which transport error it
    /// was (`provider_error`); a response stored before it did is read from its error
    /// code (E001 a transient error, E004 a timeout, E008 a permanent error; anything
    /// else was an answer whose text the engine judged). A call the engine cut at its
    /// timeout stalls again. `Err` when the response holds no usable ending.
    pub fn ending(&self) -> Result<Ending, String> {
        let r = &self.response;
        if r.get("cancelled").and_then(Value::as_bool) == Some(true) {
            return Err("the recorded call was cancelled: there is no answer to replay".into());
        }
        if let Some(pe) = r.get("provider_error") {
            let stored: StoredProviderError = serde_json::from_value(pe.clone())
                .map_err(|e| format!("the recorded provider error does not decode: {e}"))?;
            return stored.to_error().map(Ending::Fail).ok_or_else(|| {
                format!("the recorded provider error `{}` is unknown", stored.kind)
            });
        }
        let first = r.get("errors").and_then(|e| e.get(0));
        let code = first
            .and_then(|e| e.get("error_code"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let message = first
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        Ok(match code {
            "E004" if message.starts_with(ENGINE_TIMEOUT) => Ending::Stall,
            "E004" => Ending::Fail(ProviderError::Timeout(strip_streamed(&message))),
            "E008" => Ending::Fail(ProviderError::Permanent(message)),
            "E001" => Ending::Fail(ProviderError::Transient {
                message,
                retry_after_ms: None,
            }),
            _ => Ending::Answer(
                r.get("provider")
                    .and_then(|p| serde_json::from_value(p.clone()).ok())
                    .unwrap_or_default(),
            ),
        })
    }

    /// The text to stream: per chunk event, its time (ms since the start) and its text
    /// in as many pieces as the provider sent (the log groups fast chunks into one
    /// event; the pieces make the new invocation count the same chunks).
    ///
    /// A chunk event is logged when the engine flushes it, which for the last one of a
    /// call the engine cut at its timeout (`stall`) is the moment of the cut: that one
    /// is sent with the event before it, so that the text is all there before the
    /// engine's timeout cuts the call again.
    pub fn pieces(&self, stall: bool) -> Vec<(u64, Vec<String>)> {
        let events = self.chunks.len();
        let total = self.chunk_count.unwrap_or(0).max(events as u64);
        let mut out: Vec<(u64, Vec<String>)> = self
            .chunks
            .iter()
            .enumerate()
            .map(|(i, (at, text))| {
                let base = total / events.max(1) as u64;
                let extra = u64::from((i as u64) < total % events.max(1) as u64);
                (*at, split_in(text, (base + extra).max(1) as usize))
            })
            .collect();
        if stall {
            let before = events.checked_sub(2).map(|i| out[i].0).unwrap_or(0);
            if let Some(last) = out.last_mut() {
                last.0 = last.0.min(before);
            }
        }
        out
    }
}

/// `text` in `n` pieces of about equal length on char boundaries (the last ones empty
/// when it has fewer than `n` chars).
fn split_in(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(n).max(1);
    (0..n)
        .map(|k| chars.iter().skip(k * size).take(size).collect::<String>())
        .collect()
}

/// A provider's own timeout message without the `; N bytes had streamed` the engine
/// added to it.
fn strip_streamed(message: &str) -> String {
    match message.rsplit_once("; ") {
        Some((head, tail)) if tail.ends_with(STREAMED_SUFFIX) => head.to_string(),
        _ => message.to_string(),
    }
}

/// How a request's prompt differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptDifference {
    /// `system_prompt` (compared by hash), or where in the user prompt
    /// (`user_prompt.instruction`, `user_prompt.context.inputs[0].data`).
    pub part: String,
    /// What the recording has there.
    pub recorded: String,
    /// What the request has there.
    pub now: String,
}

/// How a request (its rendered user prompt and its system prompt's hash) differs from
/// a stored request (`request_json` of an invocation), or `None`.
pub fn prompt_difference(
    recorded_request: &Value,
    user_prompt: &Value,
    system_prompt_ref: &str,
) -> Option<PromptDifference> {
    let recorded_ref = recorded_request
        .get("system_prompt_ref")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if recorded_ref != system_prompt_ref {
        return Some(PromptDifference {
            part: "system_prompt".into(),
            recorded: format!("hash {recorded_ref}"),
            now: format!("hash {system_prompt_ref}"),
        });
    }
    let recorded_user = recorded_request.get("user_prompt").unwrap_or(&Value::Null);
    crate::base::json_diff::first_difference(recorded_user, user_prompt).map(|d| {
        let (recorded, now) = d.shown();
        PromptDifference {
            part: if d.path.is_empty() {
                "user_prompt".into()
            } else {
                format!("user_prompt.{}", d.path)
            },
            recorded,
            now,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(response: Value, chunks: &[(u64, &str)], count: Option<u64>) -> Recording {
        Recording {
            invocation_id: "INV_1".into(),
            request: json!({}),
            response,
            chunks: chunks.iter().map(|(t, s)| (*t, s.to_string())).collect(),
            chunk_count: count,
            finished_after_ms: None,
        }
    }

    #[test]
    fn endings_follow_the_stored_error() {
        let stored = json!({"errors": [{"error_code": "E001"}],
            "provider_error": {"kind": "transient", "message": "HTTP 429", "retry_after_ms": 700}});
        assert_eq!(
            rec(stored, &[], None).ending(),
            Ok(Ending::Fail(ProviderError::Transient {
                message: "HTTP 429".into(),
                retry_after_ms: Some(700)
            }))
        );
        let cut = json!({"errors": [{"error_code": "E004",
            "message": "no complete answer within 1.2s; 40 bytes had streamed"}]});
        assert_eq!(rec(cut, &[], None).ending(), Ok(Ending::Stall));
        let old = json!({"errors": [{"error_code": "E004",
            "message": "local: no data for 3.0s (idle timeout) after 9 bytes; 5 bytes had streamed"}]});
        assert_eq!(
            rec(old, &[], None).ending(),
            Ok(Ending::Fail(ProviderError::Timeout(
                "local: no data for 3.0s (idle timeout) after 9 bytes".into()
            )))
        );
        let parse = json!({"errors": [{"error_code": "E002", "message": "bad JSON"}]});
        assert_eq!(
            rec(parse, &[], None).ending(),
            Ok(Ending::Answer(ProviderOutput::default()))
        );
        assert!(rec(json!({"cancelled": true}), &[], None).ending().is_err());
    }

    #[test]
    fn pieces_keep_the_text_and_the_chunk_count() {
        let r = rec(json!({}), &[(5, "abcdef"), (30, "gh")], Some(5));
        let p = r.pieces(false);
        assert_eq!(p.iter().map(|(_, v)| v.len()).sum::<usize>(), 5);
        assert_eq!(p[0].0, 5);
        let text: String = p.iter().flat_map(|(_, v)| v.iter().cloned()).collect();
        assert_eq!(text, "abcdefgh");
        let one = rec(json!({}), &[(0, "去噪")], None).pieces(false);
        assert_eq!(one, vec![(0, vec!["去噪".to_string()])]);
        let cut = rec(json!({}), &[(4, "ab"), (9, "cd"), (900, "e")], None).pieces(true);
        assert_eq!(cut.iter().map(|p| p.0).collect::<Vec<_>>(), vec![4, 9, 9]);
    }

    #[test]
    fn prompt_differences_name_the_part() {
        let recorded =
            json!({"system_prompt_ref": "aa", "user_prompt": {"instruction": "grade B"}});
        assert_eq!(
            prompt_difference(&recorded, &json!({"instruction": "grade B"}), "aa"),
            None
        );
        let d = prompt_difference(&recorded, &json!({"instruction": "grade A"}), "aa")
            .expect("differs");
        assert_eq!(
            (d.part.as_str(), d.recorded.as_str(), d.now.as_str()),
            ("user_prompt.instruction", "grade B", "grade A")
        );
        let d = prompt_difference(&recorded, &json!({"instruction": "grade B"}), "bb")
            .expect("differs");
        assert_eq!(d.part, "system_prompt");
    }
}
