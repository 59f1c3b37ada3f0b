//! Styled lines for the Debate screen's panes: model text sanitized and wrapped at word
//! boundaries to a width in display columns (Chinese is two), then drawn from a scroll
//! position.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::base::text::sanitize::{display_width, sanitize_lines};
use std::ops::Range;

use unicode_width::UnicodeWidthChar;

use crate::base::text::wrap::{truncate_to_width, wrap_ranges};
use crate::tui::ui::text::put;

/// One line: segments of text, each with its style, drawn left to right.
pub type Line = Vec<(String, Style)>;

/// Lines being built for a pane `width` columns wide.
pub struct Lines {
    /// The lines so far.
    pub out: Vec<Line>,
    /// Width they are wrapped to.
    pub width: u16,
}

impl Lines {
    /// No lines yet, for a pane `width` columns wide.
    pub fn new(width: u16) -> Lines {
        Lines {
            out: Vec::new(),
            width: width.max(1),
        }
    }

    /// A line of segments, as given (cut at the pane's edge when drawn).
    pub fn push(&mut self, line: Line) {
        self.out.push(line);
    }

    /// An empty line.
    pub fn blank(&mut self) {
        self.out.push(Vec::new());
    }

    /// Untrusted text, sanitized and wrapped, each row after `indent` spaces.
    pub fn text(&mut self, text: &str, indent: u16, style: Style) {
        self.lead(text, "", indent, style, style);
    }

    /// Untrusted text after a lead (`• `, a label) on its first row, wrapped with the
    /// following rows under the text.
    pub fn lead(&mut self, text: &str, lead: &str, indent: u16, lead_style: Style, style: Style) {
        let lead_w = u16::try_from(display_width(lead)).unwrap_or(u16::MAX);
        let room = self
            .width
            .saturating_sub(indent.saturating_add(lead_w))
            .max(4);
        let pad = " ".repeat(usize::from(indent));
        let mut first = true;
        for l in sanitize_lines(text) {
            for r in wrap_words(&l, room) {
                let head = if first {
                    format!("{pad}{lead}")
                } else {
                    " ".repeat(usize::from(indent.saturating_add(lead_w)))
                };
                let head_style = if first { lead_style } else { style };
                first = false;
                self.out
                    .push(vec![(head, head_style), (l[r].to_string(), style)]);
            }
        }
        if first {
            self.out.push(vec![(format!("{pad}{lead}"), lead_style)]);
        }
    }

    /// Each item as a bullet under an optional heading; nothing when there are none.
    pub fn bullets(&mut self, heading: &str, items: &[String], heading_style: Style, style: Style) {
        if items.is_empty() {
            return;
        }
        if !heading.is_empty() {
            self.out.push(vec![(heading.to_string(), heading_style)]);
        }
        for it in items {
            self.lead(it, "• ", 1, style, style);
        }
    }
}

/// Splits a sanitized line into rows of at most `width` columns, breaking at spaces: a
/// word is cut only when it is wider than a whole row (a long path, a URL), and text
/// without spaces (Chinese) breaks between characters. The spaces a row breaks at are
/// dropped from its end.
pub fn wrap_words(line: &str, width: u16) -> Vec<Range<usize>> {
    let w = usize::from(width.max(1));
    if display_width(line) <= w {
        return std::iter::once(0..line.len()).collect();
    }
    let mut rows: Vec<Range<usize>> = Vec::new();
    // The row being filled: where it starts, where its last word ends, its width there.
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut col = 0;
    let mut words = line.split(' ').scan(0usize, |at, word| {
        let s = *at;
        *at += word.len() + 1;
        Some(s..s + word.len())
    });
    let mut pending: Option<Range<usize>> = words.next();
    while let Some(word) = pending.take() {
        if word.is_empty() {
            pending = words.next();
            continue;
        }
        let ww = display_width(&line[word.clone()]);
        match start {
            Some(_) if col + 1 + ww <= w => {
                end = word.end;
                col += 1 + ww;
                pending = words.next();
            }
            Some(s) => {
                // Chinese needs no space to break: it fills the row first.
                let room = w.saturating_sub(col + 1);
                let text = &line[word.clone()];
                let (head, _) = truncate_to_width(text, room);
                if text.chars().any(|c| c.width().unwrap_or(0) > 1) && !head.is_empty() {
                    rows.push(s..word.start + head.len());
                    pending = Some(word.start + head.len()..word.end);
                } else {
                    rows.push(s..end);
                    pending = Some(word);
                }
                start = None;
            }
            None if ww <= w => {
                start = Some(word.start);
                end = word.end;
                col = ww;
                pending = words.next();
            }
            None => {
                // A word wider than a row: hard rows, the last part goes on filling.
                let parts = wrap_ranges(&line[word.clone()], width.max(1));
                let n = parts.len();
                for (i, p) in parts.into_iter().enumerate() {
                    let r = word.start + p.start..word.start + p.end;
                    if i + 1 < n {
                        rows.push(r);
                    } else {
                        col = display_width(&line[r.clone()]);
                        start = Some(r.start);
                        end = r.end;
                    }
                }
                pending = words.next();
            }
        }
    }
    if let Some(s) = start {
        rows.push(s..end);
    }
    if rows.is_empty() {
        rows.extend(std::iter::once(0..0));
    }
    rows
}

/// Columns `line` takes.
pub fn line_width(line: &Line) -> usize {
    line.iter().map(|(t, _)| display_width(t)).sum()
}

/// `top` moved up so that `len` lines fill `rows` rows as far as they can.
pub fn clamp(top: usize, len: usize, rows: u16) -> usize {
    top.min(len.saturating_sub(usize::from(rows)))
}

/// Draws `lines` into `r` from line `top` (only the lines that show).
pub fn draw(buf: &mut Buffer, r: Rect, lines: &[Line], top: usize) {
    let rows = usize::from(r.height);
    for (k, line) in lines.iter().skip(top).take(rows).enumerate() {
        let y = r.y + k as u16;
        let mut x = r.x;
        for (text, style) in line {
            let room = r.right().saturating_sub(x);
            if room == 0 {
                break;
            }
            x += put(buf, x, y, room, text, *style);
        }
    }
}

/// `0.78` as `0.78`; a value that is not a number as `—`.
pub fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "—".into()
    }
}

/// A signed change: `+0.05`, `−0.10`, `±0`.
pub fn delta(v: f64) -> String {
    if !v.is_finite() {
        "—".into()
    } else if v.abs() < 0.005 {
        "±0".into()
    } else if v > 0.0 {
        format!("+{v:.2}")
    } else {
        format!("−{:.2}", v.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_chinese_within_the_width() {
        let mut l = Lines::new(12);
        l.lead(
            "我们应该分三个阶段完成迁移工作",
            "• ",
            1,
            Style::new(),
            Style::new(),
        );
        assert!(l.out.len() > 1);
        assert!(l.out.iter().all(|x| line_width(x) <= 12));
        for line in &l.out {
            let w: usize = line.iter().map(|(t, _)| display_width(t)).sum();
            assert!(w <= 12, "{line:?}");
        }
        assert_eq!(num(f64::NAN), "—");
        assert_eq!(delta(0.0), "±0");
    }

    #[test]
    fn words_are_never_cut_unless_longer_than_a_row() {
        let text = "Adopt a three-phase plan for the migration of the billing database";
        let rows: Vec<&str> = wrap_words(text, 18).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            rows,
            [
                "Adopt a",
                "three-phase plan",
                "for the migration",
                "of the billing",
                "database"
            ]
        );
        let long = "see https://example.com/a/very/long/path/to/a/file now";
        let rows: Vec<&str> = wrap_words(long, 12).into_iter().map(|r| &long[r]).collect();
        assert!(rows.iter().all(|r| display_width(r) <= 12), "{rows:?}");
        assert_eq!(rows.concat().replace(' ', ""), long.replace(' ', ""));
        assert_eq!(wrap_words("", 5).first(), Some(&(0..0)));
        // Chinese after a word fills the row before it breaks.
        let mixed = "迁移到 PostgreSQL 16：先逻辑复制，再双写";
        let rows: Vec<&str> = wrap_words(mixed, 24)
            .into_iter()
            .map(|r| &mixed[r])
            .collect();
        assert_eq!(rows, ["迁移到 PostgreSQL 16：先", "逻辑复制，再双写"]);
        assert_eq!(delta(-0.1), "−0.10");
        assert_eq!(delta(0.05), "+0.05");
    }
}
