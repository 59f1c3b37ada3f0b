//! `plexus bench tokens`: token counting speed on a generated 5 MB mix of English,
//! Chinese and JSON (single thread, cl100k_base and o200k_base, counts checked against
//! tiktoken-rs), and the time to plan the context of a task with 100 inputs of 50,000
//! tokens each (seed 000 issue 4 targets).

use std::time::Instant;

use serde_json::{json, Value};

use crate::base::tokens::{Encoding, TokenCounter};
use crate::run::engine::context::plan::{plan, Input, TransferSettings};
use crate::run::engine::context::select::DataType;

/// Counting figures of one encoding.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EncodingFigures {
    /// Encoding name.
    pub name: String,
    /// Tokens counted.
    pub tokens: usize,
    /// plexus's counter on a fresh thread (empty caches), MB/s.
    pub cold_mb_s: f64,
    /// plexus's counter again on the same text (caches warm), MB/s.
    pub warm_mb_s: f64,
    /// bpe-openai alone, MB/s.
    pub bpe_openai_mb_s: f64,
    /// tiktoken-rs, MB/s.
    pub tiktoken_mb_s: f64,
    /// Counts identical to tiktoken-rs.
    pub identical: bool,
}

/// Figures of the token benchmark.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TokenBenchReport {
    /// Bytes of text counted.
    pub bytes: usize,
    /// Per encoding: name, tokens, MB/s (cold, warm, bpe-openai alone, tiktoken-rs) and
    /// whether the counts equal tiktoken-rs's.
    pub encodings: Vec<EncodingFigures>,
    /// Planning 100 inputs of ~50,000 tokens, counts known, ms.
    pub plan_known_ms: f64,
    /// The same with every input counted during planning (cold), ms.
    pub plan_counting_ms: f64,
    /// Tokens per input in the planning run.
    pub plan_input_tokens: u64,
}

const ENGLISH: &str = include_str!("../../../fixtures/papers/diffusion_planner.md");

/// A deterministic mix of English prose, Chinese prose and JSON, `bytes` long. Every
/// line is new: English lines are drawn word by word from the fixture paper's vocabulary,
/// Chinese lines character by character from a few paragraphs, JSON atoms carry fresh ids
/// and numbers. Words and characters repeat as in real text; whole lines do not, so the
/// counter's line cache gains nothing and its piece cache only what real text would give.
pub fn mixed_text(bytes: usize) -> String {
    let words: Vec<&str> = ENGLISH.split_whitespace().collect();
    let chinese: Vec<char> = "扩散模型通过逐步去噪生成轨迹，每一步都去掉一点噪声。\
Transformer架构完全基于自注意力机制，去掉了循环结构，因此训练可以在序列维度上并行。\
缩放点积注意力的计算为其中缩放因子防止点积过大导致梯度消失。\
行人从停放的车辆之间走出时没有视线，反应时间预算通常为一百五十毫秒。\
规划器在每个时间步更新一次，场景中的其他车辆被建模为条件输入。"
        .chars()
        .filter(|c| !c.is_ascii())
        .collect();
    let mut rng = fastrand::Rng::with_seed(42);
    let mut out = String::with_capacity(bytes + 1024);
    let mut k = 0u64;
    let mut line = String::new();
    while out.len() < bytes {
        line.clear();
        match rng.u8(0..10) {
            0..=4 => {
                for i in 0..rng.usize(6..24) {
                    if i > 0 {
                        line.push(' ');
                    }
                    line.push_str(words[rng.usize(0..words.len().max(1))]);
                }
            }
            5..=7 => {
                for _ in 0..rng.usize(12..40) {
                    line.push(chinese[rng.usize(0..chinese.len())]);
                }
                line.push('。');
            }
            _ => {
                let text: Vec<&str> = (0..rng.usize(5..12))
                    .map(|_| words[rng.usize(0..words.len().max(1))])
                    .collect();
                let v = json!({"asset_id": format!("MATH_{k:06}_{:04x}", rng.u16(..)), "atom_type": "Math_Atom",
                    "confidence": rng.u32(0..1000) as f64 / 1000.0, "content": {"text": text.join(" ")},
                    "provenance": {"paper_id": format!("ArXiv:{}.{:05}", 2300 + rng.u32(0..200), rng.u32(0..99999)),
                                   "paper_location": format!("Page {}, Eq. {}", rng.u32(1..40), rng.u32(1..20))}});
                line.push_str(&v.to_string());
                k += 1;
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    let mut end = bytes.min(out.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// Runs the benchmark on `bytes` of text.
pub fn run_token_bench(bytes: usize) -> TokenBenchReport {
    let text = mixed_text(bytes);
    let mb = text.len() as f64 / 1e6;
    let mut encodings = Vec::new();
    for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
        // The encoders load once per process (not timed): counting is what is measured.
        let _ = enc.count_uncached("warm up");
        let _ = enc.count_reference("warm up");
        // Cold: a fresh thread has empty piece and line caches.
        let t = text.clone();
        let (n, cold) = std::thread::spawn(move || {
            let start = Instant::now();
            let n = enc.count(&t);
            (n, start.elapsed().as_secs_f64())
        })
        .join()
        .unwrap_or((0, f64::INFINITY));
        // Warm: this thread has seen the text twice, so every line is cached.
        let _ = enc.count(&text);
        let _ = enc.count(&text);
        let start = Instant::now();
        let _ = enc.count(&text);
        let warm = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let raw = enc.count_uncached(&text);
        let raw_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let reference = enc.count_reference(&text);
        let tk = start.elapsed().as_secs_f64();
        encodings.push(EncodingFigures {
            name: format!("{enc:?}").to_lowercase().replace("base", "_base"),
            tokens: n,
            cold_mb_s: mb / cold,
            warm_mb_s: mb / warm,
            bpe_openai_mb_s: mb / raw_s,
            tiktoken_mb_s: mb / tk,
            identical: n == reference && raw == reference,
        });
    }
    // Planning: 100 inputs of ~50,000 tokens each.
    let counter = TokenCounter::default();
    let chunk = mixed_text(200_000);
    let per_input = counter.count(&chunk);
    let inputs: Vec<Input> = (0..100)
        .map(|i| Input {
            name: format!("task_output:T{i:03}"),
            data: Value::String(chunk.clone()),
            priority: if i % 2 == 0 { 1 } else { 2 },
            data_type: DataType::Text,
            configured: None,
            reference: json!({"ref_type": "task_output", "task_id": format!("T{i:03}")}),
            tokens: Some(per_input),
        })
        .collect();
    let start = Instant::now();
    let p = plan(
        "T",
        "Knowledge_Vault",
        76_500,
        5_000,
        2_000,
        &inputs,
        &TransferSettings::default(),
        &counter,
    );
    let plan_known_ms = start.elapsed().as_secs_f64() * 1e3;
    debug_assert!(p.report.total_tokens > 0);
    let cold: Vec<Input> = inputs
        .into_iter()
        .map(|mut i| {
            i.tokens = None;
            i
        })
        .collect();
    let plan_counting_ms = std::thread::spawn(move || {
        let c = TokenCounter::default();
        let start = Instant::now();
        let _ = plan(
            "T",
            "Knowledge_Vault",
            76_500,
            5_000,
            2_000,
            &cold,
            &TransferSettings::default(),
            &c,
        );
        start.elapsed().as_secs_f64() * 1e3
    })
    .join()
    .unwrap_or(f64::INFINITY);
    TokenBenchReport {
        bytes: text.len(),
        encodings,
        plan_known_ms,
        plan_counting_ms,
        plan_input_tokens: per_input,
    }
}

/// Prints the report.
pub fn print_token_report(r: &TokenBenchReport) {
    crate::outln!(
        "counting {:.1} MB of mixed English, Chinese and JSON, one thread (target ≥ 30 MB/s)",
        r.bytes as f64 / 1e6
    );
    for e in &r.encodings {
        crate::outln!(
            "  {:<12} {:>9} tokens  plexus {:>5.1} MB/s cold, {:>5.1} MB/s warm · bpe-openai alone {:>5.1} · tiktoken-rs {:>4.1} · identical: {}",
            e.name,
            e.tokens,
            e.cold_mb_s,
            e.warm_mb_s,
            e.bpe_openai_mb_s,
            e.tiktoken_mb_s,
            if e.identical { "yes" } else { "NO" }
        );
    }
    crate::outln!(
        "planning 100 inputs of {} tokens: {:.2} ms with counts known (target < 50 ms), {:.0} ms counting them too",
        r.plan_input_tokens, r.plan_known_ms, r.plan_counting_ms
    );
}
