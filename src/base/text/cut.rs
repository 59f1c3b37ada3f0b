//! Shortening a message for display or a log line: cut at a word, never inside one, and
//! ended with `…`. Only a single word longer than the whole limit is cut inside (there is
//! no word boundary to cut at). Word boundaries are Unicode's (UAX #29), so Chinese or
//! Japanese text, which has no spaces, is cut between its characters.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The mark ending a cut text.
pub const ELLIPSIS: char = '…';

/// How a limit is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Characters (Unicode scalar values).
    Chars,
    /// Terminal display columns (a Chinese character is two).
    Width,
}

impl Measure {
    fn of(self, s: &str) -> usize {
        match self {
            Measure::Chars => s.chars().count(),
            Measure::Width => s.width(),
        }
    }
}

/// `text` at most `max` characters long, the `…` included: cut at a word when longer.
pub fn cut_chars(text: &str, max: usize) -> Cow<'_, str> {
    cut(text, max, Measure::Chars)
}

/// `text` at most `max` display columns wide, the `…` included: cut at a word when wider.
pub fn cut_width(text: &str, max: usize) -> Cow<'_, str> {
    cut(text, max, Measure::Width)
}

/// `text` within `max` (measured by `m`, the `…` included): unchanged when it fits, else
/// its longest start that ends at a word and fits with the `…` after it (trailing spaces
/// dropped). A first word longer than the room is cut inside, between graphemes.
pub fn cut(text: &str, max: usize, m: Measure) -> Cow<'_, str> {
    if m.of(text) <= max {
        return Cow::Borrowed(text);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let room = max - 1;
    // The longest start of whole graphemes within the room.
    let mut used = 0;
    let mut end = 0;
    let mut after = text.len();
    for (i, g) in text.grapheme_indices(true) {
        let n = m.of(g);
        if used + n > room {
            after = (i + g.len()).min(text.len());
            break;
        }
        used += n;
        end = i + g.len();
    }
    // Word boundaries up to the cut, judged with a little text after it (a boundary
    // can depend on the characters that follow, as in "can't").
    let ahead = text[after..]
        .char_indices()
        .nth(4)
        .map_or(text.len(), |(i, _)| after + i);
    let window = &text[..ahead];
    let at = window
        .split_word_bound_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(window.len()).filter(|_| ahead == text.len()))
        .filter(|&i| i <= end)
        .rfind(|&i| !text[..i].trim_end().is_empty())
        .unwrap_or(end);
    let kept = text[..at].trim_end();
    let kept = if kept.is_empty() { &text[..end] } else { kept };
    let mut out = String::with_capacity(kept.len() + ELLIPSIS.len_utf8());
    out.push_str(kept);
    out.push(ELLIPSIS);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_fits_is_left_alone() {
        assert_eq!(cut_chars("short enough", 12), "short enough");
        assert!(matches!(cut_chars("short", 80), Cow::Borrowed(_)));
        assert_eq!(cut_width("汉字", 4), "汉字");
    }

    #[test]
    fn a_long_text_is_cut_after_the_last_whole_word() {
        let t = "the provider answered 429 every time";
        assert_eq!(cut_chars(t, 20), "the provider…");
        assert_eq!(cut_chars(t, 26), "the provider answered 429…");
        // A cut right before a space keeps the word before it.
        assert_eq!(cut_chars(t, 13), "the provider…");
        for max in 1..t.len() {
            let c = cut_chars(t, max);
            assert!(c.chars().count() <= max, "{max}: {c}");
            assert!(c.ends_with('…'), "{max}: {c}");
            let kept = c.trim_end_matches('…');
            if max > 4 {
                // Never a piece of a word: what is kept is whole words of the text.
                assert!(
                    t.starts_with(kept) && t[kept.len()..].starts_with(' '),
                    "{max}: {c:?}"
                );
            }
        }
    }

    #[test]
    fn only_a_word_longer_than_the_limit_is_cut_inside() {
        assert_eq!(cut_chars("supercalifragilistic is long", 8), "superca…");
        assert_eq!(cut_chars("abcdef", 1), "…");
        assert_eq!(cut_chars("abcdef", 0), "");
        assert_eq!(cut_chars("   abcdefgh", 6), "   ab…");
    }

    #[test]
    fn punctuation_and_apostrophes_are_not_split_from_their_word() {
        assert_eq!(cut_chars("it can't be done today", 8), "it…");
        assert_eq!(
            cut_chars("failed: connection reset by peer", 20),
            "failed: connection…"
        );
        assert_eq!(cut_chars("a 3.14159 value", 7), "a…");
    }

    #[test]
    fn text_without_spaces_is_cut_between_characters_and_by_width() {
        // Each Chinese character is a word of its own; two columns wide.
        assert_eq!(cut_chars("帮我制定备考计划", 5), "帮我制定…");
        assert_eq!(cut_width("帮我制定备考计划", 9), "帮我制定…");
        assert_eq!(cut_width("帮我制定备考计划", 8), "帮我制…");
        assert_eq!(cut_width("plan 帮我制定备考计划", 10), "plan 帮我…");
        // Width, not characters: the limit holds for the columns.
        for max in 1..20 {
            assert!(cut_width("plan 帮我制定备考计划", max).width() <= max);
        }
    }

    #[test]
    fn graphemes_are_never_split() {
        let t = "e\u{301}e\u{301}e\u{301} 👩‍👩‍👧 done";
        for max in 1..12 {
            let c = cut_chars(t, max);
            let kept = c.trim_end_matches('…');
            assert!(t.starts_with(kept), "{max}: {c:?}");
            assert!(
                t[kept.len()..].is_empty()
                    || t.grapheme_indices(true).any(|(i, _)| i == kept.len()),
                "{max}: {c:?}"
            );
        }
    }
}
