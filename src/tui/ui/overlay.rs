//! Overlays drawn over a screen: a box centred in an area, a scrollable list of lines,
//! and long lines wrapped to an overlay's width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::text::{fill_rect, pane, put};
use super::theme::Theme;
use crate::tui::app::UiState;

/// `lines` wrapped to `width` columns (an overlay's long strings are read whole): a line
/// goes on under itself, indented like its text (`keys  what they do`, `14:03:21  text`).
pub(super) fn wrapped(lines: &[String], width: u16) -> Vec<String> {
    let width = width.max(10);
    lines
        .iter()
        .flat_map(|l| wrap_hanging(&crate::base::text::sanitize::sanitize(l), width))
        .collect()
}

/// One sanitized line in rows of `width` columns, the rows after the first indented by
/// [`hang`].
fn wrap_hanging(line: &str, width: u16) -> Vec<String> {
    use crate::base::text::wrap::wrap_ranges;
    let mut first = wrap_ranges(line, width).into_iter();
    let Some(head) = first.next() else {
        return vec![String::new()];
    };
    if head.end >= line.len() {
        return vec![line.to_string()];
    }
    let indent = hang(line, usize::from(width));
    let rest = line[head.end..].trim_start();
    let pad = " ".repeat(indent);
    let mut out = vec![line[head].trim_end().to_string()];
    let room = width.saturating_sub(indent as u16).max(1);
    out.extend(
        wrap_ranges(rest, room)
            .into_iter()
            .map(|r| format!("{pad}{}", rest[r].trim_end())),
    );
    out
}

/// The column a wrapped line's next rows start at: where its text starts after a gap of
/// two spaces (`   q ctrl+c  quit…`), else its own indent; 0 past half the width.
fn hang(line: &str, width: usize) -> usize {
    use crate::base::text::sanitize::display_width;
    let lead = line.len() - line.trim_start().len();
    let body = &line[lead..];
    let text_at = body
        .find("  ")
        .map(|gap| gap + body[gap..].len() - body[gap..].trim_start().len())
        .filter(|&at| at < body.len())
        .map(|at| display_width(&line[..lead + at]));
    match text_at {
        Some(col) if col <= width / 2 => col,
        _ if lead <= width / 2 => lead,
        _ => 0,
    }
}

/// A box of `w` by `h` centred in `area` (clamped to it).
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Draws a scrollable overlay of lines; returns the clamped top.
pub(super) fn scroll_overlay(
    buf: &mut Buffer,
    area: Rect,
    title: &str,
    lines: &[String],
    top: usize,
    theme: &Theme,
    ui: &mut UiState,
) -> usize {
    let longest = lines
        .iter()
        .map(|l| {
            crate::base::text::sanitize::display_width(&crate::base::text::sanitize::sanitize(l))
        })
        .max()
        .unwrap_or(10);
    let longest = u16::try_from(longest).unwrap_or(u16::MAX);
    let w = longest
        .saturating_add(4)
        .max(30)
        .min(area.width.saturating_sub(4).max(10));
    // Lines wider than the box go on under themselves: none is cut.
    let lines = wrapped(lines, w.saturating_sub(3));
    let h = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
        .min(area.height.saturating_sub(2))
        .max(3);
    let r = centered(area, w, h);
    Clear.render(r, buf);
    fill_rect(buf, r, theme.style_base());
    let inner = pane(buf, r, title.trim(), true, theme);
    let rows = inner.height as usize;
    ui.list_rows = rows;
    let top = top.min(lines.len().saturating_sub(rows));
    for (k, l) in lines.iter().skip(top).take(rows).enumerate() {
        put(
            buf,
            inner.x + 1,
            inner.y + k as u16,
            inner.width.saturating_sub(1),
            l,
            theme.style_base(),
        );
    }
    top
}
