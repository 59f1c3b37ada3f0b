//! Context compression: when a conversation reaches 80% of the model's window, the
//! rounds before the last five are replaced by one extractive summary message.
//!
//! # The threshold rule
//!
//! The threshold in tokens is ⌈`max_tokens` × `threshold`⌉ (a product within 1e-9 of an
//! integer counts as that integer, so 80% of 1000 is exactly 800).
//! [`ContextManager::should_compress`] is true when the conversation's total is **at or
//! above** it (`>=`): with a window of 1000, 799 tokens do not compress, 800 do.
//!
//! # What is kept
//!
//! The system prompt, the head (the initial instruction; see [`super::history`]) and
//! the last [`ContextManager::keep_rounds`] rounds (5) stay whole. Older rounds become
//! one user message placed at the end of the head (replacing the previous summary), built
//! by [`super::summary`]. Each round's summary is cached by a hash of the round's
//! messages, so compressing the same rounds again reuses it. A compression never removes
//! the kept rounds: when they alone are over the threshold the result says so
//! (`under_threshold: false`) and the caller decides; nothing loops. Nor does it replace
//! rounds by a summary that would be larger than they are (tiny rounds): then nothing
//! changes and `rounds_summarised` is 0.
//!
//! # What is counted
//!
//! Every request carries more than the conversation: the tool schemas. They are
//! [`ContextManager::fixed_tokens`], added to the conversation's total wherever the
//! threshold is compared, so the rule holds for the whole prompt as sent.
//!
//! # What survives whole
//!
//! The caller names [`Pinned`] texts: an active skill's instructions, the latest
//! observation of each tool. A pinned text whose result falls in the summarised rounds
//! is copied whole into the summary message, under its label and call id, so the next
//! step still reads it. [`ContextManager::compress_to_fit`] keeps fewer rounds (down to
//! the last one) while the prompt stays at or above the threshold.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::Hasher;
use std::sync::Arc;

use serde::Serialize;

use super::count::message_tokens;
use super::history::Conversation;
use super::message::{text_block, Message};
use super::summary::{render, summarise_round, RoundSummary};

/// Rounds kept whole by default.
pub const KEEP_ROUNDS: usize = 5;
/// Default threshold, as a fraction of the window.
pub const THRESHOLD: f64 = 0.8;
/// The summary cache is emptied when it holds more entries than this.
const CACHE_LIMIT: usize = 50_000;

/// What one compression did, for the engine's event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Compression {
    /// Tokens before.
    pub before_tokens: u64,
    /// Tokens after.
    pub after_tokens: u64,
    /// Rounds summarised by this compression.
    pub rounds_summarised: usize,
    /// Rounds kept whole.
    pub rounds_kept: usize,
    /// Rounds whose summary came from the cache.
    pub cache_hits: usize,
    /// Tokens of the summary message (0 when none).
    pub summary_tokens: u64,
    /// Summarised rounds reduced to their references to fit the summary budget.
    pub rounds_reduced: usize,
    /// The threshold in tokens.
    pub threshold_tokens: u64,
    /// Whether the conversation is now under the threshold; `false` means the head and
    /// the kept rounds alone reach it.
    pub under_threshold: bool,
}

/// A text kept whole across compressions (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// What it is, for the model (`skill alpha`, `latest file_search result`).
    pub label: String,
    /// The tool call whose result it is.
    pub call_id: String,
    /// The text, whole.
    pub text: String,
}

/// Watches a conversation against a model's window and compresses it.
#[derive(Debug, Clone)]
pub struct ContextManager {
    /// The model's context window, in tokens.
    pub max_tokens: u64,
    /// Fraction of the window at which to compress (0.8).
    pub threshold: f64,
    /// Rounds kept whole (5).
    pub keep_rounds: usize,
    /// Token budget of the summary message (a tenth of the window by default).
    pub summary_budget: u64,
    /// Tokens sent with every request beside the conversation (the tool schemas).
    pub fixed_tokens: u64,
    /// Texts kept whole when their rounds are summarised.
    pub pinned: Vec<Pinned>,
    cache: HashMap<u128, Arc<RoundSummary>>,
}

/// A hasher fed through `io::Write`, so messages are hashed as their JSON without an
/// intermediate string.
struct HashWriter<H: Hasher>(H);

impl<H: Hasher> std::io::Write for HashWriter<H> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A 128-bit hash of `messages` (two SipHash passes with different prefixes).
fn hash_round(messages: &[Message]) -> u128 {
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write_u8(salt);
        let mut w = HashWriter(h);
        for m in messages {
            let _ = serde_json::to_writer(&mut w, m);
            w.0.write_u8(0xff);
        }
        w.0.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

impl ContextManager {
    /// A manager for a window of `max_tokens`, with the defaults: threshold 0.8, 5 rounds
    /// kept, a summary budget of a tenth of the window.
    pub fn new(max_tokens: u64) -> ContextManager {
        ContextManager {
            max_tokens,
            threshold: THRESHOLD,
            keep_rounds: KEEP_ROUNDS,
            summary_budget: max_tokens / 10,
            fixed_tokens: 0,
            pinned: Vec::new(),
            cache: HashMap::new(),
        }
    }

    /// The threshold in tokens: ⌈`max_tokens` × `threshold`⌉ (see the module's rule).
    pub fn threshold_tokens(&self) -> u64 {
        let t = self.max_tokens as f64 * self.threshold;
        if !t.is_finite() || t <= 0.0 {
            return 0;
        }
        let r = t.round();
        if (t - r).abs() < 1e-9 * t.max(1.0) {
            r as u64
        } else {
            t.ceil() as u64
        }
    }

    /// Whether `conv` with the [`fixed_tokens`](Self::fixed_tokens) is at or above the
    /// threshold.
    pub fn should_compress(&self, conv: &Conversation) -> bool {
        conv.total_tokens() + self.fixed_tokens >= self.threshold_tokens()
    }

    /// Round summaries held in the cache.
    pub fn cached_summaries(&self) -> usize {
        self.cache.len()
    }

    /// Compresses `conv` when [`should_compress`](Self::should_compress) says so.
    pub fn maybe_compress(&mut self, conv: &mut Conversation) -> Option<Compression> {
        self.should_compress(conv).then(|| self.compress(conv))
    }

    /// Compresses `conv` when it is at or above the threshold, keeping
    /// [`keep_rounds`](Self::keep_rounds) rounds whole, then fewer (down to the last one)
    /// while it still is; one [`Compression`] for the whole (before of the first, after
    /// of the last).
    pub fn compress_to_fit(&mut self, conv: &mut Conversation) -> Option<Compression> {
        if !self.should_compress(conv) {
            return None;
        }
        let keep = self.keep_rounds;
        let mut done: Option<Compression> = None;
        for k in (1..=keep.max(1)).rev() {
            self.keep_rounds = k;
            let c = self.compress(conv);
            done = Some(match done {
                None => c,
                Some(d) => Compression {
                    before_tokens: d.before_tokens,
                    rounds_summarised: d.rounds_summarised + c.rounds_summarised,
                    cache_hits: d.cache_hits + c.cache_hits,
                    rounds_reduced: c.rounds_reduced.max(d.rounds_reduced),
                    ..c
                },
            });
            if c.under_threshold {
                break;
            }
        }
        self.keep_rounds = keep;
        done
    }

    /// Replaces every round but the last `keep_rounds` by the summary message (see the
    /// module). With `keep_rounds` rounds or fewer nothing changes.
    pub fn compress(&mut self, conv: &mut Conversation) -> Compression {
        let before = conv.total_tokens() + self.fixed_tokens;
        let threshold_tokens = self.threshold_tokens();
        let rounds = conv.rounds();
        let mut result = Compression {
            before_tokens: before,
            after_tokens: before,
            rounds_summarised: 0,
            rounds_kept: rounds.len(),
            cache_hits: 0,
            summary_tokens: conv.summary_index().map_or(0, |i| conv.message_tokens()[i]),
            rounds_reduced: 0,
            threshold_tokens,
            under_threshold: before < threshold_tokens,
        };
        if rounds.len() <= self.keep_rounds {
            return result;
        }
        let cut = rounds.len() - self.keep_rounds;
        let mut all: Vec<Arc<RoundSummary>> = conv
            .summary
            .as_ref()
            .map(|s| s.rounds.clone())
            .unwrap_or_default();
        if self.cache.len() > CACHE_LIMIT {
            self.cache.clear();
        }
        for r in &rounds[..cut] {
            let messages = &conv.messages()[r.start..r.end];
            let key = hash_round(messages);
            let summary = match self.cache.get(&key) {
                Some(s) => {
                    result.cache_hits += 1;
                    s.clone()
                }
                None => {
                    let s = Arc::new(summarise_round(messages, conv.counter(), r.tokens));
                    self.cache.insert(key, s.clone());
                    s
                }
            };
            all.push(summary);
        }
        let (mut text, reduced) = render(&all, self.summary_budget);
        self.add_pinned(&mut text, &conv.messages()[rounds[cut].start..]);
        let summary = Message::user(vec![text_block(text)]);
        // never trade messages for a larger summary (rounds of a few tokens each)
        let removed: u64 =
            rounds[..cut].iter().map(|r| r.tokens).sum::<u64>() + result.summary_tokens;
        let summary_tokens = message_tokens(conv.counter(), &summary);
        if summary_tokens >= removed {
            return result;
        }
        conv.fold(rounds[cut].start, summary, summary_tokens, all);
        let after = conv.total_tokens() + self.fixed_tokens;
        result.after_tokens = after;
        result.rounds_summarised = cut;
        result.rounds_kept = self.keep_rounds;
        result.summary_tokens = conv.summary_index().map_or(0, |i| conv.message_tokens()[i]);
        result.rounds_reduced = reduced;
        result.under_threshold = after < threshold_tokens;
        result
    }

    /// Appends to the summary `text` every pinned text whose result is not among the
    /// `kept` messages, whole, under its label and call id.
    fn add_pinned(&self, text: &mut String, kept: &[Message]) {
        let in_kept = |id: &str| {
            kept.iter()
                .flat_map(|m| &m.content)
                .any(|b| b.tool_use_id.as_deref() == Some(id))
        };
        let mut first = true;
        for p in self.pinned.iter().filter(|p| !in_kept(&p.call_id)) {
            if first {
                text.push_str(
                    "\n[Kept whole from the summarised rounds: the instructions of the active \
                     skills and the latest result of each tool.]\n",
                );
                first = false;
            }
            let _ = writeln!(text, "--- {} [{}] ---\n{}", p.label, p.call_id, p.text);
        }
    }
}
