//! The built-in simulated provider: deterministic for a seed, protocol-conformant
//! responses built from the request, streamed in chunks with configurable latency, and
//! configurable faults so that every status and error path can be seen offline.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::sim_fault::{Fault, FaultRates};
use super::sim_react::{next_step, SimStep};
use super::{ChunkSink, Provider, ProviderError, ProviderFuture, ProviderOutput};
use crate::base::protocol::AgentRequest;

const PAPERS: [&str; 3] = [
    include_str!("../../../fixtures/papers/diffusion_planner.md"),
    include_str!("../../../fixtures/papers/transformer_zh.md"),
    include_str!("../../../fixtures/papers/avp_scenarios.md"),
];

/// Configuration of the simulated provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimConfig {
    /// Seed: the same seed gives the same answers.
    pub seed: u64,
    /// Delay before the first chunk, ms.
    pub first_chunk_ms: u64,
    /// Delay between chunks, ms.
    pub chunk_ms: u64,
    /// Fewest chunks per answer.
    pub min_chunks: usize,
    /// Random fault rates.
    pub faults: FaultRates,
    /// Scripted faults per task id, one per attempt (attempt 1 first); overrides rates.
    pub script: HashMap<String, Vec<Fault>>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 7,
            first_chunk_ms: 120,
            chunk_ms: 25,
            min_chunks: 20,
            faults: FaultRates::default(),
            script: HashMap::new(),
        }
    }
}

/// The simulated provider.
pub struct SimulatedProvider {
    config: SimConfig,
    sentences: Vec<&'static str>,
}

impl SimulatedProvider {
    /// Builds the provider.
    pub fn new(config: SimConfig) -> SimulatedProvider {
        let sentences = PAPERS
            .iter()
            .flat_map(|p| p.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        SimulatedProvider { config, sentences }
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    fn rng_for(&self, req: &AgentRequest, attempt: u32) -> fastrand::Rng {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.config.seed.hash(&mut h);
        req.task_id.hash(&mut h);
        attempt.hash(&mut h);
        fastrand::Rng::with_seed(h.finish())
    }

    /// The fault for this attempt: the script if it has one, else drawn from the rates.
    pub fn fault_for(&self, task_id: &str, attempt: u32, rng: &mut fastrand::Rng) -> Fault {
        if let Some(script) = self.config.script.get(task_id) {
            return script
                .get(attempt.saturating_sub(1) as usize)
                .copied()
                .unwrap_or(Fault::None);
        }
        let f = &self.config.faults;
        let draw = rng.f64();
        let table = [
            (f.malformed_json, Fault::MalformedJson),
            (f.missing_required, Fault::MissingRequired),
            (f.low_grade, Fault::LowGrade),
            (f.timeout, Fault::Timeout),
            (f.transient, Fault::Transient),
            (f.source_not_found, Fault::SourceNotFound),
            (f.hallucination, Fault::Hallucination),
            (f.invalid_shape, Fault::InvalidShape),
        ];
        let mut acc = 0.0;
        for (p, fault) in table {
            acc += p;
            if draw < acc {
                return fault;
            }
        }
        Fault::None
    }

    /// Builds the answer text for a request under a fault.
    pub fn answer(&self, req: &AgentRequest, fault: Fault, rng: &mut fastrand::Rng) -> String {
        if let Some(turn) = crate::base::protocol::debate_turn::DebateTurn::of(req) {
            return super::sim_debate::answer(&turn);
        }
        super::sim_atoms::answer(&self.sentences, req, fault, rng)
    }
}

/// Splits `text` into at least `min_chunks` pieces on char boundaries.
pub fn split_chunks(text: &str, min_chunks: usize) -> Vec<&str> {
    let n = min_chunks.max(1).max(text.len() / 96);
    let size = text.len().div_ceil(n).max(1);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

impl Provider for SimulatedProvider {
    fn name(&self) -> String {
        "simulated".to_string()
    }

    fn is_simulated(&self) -> bool {
        true
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            // A summary request (abstractive summaries of seed 000 §4.2): the simulated
            // model answers with a faithful extract of the data within max_tokens.
            if request.extra.get("purpose").and_then(|v| v.as_str()) == Some("summary") {
                self.stream_summary(&request, sink).await;
                return Ok(ProviderOutput::default());
            }
            // A step of a tool-using loop: a thought, then one tool call (faults are
            // kept for the final answer).
            if let Some(SimStep::Act { thought, call }) = request.react().map(|r| next_step(&r)) {
                self.stream_short(&thought, sink).await;
                return Ok(ProviderOutput {
                    finish_reason: Some("tool_use".into()),
                    tool_calls: vec![call],
                    ..ProviderOutput::default()
                });
            }
            // A debate turn or an eval's judge: its answer streamed, no faults.
            if let Some(text) = special_answer(&request) {
                self.stream_short(&text, sink).await;
                return Ok(ProviderOutput::default());
            }
            let mut rng = self.rng_for(&request, attempt);
            let fault = self.fault_for(&request.task_id, attempt, &mut rng);
            self.first_chunk_wait().await;
            if let Some(error) = fault_error(fault, &request) {
                return Err(error);
            }
            let text = self.answer(&request, fault, &mut rng);
            self.stream_answer(&text, fault, sink).await;
            Ok(ProviderOutput::default())
        })
    }
}

impl SimulatedProvider {
    /// Waits the configured delay before the first chunk.
    async fn first_chunk_wait(&self) {
        if self.config.first_chunk_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.config.first_chunk_ms)).await;
        }
    }

    /// Waits the configured delay between two chunks.
    async fn chunk_wait(&self) {
        if self.config.chunk_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.config.chunk_ms)).await;
        }
    }

    /// Streams a summary request's answer: the key points of its inputs within its
    /// max_tokens, eight words a chunk (each after the chunk delay).
    async fn stream_summary(&self, request: &AgentRequest, sink: &mut dyn ChunkSink) {
        let data = request
            .user_prompt
            .context
            .extra
            .get("inputs")
            .map(crate::base::text::summary::text_of)
            .unwrap_or_default();
        let counter = crate::base::tokens::TokenCounter::default();
        let text = crate::base::text::summary::key_points(
            &data,
            u64::from(request.constraints.max_tokens),
            &counter,
        );
        let words: Vec<&str> = text.split_inclusive(' ').collect();
        for part in words.chunks(8) {
            self.chunk_wait().await;
            sink.chunk(&part.concat());
        }
    }

    /// Streams a short text (a thought, a debate turn, a verdict) in at least four
    /// chunks, after the first-chunk delay.
    async fn stream_short(&self, text: &str, sink: &mut dyn ChunkSink) {
        self.first_chunk_wait().await;
        for (i, c) in split_chunks(text, 4).iter().enumerate() {
            if i > 0 {
                self.chunk_wait().await;
            }
            sink.chunk(c);
        }
    }

    /// Streams a task's answer in at least `min_chunks` chunks; under the timeout fault
    /// it stalls half-way, until the engine's timeout ends the call.
    async fn stream_answer(&self, text: &str, fault: Fault, sink: &mut dyn ChunkSink) {
        let chunks = split_chunks(text, self.config.min_chunks);
        let stall_at = if fault == Fault::Timeout {
            chunks.len() / 2
        } else {
            usize::MAX
        };
        for (i, c) in chunks.iter().enumerate() {
            if i == stall_at {
                // Stall until the engine's timeout ends the call.
                std::future::pending::<()>().await;
            }
            if i > 0 {
                self.chunk_wait().await;
            }
            sink.chunk(c);
        }
    }
}

/// The answer of a judge's request or a debate turn, streamed without faults; none for
/// a task's request.
fn special_answer(request: &Arc<AgentRequest>) -> Option<String> {
    if super::sim_judge::is_judge_request(request) {
        Some(super::sim_judge::simulated_answer(request))
    } else {
        crate::base::protocol::debate_turn::DebateTurn::of(request)
            .map(|turn| super::sim_debate::answer(&turn))
    }
}

/// The error a fault ends the call with before any text (transient, unreachable
/// source, system error); none for the faults that shape the answer.
fn fault_error(fault: Fault, request: &AgentRequest) -> Option<ProviderError> {
    match fault {
        Fault::Transient => Some(ProviderError::Transient {
            message: "HTTP 503 Service Unavailable (simulated)".into(),
            retry_after_ms: None,
        }),
        Fault::SourceNotFound => {
            let what = request
                .user_prompt
                .context
                .code_info
                .as_ref()
                .and_then(|c| c.repo_url.clone())
                .unwrap_or_else(|| "the paper PDF".into());
            Some(ProviderError::SourceNotFound(format!(
                "cannot reach {what} (simulated)"
            )))
        }
        Fault::SystemError => Some(ProviderError::Permanent(
            "internal provider failure (simulated)".into(),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_text_on_char_boundaries() {
        let text = "去噪采样公式 x_t 的物理直觉".repeat(20);
        let chunks = split_chunks(&text, 20);
        assert!(chunks.len() >= 20);
        assert_eq!(chunks.concat(), text);
        assert_eq!(split_chunks("", 20).len(), 0);
    }
}
