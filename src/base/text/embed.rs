//! The built-in text embedding, which needs no network: words (and, for Chinese,
//! characters and character pairs) are hashed into [`EMBEDDING_DIMS`] signed buckets
//! with a sublinear weight, then the vector is normalised. Texts that share their words
//! score near 1, texts about different things near 0.

use std::collections::HashMap;

/// Dimensions of an embedding.
pub const EMBEDDING_DIMS: usize = 768;

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x3040..=0x30FF | 0xAC00..=0xD7AF)
}

/// FNV-1a over the bytes of a feature, with a per-kind salt.
pub(crate) fn feature_hash(salt: u64, bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ salt;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // Final mix so nearby hashes spread over the buckets.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// Words shorter than this (Latin) carry little meaning and are skipped.
const MIN_WORD_CHARS: usize = 2;

/// Calls `f` with each feature of `text`: lowercased Latin words, Chinese (and other
/// CJK) characters and character pairs.
pub(crate) fn features(text: &str, mut f: impl FnMut(u64, &[u8])) {
    let mut word = String::new();
    let mut prev_cjk: Option<char> = None;
    let flush = |word: &mut String, f: &mut dyn FnMut(u64, &[u8])| {
        if word.chars().count() >= MIN_WORD_CHARS {
            f(1, word.as_bytes());
        }
        word.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut word, &mut f);
            let mut buf = [0u8; 8];
            let s = c.encode_utf8(&mut buf[..4]).len();
            f(2, &buf[..s]);
            if let Some(p) = prev_cjk {
                let n = p.encode_utf8(&mut buf[..4]).len();
                let m = c.encode_utf8(&mut buf[n..n + 4]).len();
                f(3, &buf[..n + m]);
            }
            prev_cjk = Some(c);
        } else {
            prev_cjk = None;
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else {
                flush(&mut word, &mut f);
            }
        }
    }
    flush(&mut word, &mut f);
}

/// The built-in embedding of `text`.
pub fn builtin_embedding(text: &str) -> Vec<f32> {
    let mut counts: HashMap<u64, u32, rustc_hash::FxBuildHasher> = HashMap::default();
    features(text, |salt, bytes| {
        *counts.entry(feature_hash(salt, bytes)).or_insert(0) += 1;
    });
    let mut v = vec![0f32; EMBEDDING_DIMS];
    for (h, n) in counts {
        let w = 1.0 + (n as f32).ln();
        let i = (h % EMBEDDING_DIMS as u64) as usize;
        if h >> 63 == 0 {
            v[i] += w;
        } else {
            v[i] -= w;
        }
    }
    normalise(&mut v);
    v
}

pub(crate) fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
