//! The built-in simulated provider: deterministic for a seed, protocol-conformant
//! responses built from the request, streamed in chunks with configurable latency, and
//! configurable faults so that every status and error path can be seen offline.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::sim_answer::{Answer, DeltaAudit, Metadata, Output, SimAtom};
use super::sim_react::{next_step, SimStep};
use super::{ChunkSink, Provider, ProviderError, ProviderFuture, ProviderOutput};
use crate::base::protocol::AgentRequest;

const PAPERS: [&str; 3] = [
    include_str!("../../../fixtures/papers/diffusion_planner.md"),
    include_str!("../../../fixtures/papers/transformer_zh.md"),
    include_str!("../../../fixtures/papers/avp_scenarios.md"),
];

/// A fault the simulated provider can inject into one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// A good answer.
    None,
    /// JSON cut off mid-way (E002).
    MalformedJson,
    /// Atoms missing required fields (lower grades).
    MissingRequired,
    /// Thin atoms with no provenance (grade D, E005).
    LowGrade,
    /// Streams part of the answer, then stalls past the timeout (E004).
    Timeout,
    /// A transient transport error such as HTTP 503 (E001-style retry).
    Transient,
    /// The paper or repository cannot be reached (E001).
    SourceNotFound,
    /// An atom relates to an asset that does not exist (E007).
    Hallucination,
    /// Answer without an `atoms` array (E003).
    InvalidShape,
    /// A permanent provider error (E008).
    SystemError,
}

/// Probability of each fault per attempt (checked in this order; the rest is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultRates {
    /// Malformed JSON.
    pub malformed_json: f64,
    /// Missing required fields.
    pub missing_required: f64,
    /// Low-grade atoms.
    pub low_grade: f64,
    /// Timeouts.
    pub timeout: f64,
    /// Transient errors.
    pub transient: f64,
    /// Unreachable sources.
    pub source_not_found: f64,
    /// Fabricated asset references.
    pub hallucination: f64,
    /// Wrong response shape.
    pub invalid_shape: f64,
}

impl FaultRates {
    /// The demo's mix: every path shows up now and then, retries usually recover.
    pub fn demo() -> FaultRates {
        FaultRates {
            malformed_json: 0.08,
            missing_required: 0.08,
            low_grade: 0.06,
            timeout: 0.04,
            transient: 0.08,
            source_not_found: 0.03,
            hallucination: 0.0,
            invalid_shape: 0.04,
        }
    }
}

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

    fn sentence(&self, rng: &mut fastrand::Rng) -> &'static str {
        self.sentences[rng.usize(..self.sentences.len())]
    }

    /// Builds the answer text for a request under a fault.
    pub fn answer(&self, req: &AgentRequest, fault: Fault, rng: &mut fastrand::Rng) -> String {
        if let Some(turn) = crate::base::protocol::debate_turn::DebateTurn::of(req) {
            return super::sim_debate::answer(&turn);
        }
        let reqs = &req.user_prompt.output_requirements;
        let max = reqs.max_atoms.unwrap_or(3).max(1);
        let n = 1 + rng.u32(..max.min(3));
        let atom_type = reqs.atom_type.clone().unwrap_or_else(|| "Atom".to_string());
        let prefix = match atom_type.as_str() {
            "Math_Atom" => "MATH",
            "Code_Atom" => "CODE",
            "Scenario_Atom" => "SCENARIO",
            "Strategic_Decision" => "DECISION",
            "Asset_Index" => "VAULT",
            _ => "ATOM",
        };
        let stem: String = req
            .task_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let paper_id = req
            .user_prompt
            .context
            .paper_info
            .as_ref()
            .and_then(|p| p.paper_id.clone())
            .unwrap_or_else(|| "ArXiv:2406.01234".to_string());
        let code_link = req
            .user_prompt
            .context
            .code_info
            .as_ref()
            .and_then(|c| c.repo_url.clone())
            .map(|u| {
                let file = c_first_file(req).unwrap_or_else(|| "models/diffusion.py".into());
                format!(
                    "{}/blob/main/{}#L{}-L{}",
                    u.trim_start_matches("https://"),
                    file,
                    40 + rng.u32(..100),
                    160 + rng.u32(..100)
                )
            });
        let existing: Vec<String> = req
            .user_prompt
            .context
            .existing_assets
            .clone()
            .unwrap_or_default();
        let date = invocation_date(&req.invocation_id);
        let lower_prefix = prefix.to_ascii_lowercase();
        // `Math_Ops` for MATH: the prefix's initial, the rest in lower case.
        let category = cat(&[&prefix[..1], &lower_prefix[1..], "_Ops"]);
        let mut atoms = Vec::new();
        for k in 0..n {
            let mut content = Map::new();
            for field in &reqs.required_fields {
                let path: Vec<&str> = field.split('.').collect();
                let (root, rest) = match path.first() {
                    Some(&"content") => ("content", &path[1..]),
                    Some(&"provenance") => ("provenance", &path[1..]),
                    _ => ("content", &path[..]),
                };
                if root == "content" && !rest.is_empty() {
                    if fault == Fault::MissingRequired && rng.bool() {
                        continue;
                    }
                    let text = cat(&[self.sentence(rng), " ", self.sentence(rng)]);
                    insert_path(&mut content, rest, Value::String(text));
                }
            }
            if content.is_empty() || fault == Fault::LowGrade {
                content.insert(
                    "note".into(),
                    Value::String(if fault == Fault::LowGrade {
                        "tbd".into()
                    } else {
                        self.sentence(rng).to_string()
                    }),
                );
            }
            if fault == Fault::LowGrade {
                for v in content.values_mut() {
                    *v = Value::String("tbd".into());
                }
            }
            let mut provenance = Map::new();
            provenance.insert("paper_id".into(), Value::String(paper_id.clone()));
            if fault != Fault::LowGrade {
                let (page, eq) = (2 + rng.u32(..9), 1 + rng.u32(..12));
                provenance.insert(
                    "paper_location".into(),
                    Value::String(cat(&[
                        "Page ",
                        itoa::Buffer::new().format(page),
                        ", Eq. ",
                        itoa::Buffer::new().format(eq),
                    ])),
                );
                if let Some(l) = &code_link {
                    provenance.insert("code_link".into(), Value::String(l.clone()));
                }
            }
            let number = k + 1;
            let asset_id = cat(&[
                prefix,
                "_",
                &stem,
                if number < 10 { "_0" } else { "_" },
                itoa::Buffer::new().format(number),
            ]);
            provenance.insert(
                "atom_path".into(),
                Value::String(cat(&["/atoms/", &lower_prefix, "/", &asset_id, ".json"])),
            );
            let mut refs: Vec<String> = existing
                .iter()
                .filter(|_| rng.bool())
                .take(2)
                .cloned()
                .collect();
            if fault == Fault::Hallucination && k == 0 {
                refs.push(format!("{prefix}_FABRICATED_{:04}", rng.u32(..10000)));
            }
            let incremental = if refs.is_empty() {
                None
            } else {
                Some(self.sentence(rng))
            };
            atoms.push(SimAtom {
                asset_id,
                atom_type: &atom_type,
                category: category.clone(),
                data_status: "Verified_Source_Anchored",
                confidence: ((0.6 + rng.f64() * 0.39) * 100.0).round() / 100.0,
                metadata: Metadata {
                    created_at: cat(&[&date, "T00:00:00Z"]),
                    created_by: &req.agent,
                    version: "1.0",
                    tags: [cat(&["#", prefix])],
                },
                content,
                provenance,
                delta_audit: DeltaAudit {
                    existing_assets: refs,
                    incremental_value: incremental,
                    contradiction_marked: false,
                },
            });
        }
        let summary = cat(&[
            "Produced ",
            itoa::Buffer::new().format(n),
            " ",
            &atom_type,
            " for ",
            &req.task_id,
            ".",
        ]);
        let (valid, invalid) = if fault == Fault::InvalidShape {
            (None, Some(atoms.as_slice()))
        } else {
            (Some(atoms.as_slice()), None)
        };
        let body = Answer {
            output: Output {
                atoms: valid,
                result: invalid,
                summary: &summary,
            },
        };
        // Room for a typical answer up front (the buffer would otherwise grow four times).
        let mut buf = Vec::with_capacity(4096);
        let text = match serde_json::to_writer_pretty(&mut buf, &body) {
            Ok(()) => String::from_utf8(buf).unwrap_or_default(),
            Err(_) => String::new(),
        };
        let mut text = if rng.u8(..4) == 0 {
            format!("Here is the analysis.\n```json\n{text}\n```\n")
        } else {
            text
        };
        if fault == Fault::MalformedJson {
            let cut = text.len() * 2 / 3;
            let cut = (0..=cut)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            text.truncate(cut);
        }
        text
    }
}

/// The strings `parts` one after another, in a string of exactly their length.
fn cat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    parts.iter().for_each(|p| s.push_str(p));
    s
}

fn c_first_file(req: &AgentRequest) -> Option<String> {
    req.user_prompt
        .context
        .code_info
        .as_ref()?
        .focus_files
        .as_ref()?
        .first()
        .cloned()
}

/// `YYYY-MM-DD` from an invocation id `INV_YYYYMMDD_…` (deterministic timestamps).
fn invocation_date(id: &str) -> String {
    let d = id.split('_').nth(1).unwrap_or("20260101");
    if d.len() == 8 && d.is_ascii() {
        cat(&[&d[..4], "-", &d[4..6], "-", &d[6..]])
    } else {
        "2026-01-01".into()
    }
}

fn insert_path(obj: &mut Map<String, Value>, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            obj.insert((*last).to_string(), value);
        }
        [first, rest @ ..] => {
            let child = obj
                .entry((*first).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(m) = child {
                insert_path(m, rest, value);
            }
        }
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
                    if self.config.chunk_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(self.config.chunk_ms)).await;
                    }
                    sink.chunk(&part.concat());
                }
                return Ok(ProviderOutput::default());
            }
            // A step of a tool-using loop: a thought, then one tool call (faults are
            // kept for the final answer).
            if let Some(SimStep::Act { thought, call }) = request.react().map(|r| next_step(&r)) {
                if self.config.first_chunk_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(self.config.first_chunk_ms)).await;
                }
                for (i, c) in split_chunks(&thought, 4).iter().enumerate() {
                    if i > 0 && self.config.chunk_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(self.config.chunk_ms)).await;
                    }
                    sink.chunk(c);
                }
                return Ok(ProviderOutput {
                    finish_reason: Some("tool_use".into()),
                    tool_calls: vec![call],
                    ..ProviderOutput::default()
                });
            }
            // A debate turn or an eval's judge: its answer streamed, no faults.
            let special = if super::sim_judge::is_judge_request(&request) {
                Some(super::sim_judge::simulated_answer(&request))
            } else {
                crate::base::protocol::debate_turn::DebateTurn::of(&request)
                    .map(|turn| super::sim_debate::answer(&turn))
            };
            if let Some(text) = special {
                if self.config.first_chunk_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(self.config.first_chunk_ms)).await;
                }
                for (i, c) in split_chunks(&text, 4).iter().enumerate() {
                    if i > 0 && self.config.chunk_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(self.config.chunk_ms)).await;
                    }
                    sink.chunk(c);
                }
                return Ok(ProviderOutput::default());
            }
            let mut rng = self.rng_for(&request, attempt);
            let fault = self.fault_for(&request.task_id, attempt, &mut rng);
            if self.config.first_chunk_ms > 0 {
                tokio::time::sleep(Duration::from_millis(self.config.first_chunk_ms)).await;
            }
            match fault {
                Fault::Transient => {
                    return Err(ProviderError::Transient {
                        message: "HTTP 503 Service Unavailable (simulated)".into(),
                        retry_after_ms: None,
                    })
                }
                Fault::SourceNotFound => {
                    let what = request
                        .user_prompt
                        .context
                        .code_info
                        .as_ref()
                        .and_then(|c| c.repo_url.clone())
                        .unwrap_or_else(|| "the paper PDF".into());
                    return Err(ProviderError::SourceNotFound(format!(
                        "cannot reach {what} (simulated)"
                    )));
                }
                Fault::SystemError => {
                    return Err(ProviderError::Permanent(
                        "internal provider failure (simulated)".into(),
                    ))
                }
                _ => {}
            }
            let text = self.answer(&request, fault, &mut rng);
            let chunks = split_chunks(&text, self.config.min_chunks);
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
                if i > 0 && self.config.chunk_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(self.config.chunk_ms)).await;
                }
                sink.chunk(c);
            }
            Ok(ProviderOutput::default())
        })
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
