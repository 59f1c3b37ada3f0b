//! Shortening a message for display or a log line: cut at a word and ended with `…`.
//! A word is cut inside only when it is long (an identifier or a path: at least
//! [`LONG_PIECE`] columns of it still show), and a number never is: `timeout in 150 s`
//! never reads `timeout in 15`. Word boundaries are Unicode's (UAX #29), so Chinese or
//! Japanese text, which has no spaces, is cut between its characters. Spaces past the
//! limit are not text: a line that fits without them is not cut.

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
    let trimmed = text.trim_end();
    if m.of(trimmed) <= max {
        return Cow::Borrowed(trimmed);
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
    // A number never shows a piece of itself: the cut goes before the whole of it.
    let at = if splits_number(text, end) {
        let start = number_start(text, end);
        last_word_end(text, start, start)
    } else {
        // A long word (an id, a path) shows its start rather than nothing.
        let at = last_word_end(text, end, after);
        if m.of(text[at..end].trim_start()) >= LONG_PIECE {
            end
        } else {
            at
        }
    };
    let kept = text[..at].trim_end();
    let kept = if kept.is_empty() { &text[..end] } else { kept };
    let mut out = String::with_capacity(kept.len() + 1 + ELLIPSIS.len_utf8());
    out.push_str(kept);
    // `3 …`, not `3…`, which would read as a longer number, when there is room.
    if kept.ends_with(|c: char| c.is_ascii_digit()) && m.of(kept) + 2 <= max {
        out.push(' ');
    }
    out.push(ELLIPSIS);
    Cow::Owned(out)
}

/// How much of a word must still show for it to be cut inside (columns or characters).
pub const LONG_PIECE: usize = 8;

/// The last word boundary at or before `end` with some text before it (`end` itself
/// when there is none), judged with a little text after `after` (a boundary can depend
/// on the characters that follow, as in "can't").
fn last_word_end(text: &str, end: usize, after: usize) -> usize {
    let ahead = text[after..]
        .char_indices()
        .nth(4)
        .map_or(text.len(), |(i, _)| after + i);
    let window = &text[..ahead];
    window
        .split_word_bound_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(window.len()).filter(|_| ahead == text.len()))
        .filter(|&i| i <= end)
        .rfind(|&i| !text[..i].trim_end().is_empty())
        .unwrap_or(end)
}

/// Where the figure that `at` falls inside starts (digits and the marks between them:
/// `2026-12-03`, `14:03:27`, `0.62`).
fn number_start(text: &str, at: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_ascii_digit() || matches!(c, '.' | ',' | ':' | '-' | '/'))
        .last()
        .map_or(at, |(i, _)| i)
}

/// Whether a cut at byte `at` falls inside a number (`15|0`, `14:0|3`, `0.|62`).
fn splits_number(text: &str, at: usize) -> bool {
    let before = text[..at].chars().next_back();
    let mut next = text[at..].chars();
    let after = next.next();
    let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
    let joiner = |c: Option<char>| matches!(c, Some('.' | ',' | ':' | '-' | '/'));
    (digit(before) && (digit(after) || (joiner(after) && digit(next.next()))))
        || (joiner(before) && digit(after) && digit(text[..at].chars().nth_back(1)))
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
            let kept = c.trim_end_matches('…').trim_end();
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
    fn a_long_word_shows_its_start_but_a_number_is_never_split() {
        assert_eq!(
            cut_chars("10  leave_balance_deduction, date_format", 30),
            "10  leave_balance_deduction,…"
        );
        assert_eq!(
            cut_chars("checker leave_balance_deduct", 20),
            "checker leave_balan…"
        );
        // Seven letters of a word are not enough to show.
        assert_eq!(cut_chars("dependency TASK_VALIDATOR", 18), "dependency…");
        assert_eq!(cut_chars("timeout in 150 s", 14), "timeout in…");
        assert_eq!(
            cut_chars("at 2026-12-03 14:03:27 it", 21),
            "at 2026-12-03 …"
        );
        assert_eq!(cut_chars("a score of 1234567890123", 20), "a score of…");
        assert_eq!(cut_chars("on 2026-12-03 at", 9), "on…");
        // The mark does not touch a number it would seem to continue.
        assert_eq!(cut_chars("2   3 · 4 err", 7), "2   3 …");
        assert_eq!(cut_chars("2   3 · 4 err", 6), "2   3…");
        // An id that holds digits is a word, not a number: its start shows.
        assert_eq!(
            cut_chars("ids 12345678901_ABCDEFGH", 19),
            "ids 12345678901_AB…"
        );
    }

    #[test]
    fn spaces_past_the_limit_are_not_cut() {
        assert_eq!(cut_chars("2   3     ", 5), "2   3");
        assert_eq!(cut_width("汉字   ", 4), "汉字");
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
