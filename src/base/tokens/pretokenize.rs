//! Hand-written pre-tokenizers for cl100k_base and o200k_base: they split text into
//! exactly the pieces tiktoken's regexes produce, without running a regex.
//!
//! cl100k_base's pattern as tiktoken (and tiktoken-rs, the reference) writes it. Its
//! alternatives are tried in order at each position, and the first that matches wins;
//! `?+`, `++`, `*+` are possessive (they never give characters back):
//!
//! ```text
//! '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ | \p{N}{1,3}+
//!   | ' '?[^\s\p{L}\p{N}]++[\r\n]*+ | \s++$ | \s*[\r\n] | \s+(?!\S) | \s
//! ```
//!
//! o200k_base's, with U = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, W = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
//! and C = `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, quantifiers greedy and backtracking:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?U*W+C? | [^\r\n\p{L}\p{N}]?U+W*C? | \p{N}{1,3}
//!   | ' '?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//! ```
//!
//! The two differ at the end of a text: cl100k_base's `\s++$` keeps trailing white space
//! in one piece even across line breaks. Each `*_end` function below matches one
//! pattern at one position the way the backtracking engine would; tests compare the
//! pieces with tiktoken-rs's regexes on random text.

use super::char_class::{CharClasses, LETTER, LOWER, NUMBER, SPACE, UPPER};

/// The pieces of `text` under cl100k_base (`o200k == false`) or o200k_base.
pub fn pieces(text: &str, o200k: bool) -> Pieces<'_> {
    Pieces {
        text,
        pos: 0,
        o200k,
        classes: CharClasses::get(),
    }
}

/// Iterator over the pre-tokenized pieces of a text.
pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    o200k: bool,
    classes: &'static CharClasses,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let end = if self.o200k {
            self.o200k_end(start)?
        } else {
            self.cl100k_end(start)?
        };
        self.pos = end;
        self.text.get(start..end)
    }
}

impl Pieces<'_> {
    /// The character at byte `i`, the byte after it, and its classes.
    #[inline(always)]
    fn at(&self, i: usize) -> Option<(char, usize, u8)> {
        let b = *self.text.as_bytes().get(i)?;
        if b < 0x80 {
            return Some((b as char, i + 1, self.classes.ascii[b as usize]));
        }
        // `i` is always on a character boundary of valid UTF-8: decode by the lead byte.
        let bytes = self.text.as_bytes();
        let tail = |k: usize| bytes.get(i + k).map(|&t| u32::from(t & 0x3F));
        let lead = u32::from(b);
        let (code, len) = if b < 0xE0 {
            (((lead & 0x1F) << 6) | tail(1)?, 2)
        } else if b < 0xF0 {
            (((lead & 0x0F) << 12) | (tail(1)? << 6) | tail(2)?, 3)
        } else {
            let code = ((lead & 0x07) << 18) | (tail(1)? << 12) | (tail(2)? << 6) | tail(3)?;
            (code, 4)
        };
        let c = char::from_u32(code)?;
        Some((c, i + len, self.classes.of(c)))
    }

    /// The end of the run of characters from `i` whose classes `keep` accepts. ASCII
    /// bytes are read straight from the table; other characters are decoded.
    #[inline(always)]
    fn run_while(&self, mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
        let bytes = self.text.as_bytes();
        loop {
            while let Some(&b) = bytes.get(i) {
                if b >= 0x80 {
                    break;
                }
                if !keep(self.classes.ascii[b as usize]) {
                    return i;
                }
                i += 1;
            }
            match self.at(i) {
                Some((_, next, m)) if keep(m) => i = next,
                _ => return i,
            }
        }
    }

    /// The end of the run of characters from `i` that are in any of `classes`.
    #[inline]
    fn run(&self, i: usize, classes: u8) -> usize {
        self.run_while(i, |m| m & classes != 0)
    }

    /// The end of the run of characters from `i` that are none of `\s`, `\p{L}`, `\p{N}`.
    #[inline]
    fn punct_run(&self, i: usize) -> usize {
        self.run_while(i, |m| m & (SPACE | LETTER | NUMBER) == 0)
    }

    /// The end of the run of `\r`, `\n` (and `/` when `slash`) from `i`.
    #[inline]
    fn breaks(&self, mut i: usize, slash: bool) -> usize {
        while let Some(&b) = self.text.as_bytes().get(i) {
            if b == b'\r' || b == b'\n' || (slash && b == b'/') {
                i += 1;
            } else {
                break;
            }
        }
        i
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i`: the end of the match.
    fn contraction(&self, i: usize) -> Option<usize> {
        let (c, after_quote, _) = self.at(i)?;
        if c != '\'' {
            return None;
        }
        let (c1, after1, _) = self.at(after_quote)?;
        match c1 {
            // Unicode case folding makes ſ (long s) an `s`.
            's' | 'S' | 'ſ' | 't' | 'T' | 'm' | 'M' | 'd' | 'D' => Some(after1),
            'r' | 'R' | 'v' | 'V' | 'l' | 'L' => {
                let (c2, after2, _) = self.at(after1)?;
                let second = match c1 {
                    'r' | 'R' | 'v' | 'V' => matches!(c2, 'e' | 'E'),
                    _ => matches!(c2, 'l' | 'L'),
                };
                second.then_some(after2)
            }
            _ => None,
        }
    }

    /// Whether `c` (with classes `m`) may be the optional
    /// `[^\r\n\p{L}\p{N}]` before a word.
    #[inline]
    fn may_prefix(c: char, m: u8) -> bool {
        m & (LETTER | NUMBER) == 0 && c != '\r' && c != '\n'
    }

    /// `\p{N}{1,3}` at `i`, whose first character is a number.
    fn number_end(&self, first_end: usize) -> usize {
        let mut end = first_end;
        for _ in 0..2 {
            match self.at(end) {
                Some((_, next, m)) if m & NUMBER != 0 => end = next,
                _ => break,
            }
        }
        end
    }

    /// `' '?[^\s\p{L}\p{N}]+[\r\n]*` (with `/` among the breaks for o200k) at `i`.
    fn punct_end(&self, c: char, first_end: usize, m: u8) -> Option<usize> {
        if m & (SPACE | LETTER | NUMBER) == 0 {
            return Some(self.breaks(self.punct_run(first_end), self.o200k));
        }
        if c == ' ' {
            if let Some((_, next, m2)) = self.at(first_end) {
                if m2 & (SPACE | LETTER | NUMBER) == 0 {
                    return Some(self.breaks(self.punct_run(next), self.o200k));
                }
            }
        }
        None
    }

    /// The white-space alternatives at `i`, a white-space character. Up to the last line
    /// break of the run if it has one, except that cl100k_base's `\s++$` first takes a
    /// run that reaches the end of the text whole. Without a line break: the whole run
    /// at the end of the text or when it is one character long; else the run but its
    /// last character, which goes with what follows.
    fn space_end(&self, i: usize) -> usize {
        let mut end = i;
        let mut last_break = None;
        let mut last_start = i;
        let mut count = 0usize;
        while let Some((c, next, m)) = self.at(end) {
            if m & SPACE == 0 {
                break;
            }
            if c == '\r' || c == '\n' {
                last_break = Some(next);
            }
            last_start = end;
            end = next;
            count += 1;
        }
        if end == self.text.len() && !self.o200k {
            return end;
        }
        if let Some(b) = last_break {
            return b;
        }
        if end == self.text.len() || count == 1 {
            return end;
        }
        last_start
    }

    /// The end of the cl100k_base piece starting at `i`.
    fn cl100k_end(&self, i: usize) -> Option<usize> {
        let (c, first_end, m) = self.at(i)?;
        if c == '\'' {
            if let Some(end) = self.contraction(i) {
                return Some(end);
            }
        }
        if m & LETTER != 0 {
            return Some(self.run(first_end, LETTER));
        }
        if Self::may_prefix(c, m) {
            if let Some((_, next, m2)) = self.at(first_end) {
                if m2 & LETTER != 0 {
                    return Some(self.run(next, LETTER));
                }
            }
        }
        if m & NUMBER != 0 {
            return Some(self.number_end(first_end));
        }
        if let Some(end) = self.punct_end(c, first_end, m) {
            return Some(end);
        }
        Some(self.space_end(i))
    }

    /// o200k's `U*W+` from `i`: U* takes the longest run, then gives characters back
    /// until a W can start; W+ then runs as far as it can.
    fn upper_lower(&self, i: usize) -> Option<usize> {
        let mut end = i;
        // the end of the last character of the U run that is also a W
        let mut last_w_end = None;
        while let Some((_, next, m)) = self.at(end) {
            if m & UPPER == 0 {
                break;
            }
            if m & LOWER != 0 {
                last_w_end = Some(next);
            }
            end = next;
        }
        if let Some((_, _, m)) = self.at(end) {
            if m & LOWER != 0 {
                return Some(self.run(end, LOWER));
            }
        }
        // A W inside the U run: W+ matches it alone, since what follows is no W.
        last_w_end
    }

    /// o200k's `U+W*` from `i`.
    fn upper_then_lower(&self, i: usize) -> Option<usize> {
        let (_, next, m) = self.at(i)?;
        if m & UPPER == 0 {
            return None;
        }
        Some(self.run(self.run(next, UPPER), LOWER))
    }

    /// The end of the o200k_base piece starting at `i`.
    fn o200k_end(&self, i: usize) -> Option<usize> {
        let (c, first_end, m) = self.at(i)?;
        let prefix = Self::may_prefix(c, m);
        // A word alternative needs a U or W first, or after the prefix.
        let wordy = |m: u8| m & (UPPER | LOWER) != 0;
        let may_word =
            wordy(m) || (prefix && self.at(first_end).is_some_and(|(_, _, m2)| wordy(m2)));
        let word = may_word.then_some(()).and_then(|()| {
            (prefix.then(|| self.upper_lower(first_end)).flatten())
                .or_else(|| self.upper_lower(i))
                .or_else(|| prefix.then(|| self.upper_then_lower(first_end)).flatten())
                .or_else(|| self.upper_then_lower(i))
        });
        if let Some(end) = word {
            return Some(self.contraction(end).unwrap_or(end));
        }
        if m & NUMBER != 0 {
            return Some(self.number_end(first_end));
        }
        if let Some(end) = self.punct_end(c, first_end, m) {
            return Some(end);
        }
        Some(self.space_end(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tiktoken-rs's cl100k_base pattern (its source spells it inline).
    const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

    fn reference(text: &str, o200k: bool) -> Vec<&str> {
        use std::sync::OnceLock;
        static RES: OnceLock<[fancy_regex::Regex; 2]> = OnceLock::new();
        let res = RES.get_or_init(|| {
            [CL100K, tiktoken_rs::O200K_BASE_PAT_STR]
                .map(|p| fancy_regex::Regex::new(p).expect("tiktoken's pattern compiles"))
        });
        res[o200k as usize]
            .find_iter(text)
            .map(|m| m.expect("no backtrack limit on short text").as_str())
            .collect()
    }

    fn check(text: &str) {
        for o200k in [false, true] {
            let ours: Vec<&str> = pieces(text, o200k).collect();
            assert_eq!(ours, reference(text, o200k), "o200k={o200k} on {text:?}");
        }
    }

    #[test]
    fn pieces_match_the_regex_on_hand_picked_text() {
        for text in [
            "",
            "hello world",
            "  two spaces then word",
            "trailing spaces   ",
            "I'm sure they'll say it's fine, we've 'RE'ady d'D ſ's x'ſ",
            "HELLOworld HelloWorld hELLO ǅungla ABCdefGHI",
            "12345 1 22 333 4444 ²³¹ Ⅷ½",
            "tabs\tand\u{a0}nbsp\u{3000}全角 and\u{2003}em",
            "line\n\n  indented\r\n\r\n\tx \n",
            "punct!!! ?? ... ,\n/usr/bin ./a //b \n/",
            "Transformer架构通过自注意力机制实现了并行计算，去噪采样公式 x_{t-1} = ...",
            "नमस्ते दुनिया कैसे हो",
            "e\u{301}cole \u{301}\u{302}a a\u{301}B\u{301}C",
            "{\"asset_id\": \"MATH_000001_ab12\", \"confidence\": 0.93}\n",
            "🚗🅿️ emoji 👩‍👩‍👧 mixed",
        ] {
            check(text);
        }
    }

    #[test]
    fn pieces_match_the_regex_on_random_text() {
        // Characters from every class and the edges between them.
        let alphabet: Vec<char> =
            "aZ'sStTrReEvVlLmMdDſ 9²Ⅷ\n\r\t\u{a0}\u{3000}/.,!-_\"{}去噪\u{301}ǅʰ🚗é  \n"
                .chars()
                .collect();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let len = rng.usize(0..24);
            let text: String = (0..len)
                .map(|_| alphabet[rng.usize(0..alphabet.len())])
                .collect();
            check(&text);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 512,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Arbitrary Unicode (every category, unassigned code points, 4-byte characters).
        #[test]
        fn pieces_match_the_regex_on_arbitrary_unicode(text in proptest::prelude::any::<String>()) {
            check(&text);
        }

        /// Arbitrary mixes of the characters where the alternatives meet.
        #[test]
        fn pieces_match_the_regex_on_boundary_characters(
            text in "[a-zA-Z0-9 \\t\\r\\n'sStTdDmMlLrReEvVſ.,/\"{}\u{a0}\u{3000}\u{85}\u{2028}\u{301}\u{1c5}\u{2b0}\u{6e9}去٣²Ⅷ🚗]{0,40}"
        ) {
            check(&text);
        }
    }
}
