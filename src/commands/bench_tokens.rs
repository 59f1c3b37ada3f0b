//! `plexus bench-tokens`: token counting speed on a generated 5 MB mix of English,
//! Chinese and JSON (single thread, cl100k_base and o200k_base, counts checked against
//! tiktoken-rs), and the time to plan the context of a task with 100 inputs of 50,000
//! tokens each (seed 000 issue 4 targets).

use std::time::Instant;

use serde_json::{json, Value};

use crate::engine::context::plan::{plan, Input};
use crate::engine::context::select::DataType;
use crate::tokens::{Encoding, TokenCounter};

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

const ENGLISH: &str = include_str!("../../fixtures/papers/diffusion_planner.md");

/// A deterministic mix of English prose, Chinese prose and JSON, `bytes` long.
pub fn mixed_text(bytes: usize) -> String {
    let english: Vec<&str> = ENGLISH.lines().filter(|l| l.len() > 40).collect();
    let chinese = [
        "扩散模型通过逐步去噪生成轨迹，每一步都去掉一点噪声。",
        "Transformer架构完全基于自注意力机制，去掉了循环结构，因此训练可以在序列维度上并行。",
        "缩放点积注意力的计算为 softmax(QK^T / sqrt(d_k)) V，其中缩放因子防止点积过大导致梯度消失。",
        "行人从停放的车辆之间走出时没有视线，反应时间预算通常为150毫秒。",
    ];
    let mut rng = fastrand::Rng::with_seed(42);
    let mut out = String::with_capacity(bytes + 1024);
    let mut k = 0u64;
    while out.len() < bytes {
        match rng.u8(0..10) {
            0..=4 => {
                out.push_str(english[rng.usize(0..english.len().max(1))]);
                out.push('\n');
            }
            5..=7 => {
                out.push_str(chinese[rng.usize(0..chinese.len())]);
                out.push('\n');
            }
            _ => {
                let v = json!({"asset_id": format!("MATH_{k:06}"), "atom_type": "Math_Atom",
                    "confidence": (k % 100) as f64 / 100.0, "content": {"text": english[rng.usize(0..english.len().max(1))]},
                    "provenance": {"paper_id": "ArXiv:2406.01234", "paper_location": format!("Page {}, Eq. {}", k % 30, k % 9)}});
                out.push_str(&v.to_string());
                out.push('\n');
                k += 1;
            }
        }
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
        // Cold: a fresh thread has empty caches.
        let t = text.clone();
        let (n, cold) = std::thread::spawn(move || {
            let start = Instant::now();
            let n = enc.count(&t);
            (n, start.elapsed().as_secs_f64())
        })
        .join()
        .unwrap_or((0, f64::INFINITY));
        let start = Instant::now();
        let _ = enc.count(&text);
        let _ = enc.count(&text);
        let warm = start.elapsed().as_secs_f64() / 2.0;
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
        3,
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
        let _ = plan("T", "Knowledge_Vault", 76_500, 5_000, 2_000, &cold, 3, &c);
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
    println!(
        "counting {:.1} MB of mixed English, Chinese and JSON, one thread (target ≥ 30 MB/s)",
        r.bytes as f64 / 1e6
    );
    for e in &r.encodings {
        println!(
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
    println!(
        "planning 100 inputs of {} tokens: {:.2} ms with counts known (target < 50 ms), {:.0} ms counting them too",
        r.plan_input_tokens, r.plan_known_ms, r.plan_counting_ms
    );
}
