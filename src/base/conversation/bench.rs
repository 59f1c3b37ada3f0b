//! A benchmark of counting and compressing a realistic long conversation: many ReAct
//! rounds of thoughts, tool calls and tool results in mixed English, Chinese and JSON,
//! generated deterministically.

use std::fmt;
use std::time::Instant;

use serde_json::json;

use super::compress::ContextManager;
use super::history::Conversation;
use super::message::{text_block, thinking_block, tool_result_block, tool_use_block, Message};
use crate::base::protocol::Extra;
use crate::base::tokens::TokenCounter;

/// Medians of the benchmark's measurements (milliseconds).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BenchFigures {
    /// Tokens of the conversation measured.
    pub tokens: u64,
    /// Its messages.
    pub messages: usize,
    /// Its rounds.
    pub rounds: usize,
    /// Runs of each measurement.
    pub runs: usize,
    /// Counting every message from scratch on a fresh thread (cold token caches).
    pub count_cold_ms: f64,
    /// Counting every message from scratch again (warm token caches).
    pub count_warm_ms: f64,
    /// Adding one message to the counted conversation (the others' counts cached).
    pub push_one_ms: f64,
    /// Compressing with an empty summary cache.
    pub compress_ms: f64,
    /// Compressing the same rounds again, their summaries cached.
    pub compress_cached_ms: f64,
    /// Window used for the compression (the conversation is above 80% of it).
    pub window: u64,
    /// Tokens after compression.
    pub compressed_tokens: u64,
    /// Rounds summarised by the compression.
    pub rounds_summarised: usize,
}

impl fmt::Display for BenchFigures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "conversation: {} tokens, {} messages, {} rounds; medians of {} runs",
            self.tokens, self.messages, self.rounds, self.runs
        )?;
        writeln!(
            f,
            "count from scratch (cold caches)  {:>10.3} ms",
            self.count_cold_ms
        )?;
        writeln!(
            f,
            "count from scratch (warm caches)  {:>10.3} ms",
            self.count_warm_ms
        )?;
        writeln!(
            f,
            "add one message (cached counts)   {:>10.4} ms",
            self.push_one_ms
        )?;
        writeln!(
            f,
            "compress (cold summary cache)     {:>10.3} ms",
            self.compress_ms
        )?;
        writeln!(
            f,
            "compress (summaries cached)       {:>10.3} ms",
            self.compress_cached_ms
        )?;
        write!(
            f,
            "compression: window {}, {} → {} tokens, {} rounds summarised",
            self.window, self.tokens, self.compressed_tokens, self.rounds_summarised
        )
    }
}

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const MODULES: &[&str] = &["billing", "ingest", "report", "auth", "scheduler", "export"];
const REGIONS: &[&str] = &["华东", "华南", "North", "West", "华北", "Central"];
const TOOLS: &[&str] = &[
    "file_search",
    "file_reader",
    "query_database",
    "python_exec",
    "web_fetch",
];

/// One thought of 2 to 4 sentences, English and Chinese mixed.
fn thought(r: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..2 + r.below(3) {
        let (m, reg, n, p) = (
            r.pick(MODULES),
            r.pick(REGIONS),
            r.below(5000),
            r.below(100),
        );
        let sentence = match r.below(6) {
            0 => format!("I need to read src/{m}/handler_{n}.py before changing anything, because the tests for {m} failed with {p} errors. "),
            1 => format!("The query returned {n} rows; the totals for region {reg} look off by {p}%, so I will check the raw data first. "),
            2 => format!("Next I will compare the output with the expected schema of {m} and note any missing field such as `amount_{p}`. "),
            3 => format!("我需要先读取 src/{m}/config_{n}.yaml，确认{m}模块的接口，然后再运行测试。"),
            4 => format!("查询结果有{n}行，{reg}地区的销售额比上个月增长了{p}%，需要进一步核对原始数据。"),
            _ => format!("根据上一步的观察，配置文件中缺少超时参数，我将补充默认值{n}毫秒并重新运行第{p}个用例。"),
        };
        s.push_str(&sentence);
    }
    s
}

/// A tool observation: JSON rows, a file listing, a stored-data reference, code or an
/// error.
fn observation(r: &mut Rng, call: &str) -> (String, bool) {
    match r.below(10) {
        0..=3 => {
            let rows: Vec<_> = (0..5 + r.below(25))
                .map(|i| {
                    json!({
                        "id": r.below(100_000),
                        "region": r.pick(REGIONS),
                        "amount": r.below(1_000_000) as f64 / 100.0,
                        "month": format!("2025-{:02}", 1 + i % 12),
                        "note": if i % 3 == 0 { "退货已处理" } else { "ok" },
                    })
                })
                .collect();
            let text = serde_json::to_string_pretty(&json!({"rows": rows, "total": rows.len()}))
                .unwrap_or_default();
            (text, false)
        }
        4..=5 => {
            let mut s = format!("Found {} items:\n", 3 + r.below(20));
            for _ in 0..3 + r.below(20) {
                let m = r.pick(MODULES);
                s.push_str(&format!("  - src/{m}/{m}_{}.py\n", r.below(900)));
            }
            (s, false)
        }
        6..=7 => (
            format!(
                "Data stored in file: tool_data/{call}_{:06x}.json\nSummary: {} rows × 8 columns of sales records, 2025-01 to 2025-12; 数据已按地区汇总。",
                r.below(0xff_ffff),
                r.below(50_000)
            ),
            false,
        ),
        8 => {
            let m = r.pick(MODULES);
            (
                format!(
                    "def load_{m}(path: str) -> dict:\n    # 读取配置并校验字段\n    with open(path, encoding=\"utf-8\") as f:\n        data = json.load(f)\n    if \"timeout_ms\" not in data:\n        data[\"timeout_ms\"] = {}\n    return data\n",
                    r.below(60_000)
                ),
                false,
            )
        }
        _ => (
            format!(
                "Operation failed.\nError Type: timeout\nError Code: TOOL_TIMEOUT\nError Message: query did not finish within {} ms\nTool Call ID: {call}",
                r.below(60_000)
            ),
            true,
        ),
    }
}

/// The messages of a realistic conversation of at least `tokens` tokens (as counted by
/// `counter`): an instruction, then rounds of thinking, text and one or two tool calls
/// answered by tool results.
pub fn sample_messages(tokens: usize, counter: &TokenCounter) -> Vec<Message> {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut out = vec![Message::user_text(
        "分析 src 目录下的 Python 文件结构, then summarise the 2025 sales data by region and fix the failing billing tests.",
    )];
    let mut total = super::count::message_tokens(counter, &out[0]);
    let mut round = 0usize;
    while total < tokens as u64 {
        round += 1;
        let mut call_blocks = Vec::new();
        let mut result_blocks = Vec::new();
        for k in 0..1 + usize::from(r.below(4) == 0) {
            let call = format!("toolu_{round:05}_{k}_{:08x}", r.next() as u32);
            let tool = r.pick(TOOLS);
            let mut input = Extra::new();
            input.insert("path".into(), json!(format!("src/{}/", r.pick(MODULES))));
            input.insert("pattern".into(), json!("**/*.py"));
            input.insert("limit".into(), json!(10 + r.below(90)));
            call_blocks.push(tool_use_block(call.clone(), tool, input));
            let (text, is_error) = observation(&mut r, &call);
            result_blocks.push(tool_result_block(call, text, is_error));
        }
        let mut content = vec![
            thinking_block(thought(&mut r)),
            text_block(format!(
                "Step {round}: I will call {} next. 我会根据结果决定下一步。",
                r.pick(TOOLS)
            )),
        ];
        content.extend(call_blocks);
        for m in [Message::assistant(content), Message::user(result_blocks)] {
            total += super::count::message_tokens(counter, &m);
            out.push(m);
        }
    }
    out
}

/// A conversation built from [`sample_messages`], counted with cl100k_base.
pub fn sample_conversation(tokens: usize) -> Conversation {
    let counter = TokenCounter::default();
    let mut conv = Conversation::new(
        counter,
        "You are a careful ReAct agent. Think, call tools, read observations, answer.",
    );
    for m in sample_messages(tokens, &counter) {
        conv.push(m);
    }
    conv
}

/// The median of `xs` (0 when empty).
fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Milliseconds taken by `f`, and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_secs_f64() * 1000.0, out)
}

/// Builds a conversation of about `tokens` tokens and measures, `runs` times each
/// (medians): counting it from scratch (cold, on a fresh thread; and warm), adding one
/// message to it, and compressing it (window: total / 0.8 rounded down, so the total is
/// just above the threshold) with a cold and a warm summary cache.
pub fn bench_conversation(tokens: usize, runs: usize) -> BenchFigures {
    let runs = runs.max(1);
    let conv = sample_conversation(tokens);
    let system = conv.system_prompt().to_string();
    let counter = *conv.counter();
    let messages = conv.messages().to_vec();
    let build = move || {
        let mut c = Conversation::new(counter, system.clone());
        for m in &messages {
            c.push(m.clone());
        }
        c.total_tokens()
    };
    let mut cold = Vec::new();
    for _ in 0..runs {
        let b = build.clone();
        let ms = std::thread::spawn(move || timed(b).0)
            .join()
            .unwrap_or(f64::NAN);
        cold.push(ms);
    }
    let warm: Vec<f64> = (0..runs).map(|_| timed(|| conv.recount()).0).collect();
    let extra = Message::user_text("One more observation: 再检查一次 billing 模块的测试结果。");
    let push: Vec<f64> = (0..runs)
        .map(|_| {
            let mut c = conv.clone();
            timed(|| {
                c.push(extra.clone());
                c.total_tokens()
            })
            .0
        })
        .collect();
    let window = (conv.total_tokens() as f64 / 0.8).floor() as u64;
    let mut compress = Vec::new();
    let mut cached = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let mut manager = ContextManager::new(window);
        let mut c = conv.clone();
        compress.push(timed(|| manager.compress(&mut c)).0);
        let mut c2 = conv.clone();
        let (ms, result) = timed(|| manager.compress(&mut c2));
        cached.push(ms);
        last = Some(result);
    }
    let stats = conv.stats();
    BenchFigures {
        tokens: conv.total_tokens(),
        messages: stats.messages,
        rounds: stats.rounds,
        runs,
        count_cold_ms: median(cold),
        count_warm_ms: median(warm),
        push_one_ms: median(push),
        compress_ms: median(compress),
        compress_cached_ms: median(cached),
        window,
        compressed_tokens: last.map_or(0, |r| r.after_tokens),
        rounds_summarised: last.map_or(0, |r| r.rounds_summarised),
    }
}
