//! `plexus bench debate`: `compare_positions` on four positions of 2,000 tokens with the
//! built-in embedding, cold (a fresh cache each time) and cached (the same texts
//! again), interleaved with a baseline measured in the same run: reading every byte of
//! the four texts once (a hash over them), the least any comparison of them must do.

use std::time::Instant;

use color_eyre::eyre::Result;
use serde::Serialize;

use crate::base::tokens::TokenCounter;
use crate::cli::args::DebateBenchOpts;
use crate::features::debate::similarity::PositionComparer;

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct DebateBenchReport {
    /// Positions compared.
    pub positions: usize,
    /// Tokens of each position, as counted.
    pub tokens_each: Vec<u64>,
    /// Characters of all positions.
    pub chars: usize,
    /// Repetitions.
    pub runs: usize,
    /// Baseline: one pass over the texts' bytes, median µs.
    pub baseline_us: f64,
    /// Cold `compare_positions` (everything embedded), median ms.
    pub cold_ms: f64,
    /// Cached `compare_positions` (nothing embedded), median µs.
    pub cached_us: f64,
    /// Cold / baseline.
    pub cold_ratio: f64,
    /// Cached / baseline.
    pub cached_ratio: f64,
    /// Target for the cold comparison, ms.
    pub cold_target_ms: f64,
    /// Target for the cached comparison, µs.
    pub cached_target_us: f64,
}

const EN: [&str; 8] = [
    "Phase one lays the groundwork: vocabulary, grammar and listening every morning.",
    "The critic warns that writing practice is too short and mock tests are too rare.",
    "Each week ends with a full mock test under exam conditions and a review of mistakes.",
    "Deadlines are computed from today's date so that every task has a real end.",
    "If progress stalls for two weeks, the plan moves hours from reading to writing.",
    "Speaking practice needs a partner; the plan books two sessions a week with a tutor.",
    "The total effort is about two hundred hours over twelve weeks, two hours a day.",
    "Risks: illness, work travel and fatigue; each has a fallback in the schedule.",
];
const ZH: [&str; 8] = [
    "第一阶段打基础，每天早上背单词、练语法和听力。",
    "批评家认为写作训练时间不足，模考频率过低。",
    "每周末进行一次完整模考，并复盘所有错题。",
    "所有截止日期都从今天开始计算，保证每个任务都有明确的结束时间。",
    "如果连续两周没有进步，就把阅读的时间挪给写作。",
    "口语练习需要陪练，每周安排两次外教课。",
    "总投入约两百小时，十二周完成，每天两小时。",
    "风险包括生病、出差和疲劳，每一项都在计划里留了余地。",
];

/// A plan-like text of about `tokens` tokens, different for each `seed`.
pub fn position_text(seed: usize, tokens: usize, counter: &TokenCounter) -> String {
    let mut out = String::new();
    let mut k = seed;
    while (counter.count(&out) as usize) < tokens {
        let s = if k.is_multiple_of(3) {
            ZH[k % ZH.len()]
        } else {
            EN[(k * 7 + seed) % EN.len()]
        };
        out.push_str(s);
        out.push(if k % 5 == 4 { '\n' } else { ' ' });
        k += 1;
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the benchmark.
pub async fn run_debate_bench(o: &DebateBenchOpts) -> Result<DebateBenchReport> {
    let counter = TokenCounter::default();
    let texts: Vec<String> = (0..o.positions)
        .map(|i| position_text(i, o.tokens, &counter))
        .collect();
    let (mut base, mut cold, mut cached) = (Vec::new(), Vec::new(), Vec::new());
    let warm = PositionComparer::builtin();
    warm.compare(&texts).await?;
    for _ in 0..o.runs.max(1) {
        let t = Instant::now();
        let mut h = 0u64;
        for s in &texts {
            for b in s.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        std::hint::black_box(h);
        base.push(t.elapsed().as_secs_f64() * 1e6);

        let fresh = PositionComparer::builtin();
        let t = Instant::now();
        std::hint::black_box(fresh.compare(&texts).await?);
        cold.push(t.elapsed().as_secs_f64() * 1e3);

        let t = Instant::now();
        std::hint::black_box(warm.compare(&texts).await?);
        cached.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let (baseline_us, cold_ms, cached_us) = (median(base), median(cold), median(cached));
    Ok(DebateBenchReport {
        positions: o.positions,
        tokens_each: texts.iter().map(|t| counter.count(t)).collect(),
        chars: texts.iter().map(|t| t.chars().count()).sum(),
        runs: o.runs,
        baseline_us,
        cold_ms,
        cached_us,
        cold_ratio: cold_ms * 1e3 / baseline_us.max(1e-9),
        cached_ratio: cached_us / baseline_us.max(1e-9),
        cold_target_ms: 5.0,
        cached_target_us: 50.0,
    })
}

/// Prints the report for a person.
pub fn print_debate_report(r: &DebateBenchReport) {
    crate::outln!(
        "compare_positions: {} positions of {:?} tokens ({} characters), built-in embedding, median of {} interleaved runs",
        r.positions,
        r.tokens_each,
        r.chars,
        r.runs
    );
    crate::outln!(
        "  baseline (one pass over the texts)  {:>9.1} µs",
        r.baseline_us
    );
    crate::outln!(
        "  cold (every text embedded)          {:>9.3} ms  ({:.0}× baseline; target < {} ms: {})",
        r.cold_ms,
        r.cold_ratio,
        r.cold_target_ms,
        if r.cold_ms < r.cold_target_ms {
            "met"
        } else {
            "missed"
        }
    );
    crate::outln!(
        "  cached (nothing embedded)           {:>9.1} µs  ({:.1}× baseline; target < {} µs: {})",
        r.cached_us,
        r.cached_ratio,
        r.cached_target_us,
        if r.cached_us < r.cached_target_us {
            "met"
        } else {
            "missed"
        }
    );
}
