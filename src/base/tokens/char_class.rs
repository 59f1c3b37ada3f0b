//! The Unicode character classes the cl100k_base and o200k_base pre-tokenizers use,
//! taken from regex-syntax: the same tables the regex engines of tiktoken-rs and
//! bpe-openai compile their patterns from, so a class here holds exactly the characters
//! the reference regexes would match.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// `\p{L}`: letters.
pub const LETTER: u8 = 1;
/// `\p{N}`: numbers.
pub const NUMBER: u8 = 2;
/// `\s`: Unicode white space.
pub const SPACE: u8 = 4;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: what may open a word.
pub const UPPER: u8 = 8;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: what may continue a word.
pub const LOWER: u8 = 16;

/// Each class as the regex spells it, with its bit.
const CLASSES: [(&str, u8); 5] = [
    (r"\p{L}", LETTER),
    (r"\p{N}", NUMBER),
    (r"\s", SPACE),
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UPPER),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LOWER),
];

/// Code points per block of the two-level table.
const BLOCK: usize = 128;
/// One past the largest code point.
const CODE_POINTS: usize = 0x11_0000;

/// A two-level table from code point to a bit set of the classes above. Blocks of 128
/// code points that are alike are stored once (about 60 KiB in all).
pub struct CharClasses {
    /// The classes of ASCII characters, for a one-step lookup.
    pub ascii: [u8; 128],
    index: Vec<u16>,
    blocks: Vec<[u8; BLOCK]>,
}

impl CharClasses {
    /// The table, built on first use (a few milliseconds).
    pub fn get() -> &'static CharClasses {
        static TABLE: OnceLock<CharClasses> = OnceLock::new();
        TABLE.get_or_init(CharClasses::build)
    }

    /// The classes of `c`, as a bit set.
    #[inline]
    pub fn of(&self, c: char) -> u8 {
        let c = c as usize;
        let block = self.index[c / BLOCK] as usize;
        self.blocks[block][c % BLOCK]
    }

    fn build() -> CharClasses {
        let mut flat = vec![0u8; CODE_POINTS];
        for (pattern, bit) in CLASSES {
            for (start, end) in class_ranges(pattern) {
                for b in &mut flat[start as usize..=end as usize] {
                    *b |= bit;
                }
            }
        }
        let mut index = Vec::with_capacity(CODE_POINTS / BLOCK);
        let mut blocks: Vec<[u8; BLOCK]> = Vec::new();
        let mut seen = rustc_hash::FxHashMap::default();
        for chunk in flat.chunks_exact(BLOCK) {
            let mut block = [0u8; BLOCK];
            block.copy_from_slice(chunk);
            let next = blocks.len() as u16;
            let at = *seen.entry(block).or_insert_with(|| {
                blocks.push(block);
                next
            });
            index.push(at);
        }
        let mut ascii = [0u8; 128];
        ascii.copy_from_slice(&flat[..128]);
        CharClasses {
            ascii,
            index,
            blocks,
        }
    }
}

/// The code point ranges of a one-class pattern, as regex-syntax parses it.
pub fn class_ranges(pattern: &str) -> Vec<(char, char)> {
    let hir = regex_syntax::parse(pattern).expect("a built-in character class parses");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect(),
        // A class of one code point is parsed as a literal.
        HirKind::Literal(lit) => std::str::from_utf8(&lit.0)
            .ok()
            .and_then(|s| s.chars().next())
            .map(|c| vec![(c, c)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_agrees_with_regex_syntax_on_every_code_point() {
        let table = CharClasses::get();
        for (pattern, bit) in CLASSES {
            let ranges = class_ranges(pattern);
            assert!(ranges.len() > 3, "{pattern} parsed to a class");
            for c in (0..CODE_POINTS as u32).filter_map(char::from_u32) {
                let in_table = table.of(c) & bit != 0;
                let in_class = ranges
                    .binary_search_by(|&(start, end)| {
                        if end < c {
                            std::cmp::Ordering::Less
                        } else if start > c {
                            std::cmp::Ordering::Greater
                        } else {
                            std::cmp::Ordering::Equal
                        }
                    })
                    .is_ok();
                assert_eq!(in_table, in_class, "{pattern} on U+{:04X}", c as u32);
            }
        }
    }

    #[test]
    fn ascii_classes_are_the_usual_ones() {
        let t = CharClasses::get();
        assert_eq!(t.of('a'), LETTER | LOWER);
        assert_eq!(t.of('Q'), LETTER | UPPER);
        assert_eq!(t.of('7'), NUMBER);
        assert_eq!(t.of(' ') & SPACE, SPACE);
        assert_eq!(t.of('\n') & SPACE, SPACE);
        assert_eq!(t.of('\''), 0);
        assert_eq!(t.of('去'), LETTER | UPPER | LOWER);
    }
}
