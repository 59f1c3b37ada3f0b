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

use std::collections::HashMap;
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

    /// Whether `conv` is at or above the threshold.
    pub fn should_compress(&self, conv: &Conversation) -> bool {
        conv.total_tokens() >= self.threshold_tokens()
    }

    /// Round summaries held in the cache.
    pub fn cached_summaries(&self) -> usize {
        self.cache.len()
    }

    /// Compresses `conv` when [`should_compress`](Self::should_compress) says so.
    pub fn maybe_compress(&mut self, conv: &mut Conversation) -> Option<Compression> {
        self.should_compress(conv).then(|| self.compress(conv))
    }

    /// Replaces every round but the last `keep_rounds` by the summary message (see the
    /// module). With `keep_rounds` rounds or fewer nothing changes.
    pub fn compress(&mut self, conv: &mut Conversation) -> Compression {
        let before = conv.total_tokens();
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
        let (text, reduced) = render(&all, self.summary_budget);
        let summary = Message::user(vec![text_block(text)]);
        // never trade messages for a larger summary (rounds of a few tokens each)
        let removed: u64 =
            rounds[..cut].iter().map(|r| r.tokens).sum::<u64>() + result.summary_tokens;
        let summary_tokens = message_tokens(conv.counter(), &summary);
        if summary_tokens >= removed {
            return result;
        }
        conv.fold(rounds[cut].start, summary, summary_tokens, all);
        let after = conv.total_tokens();
        result.after_tokens = after;
        result.rounds_summarised = cut;
        result.rounds_kept = self.keep_rounds;
        result.summary_tokens = conv.summary_index().map_or(0, |i| conv.message_tokens()[i]);
        result.rounds_reduced = reduced;
        result.under_threshold = after < threshold_tokens;
        result
    }
}
