//! Answering a debate's model calls from a recorded session: each turn's call gets the
//! text the recording's call of the same turn and try received (or its timeout, or its
//! provider error), so a rerun of an unchanged session retraces it exactly.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::base::protocol::debate_turn::turn_task_id;
use crate::base::protocol::AgentRequest;
use crate::data::provider::{ChunkSink, Provider, ProviderError, ProviderFuture, ProviderOutput};
use crate::data::store::schema::MAX_SEQ;
use crate::data::store::{Store, StoreError};
use crate::model::event::debate::{DebateReply, DebateStarted};
use crate::model::event::{EngineEvent, Envelope};

/// The events of a run, decoded (events that do not decode are skipped and logged).
pub fn load_events(store: &Store, run_id: &str) -> Result<Vec<Envelope>, StoreError> {
    crate::data::replay::feed::page(store, &Arc::from(run_id), 1, MAX_SEQ)
}

/// A recorded session's replies.
pub struct DebateReplayProvider {
    replies: HashMap<(String, u32), DebateReply>,
    instant: bool,
    source_run: String,
}

impl DebateReplayProvider {
    /// The replies of `events` (a recorded session's log); `instant` answers at once
    /// instead of taking each call's recorded time.
    pub fn new(events: &[Envelope], source_run: &str, instant: bool) -> DebateReplayProvider {
        let replies = events
            .iter()
            .filter_map(|e| match &e.event {
                EngineEvent::DebateReply(r) => Some((
                    (turn_task_id(r.round, &r.agent, r.closing), r.attempt),
                    r.clone(),
                )),
                _ => None,
            })
            .collect();
        DebateReplayProvider {
            replies,
            instant,
            source_run: source_run.to_string(),
        }
    }

    /// The settings the recorded session started with.
    pub fn started(events: &[Envelope]) -> Option<DebateStarted> {
        events.iter().find_map(|e| match &e.event {
            EngineEvent::DebateStarted(d) => Some(d.clone()),
            _ => None,
        })
    }
}

impl Provider for DebateReplayProvider {
    fn name(&self) -> String {
        format!("replay:{}", self.source_run)
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let Some(r) = self.replies.get(&(request.task_id.clone(), attempt)) else {
                return Err(ProviderError::Permanent(format!(
                    "{}: {} attempt {attempt} has no recorded answer in {}",
                    crate::data::provider::replay::NO_RECORDING,
                    request.task_id,
                    self.source_run
                )));
            };
            if r.timed_out {
                sink.chunk(&r.text);
                if !self.instant {
                    // The session's own timer ends the call, as it did when recorded.
                    std::future::pending::<()>().await;
                }
                return Err(ProviderError::Timeout("the recorded call timed out".into()));
            }
            if !self.instant {
                // Just inside the agent's time, so a call that answered still answers.
                let limit = (request.constraints.timeout_seconds * 1000.0) as u64;
                let wait = r.duration_ms.min(limit.saturating_sub(50));
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            sink.chunk(&r.text);
            match &r.provider_error {
                Some(e) => Err(e
                    .to_error()
                    .unwrap_or_else(|| ProviderError::Permanent(e.message.clone()))),
                None => Ok(ProviderOutput::default()),
            }
        })
    }
}
