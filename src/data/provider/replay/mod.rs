//! The `replay` provider: it answers each request with what a recorded run's provider
//! answered for the same task and attempt, read from that run's database, and never
//! calls a model.
//!
//! - The text is the recorded invocation's chunk events, streamed at their recorded
//!   times since the invocation started (or all at once when `instant`), split into as
//!   many pieces as the provider originally sent.
//! - The ending is the recorded one: the same answer (with the provider's usage and
//!   finish reason), the same transport error (transient with its Retry-After, timeout,
//!   malformed stream, permanent), or — for a call the engine cut at its timeout — a
//!   stall until the engine's timeout cuts it again (also when `instant`: the timeout
//!   is the engine's, and the request records it).
//! - No recording of the task and attempt (or only a cancelled one): the invocation
//!   fails with a permanent error (E008) whose message starts with [`NO_RECORDING`] and
//!   names the task, the attempt and the run. Nothing is made up.
//! - A prompt that differs from the recorded one (the user prompt as JSON, the system
//!   prompt by hash) is answered with the recording anyway — a changed plan is how a
//!   rerun asks "what if" — and logged; the rerun's report lists it per task
//!   ([`prompt_difference`]).
//!
//! Recordings are read when asked for (one scan of the log at start keeps each
//! invocation's event range), from a read-only connection.

pub mod recording;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use self::recording::{prompt_difference, PromptDifference};
use self::recording::{Ending, Recording};
use super::{ChunkSink, Provider, ProviderError, ProviderFuture, ProviderOutput};
use crate::base::loop_events::RecordedStep;
use crate::base::protocol::messages::ReactTurns;
use crate::base::protocol::AgentRequest;
use crate::data::store::{Store, StoreError};

/// How the error of an invocation the replay could not answer starts.
pub const NO_RECORDING: &str = "replay: no recording";

/// The run a rerun answers from (stored with the rerun's config, so a resumed rerun
/// replays the same recording).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySource {
    /// Database holding the recorded run.
    pub db: PathBuf,
    /// The recorded run.
    pub run_id: String,
    /// Stream each answer at once instead of with its recorded timing.
    #[serde(default)]
    pub instant: bool,
    /// The recording was made by the simulated provider (directly, or through reruns
    /// of such a recording): replay it as that provider ran.
    #[serde(default)]
    pub simulated: bool,
}

/// Answers requests from a recorded run.
pub struct ReplayProvider {
    source: ReplaySource,
    store: Mutex<Store>,
    ranges: HashMap<String, (u64, u64)>,
    simulated: bool,
}

impl ReplayProvider {
    /// Opens the recorded run read-only and indexes its invocations' events.
    pub fn open(source: &ReplaySource) -> Result<ReplayProvider, StoreError> {
        let store = Store::open(&source.db)?;
        let run = store.run(&source.run_id)?;
        let ranges = recording::index_events(&store, &run.run_id)?;
        Ok(ReplayProvider {
            source: ReplaySource {
                run_id: run.run_id,
                ..source.clone()
            },
            simulated: source.simulated,
            store: Mutex::new(store),
            ranges,
        })
    }

    /// The recording for `task` `attempt`, or why there is none (a message for the
    /// invocation's error).
    fn recording(&self, task: &str, attempt: u32) -> Result<Recording, String> {
        let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let run = &self.source.run_id;
        match recording::load(&store, run, task, attempt, &self.ranges) {
            Ok(Ok(Some(r))) => Ok(r),
            Ok(Ok(None)) => Err(format!(
                "{NO_RECORDING} of task {task} attempt {attempt} in run {run}; nothing was asked of any model"
            )),
            Ok(Err(why)) => Err(format!(
                "{NO_RECORDING} of task {task} attempt {attempt} in run {run}: {why}"
            )),
            Err(e) => Err(format!(
                "{NO_RECORDING} of task {task} attempt {attempt}: run {run} cannot be read: {e}"
            )),
        }
    }
}

impl Provider for ReplayProvider {
    fn name(&self) -> String {
        format!("replay:{}", self.source.run_id)
    }

    /// A recording of the simulated provider replays as the simulated provider ran: no
    /// provider output is stored, and retry jitter comes from the seed (as recorded).
    fn is_simulated(&self) -> bool {
        self.simulated
    }

    fn recorded_steps(&self, task_id: &str, attempt: u32) -> Option<Vec<RecordedStep>> {
        let rec = self.recording(task_id, attempt).ok()?;
        serde_json::from_value(rec.response.get("react_steps")?.clone()).ok()
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            if request.extra.get("purpose").and_then(|v| v.as_str()) == Some("summary") {
                return Err(ProviderError::Permanent(format!(
                    "{NO_RECORDING} of the summary call of task {}: summary calls are not recorded",
                    request.task_id
                )));
            }
            let rec = self
                .recording(&request.task_id, attempt)
                .map_err(ProviderError::Permanent)?;
            let ending = rec.ending().map_err(|why| {
                ProviderError::Permanent(format!(
                    "{NO_RECORDING} of task {} attempt {attempt} in run {}: {why}",
                    request.task_id, self.source.run_id
                ))
            })?;
            // A step of a tool-using loop: answered with the recorded step (the thoughts
            // at once; the final answer's text, then the recorded ending).
            if let Some(react) = request.react() {
                let steps: Vec<RecordedStep> = rec
                    .response
                    .get("react_steps")
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default();
                let k = step_number(&react);
                if let Some(step) = steps.get(k) {
                    // The step's own chunk events, with their recorded pace: the ones
                    // that cover its text in the invocation's stream.
                    let from: usize = steps[..k].iter().map(|s| s.text.len()).sum();
                    self.stream_span(&rec, from, from + step.text.len(), sink)
                        .await;
                    if !step.tool_calls.is_empty() {
                        return Ok(ProviderOutput {
                            finish_reason: Some("tool_use".into()),
                            tool_calls: step.tool_calls.clone(),
                            ..ProviderOutput::default()
                        });
                    }
                    return end_as_recorded(ending).await;
                }
            }
            warn_if_prompt_differs(&request, attempt, &rec);
            self.stream_all(&rec, matches!(ending, Ending::Stall), sink)
                .await;
            end_as_recorded(ending).await
        })
    }
}

impl ReplayProvider {
    /// Streams the recorded chunk events that start within bytes `from..to` of the
    /// invocation's text, at their recorded pace from the first of them (at once when
    /// `instant`).
    async fn stream_span(&self, rec: &Recording, from: usize, to: usize, sink: &mut dyn ChunkSink) {
        let mut pos = 0;
        let t0 = tokio::time::Instant::now();
        let mut first_at = None;
        for (at, pieces) in rec.pieces(false) {
            let len: usize = pieces.iter().map(String::len).sum();
            let inside = pos >= from && pos < to;
            pos += len;
            if !inside {
                continue;
            }
            let start = *first_at.get_or_insert(at);
            if !self.source.instant {
                tokio::time::sleep_until(t0 + Duration::from_millis(at.saturating_sub(start)))
                    .await;
            }
            for p in &pieces {
                sink.chunk(p);
            }
        }
    }

    /// Streams the whole recorded answer at its recorded times (at once when `instant`),
    /// then waits out the rest of the recorded call unless it `stall`s.
    async fn stream_all(&self, rec: &Recording, stall: bool, sink: &mut dyn ChunkSink) {
        let t0 = tokio::time::Instant::now();
        let instant = self.source.instant;
        for (at, pieces) in rec.pieces(stall) {
            if !instant {
                tokio::time::sleep_until(t0 + Duration::from_millis(at)).await;
            }
            for p in &pieces {
                sink.chunk(p);
            }
        }
        if !instant {
            if let (Some(end), false) = (rec.finished_after_ms, stall) {
                tokio::time::sleep_until(t0 + Duration::from_millis(end)).await;
            }
        }
    }
}

/// The number (from 0) of the loop's step `react` asks for (older turns may have been
/// summarised away: a step of 0 counts the assistant's turns).
fn step_number(react: &ReactTurns) -> usize {
    match react.step {
        0 => react
            .turns
            .iter()
            .filter(|t| t.role == crate::base::protocol::messages::MessageType::Assistant)
            .count(),
        n => n as usize - 1,
    }
}

/// Logs that the request's prompt differs from the recorded one (it is answered with
/// the recording all the same).
fn warn_if_prompt_differs(request: &AgentRequest, attempt: u32, rec: &Recording) {
    let user = serde_json::to_value(&request.user_prompt).unwrap_or_default();
    let system = crate::base::protocol::invocation::prompt_hash(&request.system_prompt);
    if let Some(d) = prompt_difference(&rec.request, &user, &system) {
        tracing::warn!(
            "replay: task {} attempt {attempt}: the prompt differs from {} at `{}`; answered with the recording",
            request.task_id,
            rec.invocation_id,
            d.part
        );
    }
}

/// The call ends as the recorded one did: its answer, its error, or a stall the engine's
/// timeout cuts.
async fn end_as_recorded(ending: Ending) -> Result<ProviderOutput, ProviderError> {
    match ending {
        Ending::Answer(out) => Ok(out),
        Ending::Fail(e) => Err(e),
        Ending::Stall => std::future::pending().await,
    }
}
