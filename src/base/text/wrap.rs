//! Width-aware line breaking and truncation of sanitized text, in display columns.
//!
//! Text is measured in clusters: a base character with the zero-width characters after it
//! (combining marks, variation selectors), emoji joined by ZWJ or a skin-tone modifier,
//! and regional-indicator pairs. A cluster is never split, and its width is what
//! `unicode-width` reports for it, so wide characters (Chinese: two columns) stay whole.

use std::ops::Range;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Shown at the end of a truncated cell.
pub const ELLIPSIS: char = '…';

/// Splits an already sanitized line into byte ranges that each fit `width` columns.
///
/// The ranges are contiguous and cover the whole line. A row breaks after its last space
/// when that space lies past the first third of the row (a word shorter than two thirds
/// of the row is never split); otherwise it breaks hard, before
/// the first cluster that does not fit (a wide character never straddles two rows). A
/// cluster wider than `width` gets a row of its own. `width == 0` gives one range for the
/// whole line; an empty line gives one empty range.
pub fn wrap_ranges(line: &str, width: u16) -> Vec<Range<usize>> {
    let width = usize::from(width);
    // Fits on one row: a character never takes more columns than it has bytes.
    if width == 0 || line.len() <= width || unicode_width::UnicodeWidthStr::width(line) <= width {
        return std::iter::once(0..line.len()).collect();
    }
    let mut rows = Vec::new();
    let mut start = 0;
    let mut col = 0;
    // The last space of the current row: (byte after it, its column, column after it).
    let mut space: Option<(usize, usize, usize)> = None;
    for cluster in clusters(line) {
        while col > 0 && col + cluster.width > width {
            match space
                .take()
                .filter(|&(_, space_col, _)| space_col * 3 >= width)
            {
                Some((after, _, after_col)) => {
                    rows.push(start..after);
                    start = after;
                    col -= after_col;
                }
                None => {
                    rows.push(start..cluster.start);
                    start = cluster.start;
                    col = 0;
                }
            }
        }
        let space_col = col;
        col += cluster.width;
        if line.as_bytes().get(cluster.start) == Some(&b' ') {
            space = Some((cluster.end, space_col, col));
        }
    }
    rows.push(start..line.len());
    rows
}

/// The longest prefix of `s` that fits in `width` columns, and its width.
pub fn truncate_to_width(s: &str, width: usize) -> (&str, usize) {
    let mut col = 0;
    let mut end = 0;
    for cluster in clusters(s) {
        if col + cluster.width > width {
            break;
        }
        col += cluster.width;
        end = cluster.end;
    }
    (&s[..end], col)
}

/// `s` made exactly `width` columns wide: padded with spaces, or cut at a word (the one
/// cutter, [`crate::base::text::cut::cut_width`]) and ended with `…`.
pub fn pad_or_truncate(s: &str, width: usize) -> String {
    let shown = crate::base::text::cut::cut_width(s, width);
    let used: usize = clusters(&shown).map(|c| c.width).sum();
    let mut out = String::with_capacity(shown.len() + width.saturating_sub(used));
    out.push_str(&shown);
    // A wide character that did not fit leaves a gap.
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// A run of characters drawn as one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cluster {
    start: usize,
    end: usize,
    width: usize,
}

const ZWJ: char = '\u{200D}';

fn is_regional_indicator(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

fn is_emoji_modifier(c: char) -> bool {
    ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
}

/// Iterates the clusters of `s` (an approximation of extended grapheme clusters that is
/// good for terminal text).
fn clusters(s: &str) -> impl Iterator<Item = Cluster> + '_ {
    let mut chars = s.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = chars.next()?;
        let mut prev = first;
        let mut regional_pair_open = is_regional_indicator(first);
        let mut end = start + first.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            let joins = c.width().unwrap_or(0) == 0
                || prev == ZWJ
                || is_emoji_modifier(c)
                || (regional_pair_open && is_regional_indicator(c));
            if !joins {
                break;
            }
            regional_pair_open = false;
            prev = c;
            end = i + c.len_utf8();
            chars.next();
        }
        Some(Cluster {
            start,
            end,
            width: s[start..end].width(),
        })
    })
}

/// `s` in at most `width` columns, cut in the middle (`TASK_VAULT…CHECK_01`) so that
/// ids differing only at their end stay apart.
pub fn middle_cut(s: &str, width: usize) -> String {
    let total: usize = clusters(s).map(|c| c.width).sum();
    if total <= width {
        return s.to_string();
    }
    if width < 5 {
        return truncate_to_width(s, width).0.to_string();
    }
    let tail_w = (width - 1) / 2;
    let head_w = width - 1 - tail_w;
    let (head, _) = truncate_to_width(s, head_w);
    // The tail: the last clusters that fit in `tail_w`.
    let cs: Vec<_> = clusters(s).collect();
    let mut w = 0;
    let mut start = s.len();
    for c in cs.iter().rev() {
        if w + c.width > tail_w {
            break;
        }
        w += c.width;
        start = c.start;
    }
    format!("{head}{ELLIPSIS}{}", &s[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rows(line: &str, width: u16) -> Vec<&str> {
        wrap_ranges(line, width)
            .into_iter()
            .map(|r| &line[r])
            .collect()
    }

    /// Every row fits (unless it is one oversized cluster) and the rows cover the line.
    fn check(line: &str, width: u16) {
        let ranges = wrap_ranges(line, width);
        let mut next = 0;
        for r in &ranges {
            assert_eq!(r.start, next, "rows of {line:?} are not contiguous");
            next = r.end;
            let row = &line[r.clone()];
            let w = row.width();
            let oversized = clusters(row).count() == 1;
            assert!(
                w <= usize::from(width) || oversized,
                "row {row:?} is {w} wide, more than {width}"
            );
        }
        assert_eq!(next, line.len());
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // One range is the point of these cases.
    fn zero_width_and_empty_lines() {
        assert_eq!(wrap_ranges("hello", 0), vec![0..5]);
        assert_eq!(wrap_ranges("", 10), vec![0..0]);
        assert_eq!(wrap_ranges("", 0), vec![0..0]);
    }

    #[test]
    fn exact_fit_is_one_row() {
        assert_eq!(rows("abcde", 5), vec!["abcde"]);
        assert_eq!(rows("中文字", 6), vec!["中文字"]);
        assert_eq!(rows("abcdef", 5), vec!["abcde", "f"]);
    }

    #[test]
    fn hard_break_without_spaces() {
        assert_eq!(rows("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        check("abcdefghij", 4);
    }

    #[test]
    fn breaks_after_a_space_past_the_first_third() {
        assert_eq!(rows("aaaaaaa bb cc", 10), vec!["aaaaaaa ", "bb cc"]);
        assert_eq!(rows("123456789 abc", 10), vec!["123456789 ", "abc"]);
    }

    #[test]
    fn early_space_is_not_used() {
        // The space at column 2 is in the first third of a 10-column row.
        assert_eq!(rows("ab cdefghijklm", 10), vec!["ab cdefghi", "jklm"]);
    }

    #[test]
    fn long_prose_wraps_on_words() {
        let line = "the quick brown fox jumps over the lazy dog and keeps running far away";
        for width in [8u16, 10, 15, 20, 33] {
            check(line, width);
        }
        assert_eq!(
            rows(line, 20),
            vec![
                "the quick brown fox ",
                "jumps over the lazy ",
                // No word is split: the last space (column 13) is past the first third.
                "dog and keeps ",
                "running far away"
            ]
        );
    }

    #[test]
    fn chinese_never_splits_a_character() {
        assert_eq!(rows("中文字符测试", 5), vec!["中文", "字符", "测试"]);
        assert_eq!(rows("中文字符测试", 4), vec!["中文", "字符", "测试"]);
        check("中文字符测试", 3);
    }

    #[test]
    fn mixed_ascii_and_chinese() {
        assert_eq!(rows("ab中cd文e", 3), vec!["ab", "中c", "d文", "e"]);
        check("plexus 是一个终端工作台 for agents", 7);
        check("plexus 是一个终端工作台 for agents", 1);
    }

    #[test]
    fn wide_char_wider_than_the_row_gets_its_own() {
        assert_eq!(rows("a中b", 1), vec!["a", "中", "b"]);
    }

    #[test]
    fn emoji_clusters_stay_whole() {
        let family = "👨\u{200D}👩\u{200D}👧";
        let line = format!("ab{family}cd");
        let got = rows(&line, 3);
        assert!(got.iter().any(|row| row.contains(family)), "{got:?}");
        assert_eq!(got, vec!["ab", &format!("{family}c"), "d"]);
        check(&line, 3);
        check("👍🏽👍🏽👍🏽", 2);
        assert_eq!(rows("🇫🇷🇩🇪", 2), vec!["🇫🇷", "🇩🇪"]);
        assert_eq!(rows("😀😀😀", 4), vec!["😀😀", "😀"]);
    }

    #[test]
    fn combining_marks_stay_with_their_base() {
        let line = "e\u{301}e\u{301}e\u{301}";
        assert_eq!(rows(line, 2), vec!["e\u{301}e\u{301}", "e\u{301}"]);
    }

    #[test]
    fn truncate() {
        assert_eq!(truncate_to_width("hello", 3), ("hel", 3));
        assert_eq!(truncate_to_width("hello", 10), ("hello", 5));
        assert_eq!(truncate_to_width("hello", 0), ("", 0));
        assert_eq!(truncate_to_width("中文字", 5), ("中文", 4));
        assert_eq!(truncate_to_width("中文字", 1), ("", 0));
        assert_eq!(truncate_to_width("a中", 2), ("a", 1));
        assert_eq!(truncate_to_width("😀x", 2), ("😀", 2));
        assert_eq!(truncate_to_width("", 4), ("", 0));
    }

    #[test]
    fn pad_or_truncate_is_exact_width() {
        assert_eq!(pad_or_truncate("abc", 5), "abc  ");
        assert_eq!(pad_or_truncate("abcde", 5), "abcde");
        assert_eq!(pad_or_truncate("abcdef", 5), "abcd…");
        assert_eq!(pad_or_truncate("abc", 0), "");
        assert_eq!(pad_or_truncate("", 0), "");
        assert_eq!(pad_or_truncate("abc", 1), "…");
        assert_eq!(pad_or_truncate("中文字", 6), "中文字");
        // 中文 is 4 columns; with the ellipsis 5 would need 中文… (5): fits exactly.
        assert_eq!(pad_or_truncate("中文字", 5), "中文…");
        // Only 中 fits before the ellipsis in 4 columns: a gap pads it.
        assert_eq!(pad_or_truncate("中文字", 4), "中… ");
        for s in ["中文字", "abc", "a中b文c", "😀😀😀", ""] {
            for w in 0..9 {
                assert_eq!(pad_or_truncate(s, w).width(), w, "{s:?} at {w}");
            }
        }
    }

    #[test]
    fn clusters_measure_like_unicode_width() {
        let widths: Vec<usize> = clusters("a中😀e\u{301}").map(|c| c.width).collect();
        assert_eq!(widths, vec![1, 2, 2, 1]);
    }
}
