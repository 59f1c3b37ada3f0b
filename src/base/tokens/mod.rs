//! Token counting. tiktoken-rs is the reference; the hot path splits text with a
//! hand-written pre-tokenizer ([`pretokenize`]) and merges each piece with GitHub's `bpe`
//! (through `bpe-openai`'s tables), caching counts of pieces and lines. Counts are
//! identical to tiktoken-rs's (checked in tests and by `plexus bench tokens`), several
//! times faster.

use std::hash::BuildHasher;

use serde::{Deserialize, Serialize};

mod char_class;
mod pretokenize;

/// A BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-3.5 / GPT-4 encoding, the default.
    #[default]
    Cl100kBase,
    /// GPT-4o / o-series encoding.
    O200kBase,
}

impl Encoding {
    /// The encoding a model uses: o200k_base for gpt-4o, gpt-4.1, gpt-5, o1/o3/o4 models;
    /// cl100k_base otherwise.
    pub fn for_model(model: &str) -> Encoding {
        let m = model.to_ascii_lowercase();
        let o200k = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "o1",
            "o3",
            "o4",
            "chatgpt-4o",
            "gpt-oss",
        ];
        if o200k.iter().any(|p| m.starts_with(p)) {
            Encoding::O200kBase
        } else {
            Encoding::Cl100kBase
        }
    }

    fn tokenizer(self) -> &'static bpe_openai::Tokenizer {
        match self {
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
            Encoding::O200kBase => bpe_openai::o200k_base(),
        }
    }

    /// Counts tokens of `text` (fast path, identical to tiktoken).
    ///
    /// The text is split by the encoding's pre-tokenizer exactly as tiktoken splits it;
    /// each piece is encoded on its own, so the count of a piece never depends on its
    /// neighbours. Counts of pieces (words, JSON keys, punctuation runs) are cached per
    /// thread, which skips the byte-pair merge for text seen before; whole lines are
    /// cached from the second time they are seen (a first sighting only leaves a
    /// 64-bit fingerprint, so text that never repeats costs no copies).
    pub fn count(self, text: &str) -> usize {
        let tok = self.tokenizer();
        let e = self as usize;
        COUNT_CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let cache = &mut *cache;
            if cache.pieces[e].len() + cache.segments[e].len() + cache.seen.len() > CACHE_LIMIT {
                cache.pieces[e].clear();
                cache.segments[e].clear();
                cache.seen.clear();
            }
            segments(text)
                .map(|seg| {
                    if seg.len() > SEGMENT_CACHE_MAX_LEN {
                        return count_pieces(tok, self, seg, &mut cache.pieces[e]);
                    }
                    if let Some(n) = cache.segments[e].get(seg) {
                        return *n as usize;
                    }
                    let n = count_pieces(tok, self, seg, &mut cache.pieces[e]);
                    if !cache
                        .seen
                        .insert(rustc_hash::FxBuildHasher.hash_one((self, seg)))
                    {
                        cache.segments[e].insert(seg.into(), n as u32);
                    }
                    n
                })
                .sum()
        })
    }

    /// Loads the encoder and the pre-tokenizer's tables on a background thread, so the
    /// first count of a run does not wait for them (loading takes tens of milliseconds).
    pub fn preload(self) {
        let _ = std::thread::Builder::new()
            .name("plexus-tokens".into())
            .spawn(move || {
                let _ = self.tokenizer();
                let _ = char_class::CharClasses::get();
            });
    }

    /// Counts with bpe-openai directly, without the piece cache (for benchmarks).
    pub fn count_uncached(self, text: &str) -> usize {
        self.tokenizer().count(text)
    }

    /// Counts with tiktoken-rs (the reference; slower). Text is text: a special token's
    /// spelling such as `<|endoftext|>` in a prompt counts as the ordinary tokens it is
    /// made of, as the providers' APIs treat it.
    pub fn count_reference(self, text: &str) -> usize {
        match self {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton()
                .encode_ordinary(text)
                .len(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton()
                .encode_ordinary(text)
                .len(),
        }
    }
}

/// Pieces up to this long are cached from their first sighting.
const PIECE_CACHE_MAX_LEN: usize = 32;
/// Longer pieces up to this long are cached from their second sighting; longer ones not.
const LONG_PIECE_MAX_LEN: usize = 512;

/// Segments (lines, see [`segments`]) longer than this are not cached.
const SEGMENT_CACHE_MAX_LEN: usize = 512;
/// The caches are emptied when they hold more entries than this together.
const CACHE_LIMIT: usize = 200_000;

type CountMap = rustc_hash::FxHashMap<Box<str>, u32>;

/// Counts of pieces: short ones keyed inline, longer ones by their text.
#[derive(Default)]
struct PieceCounts {
    short: rustc_hash::FxHashMap<u128, u32>,
    long: CountMap,
    seen_long: rustc_hash::FxHashSet<u64>,
}

impl PieceCounts {
    fn len(&self) -> usize {
        self.short.len() + self.long.len() + self.seen_long.len()
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
        self.seen_long.clear();
    }
}

/// Per-thread counts of pieces and of whole segments, one map per encoding, and the
/// fingerprints of segments seen once.
#[derive(Default)]
struct CountCache {
    pieces: [PieceCounts; 2],
    segments: [CountMap; 2],
    seen: rustc_hash::FxHashSet<u64>,
}

thread_local! {
    static COUNT_CACHE: std::cell::RefCell<CountCache> = std::cell::RefCell::new(CountCache::default());
}

/// Counts one segment piece by piece, with cached piece counts.
fn count_pieces(
    tok: &bpe_openai::Tokenizer,
    enc: Encoding,
    text: &str,
    pieces: &mut PieceCounts,
) -> usize {
    pretokenize::pieces(text, enc == Encoding::O200kBase)
        .map(|piece| {
            let bytes = piece.as_bytes();
            // Every byte is a token.
            if bytes.len() == 1 {
                return 1;
            }
            if let Some(key) = inline_key(bytes) {
                return *pieces
                    .short
                    .entry(key)
                    .or_insert_with(|| tok.bpe.count(bytes) as u32)
                    as usize;
            }
            if bytes.len() > LONG_PIECE_MAX_LEN {
                return tok.bpe.count(bytes);
            }
            if let Some(n) = pieces.long.get(piece) {
                return *n as usize;
            }
            let n = tok.bpe.count(bytes);
            // Long pieces (a Chinese clause is one piece) are kept from their second
            // sighting on, like lines: unique ones cost no copies.
            if bytes.len() <= PIECE_CACHE_MAX_LEN
                || !pieces
                    .seen_long
                    .insert(rustc_hash::FxBuildHasher.hash_one(piece))
            {
                pieces.long.insert(piece.into(), n as u32);
            }
            n
        })
        .sum()
}

/// A piece of up to 15 bytes packed into one integer (its bytes, then its length in the
/// last byte), so that looking it up touches no memory but the table's.
fn inline_key(bytes: &[u8]) -> Option<u128> {
    if bytes.len() > 15 {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..bytes.len()].copy_from_slice(bytes);
    buf[15] = bytes.len() as u8;
    Some(u128::from_le_bytes(buf))
}

/// Splits text where the cl100k_base and o200k_base pre-tokenizers always end a piece:
/// right after the last line break of a whitespace run (the `\s*[\r\n]+` alternative wins
/// there, and no other alternative crosses a line break), unless a `/` follows (o200k's
/// punctuation alternative may run on over `[\r\n/]*`) or the white space runs to the
/// end of the text (cl100k_base's `\s++$` takes it whole). Counting each segment on its own
/// therefore gives exactly the count of the whole text, and repeated lines are cached.
pub fn segments(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut from = 0;
        while let Some(at) = memchr::memchr2(b'\n', b'\r', &rest.as_bytes()[from..]) {
            let i = from + at;
            // extend over the whole whitespace run, remembering its last line break
            let mut last_break = i + 1;
            let mut end = i + 1;
            for (j, d) in rest[end..].char_indices() {
                if !d.is_whitespace() {
                    break;
                }
                end = i + 1 + j + d.len_utf8();
                if d == '\n' || d == '\r' {
                    last_break = end;
                }
            }
            // cl100k_base's `\s++$` keeps white space that runs to the end in one piece
            if end < rest.len() && !rest[last_break..].starts_with('/') {
                let (seg, tail) = rest.split_at(last_break);
                rest = tail;
                return Some(seg);
            }
            from = end;
        }
        let seg = rest;
        rest = "";
        Some(seg)
    })
}

/// Counts tokens for one provider: an encoding plus a safety factor for vendors whose
/// tokenizer differs (seed 003: +15% for Claude).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenCounter {
    /// Encoding used.
    pub encoding: Encoding,
    /// Multiplier applied to counts (1.0 for OpenAI models, 1.15 for Claude).
    pub safety_factor: f64,
}

impl Default for TokenCounter {
    fn default() -> Self {
        TokenCounter {
            encoding: Encoding::Cl100kBase,
            safety_factor: 1.0,
        }
    }
}

impl TokenCounter {
    /// Counter for a model name: its encoding, and +15% for Claude models.
    pub fn for_model(model: &str) -> TokenCounter {
        let factor = if model.to_ascii_lowercase().contains("claude") {
            1.15
        } else {
            1.0
        };
        TokenCounter {
            encoding: Encoding::for_model(model),
            safety_factor: factor,
        }
    }

    /// Tokens of `text`, with the safety factor applied (rounded up).
    pub fn count(&self, text: &str) -> u64 {
        self.scaled(self.encoding.count(text))
    }

    /// Tokens of a text made of `head` and a tail the encoding counted `tail` tokens
    /// of, on its own. Exact only where the pre-tokenizer splits the whole text between
    /// the two, which the caller knows (punctuation before, a letter after).
    pub fn count_with_tail(&self, head: &str, tail: usize) -> u64 {
        self.scaled(self.encoding.count(head) + tail)
    }

    /// `n` tokens of the encoding with the safety factor applied (rounded up).
    fn scaled(&self, n: usize) -> u64 {
        let n = n as u64;
        if self.safety_factor == 1.0 {
            n
        } else {
            (n as f64 * self.safety_factor).ceil() as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_counts_equal_tiktoken() {
        let samples = [
            "",
            "hello world",
            "Transformer架构通过自注意力机制实现了并行计算，去噪采样公式 x_{t-1} = ...",
            "{\"output\": {\"atoms\": [{\"asset_id\": \"MATH_DIFF_01\", \"confidence\": 0.93}]}}\n\n\t  ",
            "   leading spaces and 'quotes' don't   matter 12345 67890 ¡émigré! 🚗🅿️",
            "fn main() {\n    println!(\"{}\", 1 + 2);\n}\n",
            "a prompt that spells <|endoftext|> and <|fim_prefix|> as text",
        ];
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
            for s in samples {
                assert_eq!(enc.count(s), enc.count_reference(s), "{enc:?} on {s:?}");
            }
        }
    }

    #[test]
    fn cached_counts_stay_identical_on_repeated_and_long_pieces() {
        let text = format!(
            "{} {} {}",
            "the quick brown fox jumps over the lazy dog, ".repeat(50),
            "1234567890".repeat(20),
            " ".repeat(200)
        );
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
            for _ in 0..3 {
                assert_eq!(enc.count(&text), enc.count_reference(&text));
            }
        }
    }

    #[test]
    fn segmented_counts_equal_tiktoken_on_multiline_text() {
        let pretty = serde_json::to_string_pretty(&serde_json::json!({
            "output": {"atoms": [{"asset_id": "MATH_X_01", "content": {"a": "去噪采样 x_{t-1} = f(x_t)", "b": "line\nbreak"}}], "summary": "ok"}
        }))
        .unwrap_or_default();
        let samples = [
            pretty.as_str(),
            "a\n\nb\r\n\r\n  c\n \n\t d",
            "end with newline\n",
            "\n\n\nstart with newlines",
            "path,\n/usr/bin and ,\n\n/x",
            "spaces   \n   \u{3000}\u{3000}全角\n  \n",
            "crlf\r\n\r\nnext\rold mac\r",
            "white space to the end\n\n\t  ",
            "x\n \n   ",
        ];
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
            for s in samples {
                assert_eq!(segments(s).collect::<String>(), s);
                for _ in 0..2 {
                    assert_eq!(enc.count(s), enc.count_reference(s), "{enc:?} on {s:?}");
                }
            }
        }
    }

    #[test]
    fn random_texts_count_like_tiktoken() {
        let alphabet: Vec<char> = "ab Z9 0\n\r\t/,.:;'\"{}[]-_ 去噪\u{3000}é🚗  \n\n  "
            .chars()
            .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..1500 {
            let mut s = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
                assert_eq!(enc.count(&s), enc.count_reference(&s), "{enc:?} on {s:?}");
            }
        }
    }

    #[test]
    fn model_names_pick_encodings_and_factors() {
        assert_eq!(Encoding::for_model("gpt-4o-mini"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("gpt-4-turbo"), Encoding::Cl100kBase);
        let c = TokenCounter::for_model("claude-sonnet-4");
        assert_eq!(c.safety_factor, 1.15);
        assert_eq!(c.count("hello world"), (2.0f64 * 1.15).ceil() as u64);
    }
}
