//! Overlays drawn over a screen: a box centred in an area, a scrollable list of lines,
//! and long lines wrapped to an overlay's width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::text::{fill_rect, pane, put};
use super::theme::Theme;
use crate::tui::app::UiState;

/// `lines` wrapped to `width` columns (an overlay's long strings are read whole).
pub(super) fn wrapped(lines: &[String], width: u16) -> Vec<String> {
    let width = width.max(10);
    lines
        .iter()
        .flat_map(|l| {
            let l = crate::base::text::sanitize::sanitize(l);
            let parts: Vec<String> = crate::base::text::wrap::wrap_ranges(&l, width)
                .into_iter()
                .map(|r| l[r].to_string())
                .collect();
            if parts.is_empty() {
                vec![String::new()]
            } else {
                parts
            }
        })
        .collect()
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
