//! Small drawing helpers: sanitized text into a buffer, clipped to a width; a titled
//! pane; number formats.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::theme::Theme;
use crate::base::text::cut::cut_width;
use crate::base::text::sanitize::sanitize_cow;

/// Writes `text` (sanitized) at `(x, y)` using at most `width` columns; returns the
/// columns used. A text wider than that is cut at a word and ended with `…` (the one
/// cutter: a number or a word is never split).
pub fn put(buf: &mut Buffer, x: u16, y: u16, width: u16, text: &str, style: Style) -> u16 {
    if width == 0 {
        return 0;
    }
    let clean = sanitize_cow(text);
    let shown = cut_width(clean.as_ref(), width as usize);
    let (end, _) = buf.set_stringn(x, y, shown.as_ref(), width as usize, style);
    end.saturating_sub(x)
}

/// Fills a row segment with spaces in `style`.
pub fn fill(buf: &mut Buffer, x: u16, y: u16, width: u16, style: Style) {
    let area = buf.area;
    for cx in x..x.saturating_add(width).min(area.right()) {
        if let Some(c) = buf.cell_mut((cx, y)) {
            c.set_symbol(" ");
            c.set_style(style);
        }
    }
}

/// Blanks a whole rect in `style`.
pub fn fill_rect(buf: &mut Buffer, r: Rect, style: Style) {
    for y in r.top()..r.bottom() {
        fill(buf, r.x, y, r.width, style);
    }
}

/// Sets the style of a rect, keeping its symbols (a frame starts blank, so this is all
/// the background needs).
pub fn paint(buf: &mut Buffer, r: Rect, style: Style) {
    buf.set_style(r.intersection(buf.area), style);
}

/// The first row to show so that `selected` is visible in `rows` rows, moving `top` as
/// little as possible.
pub fn keep_visible(selected: usize, top: usize, rows: usize) -> usize {
    if selected < top {
        selected
    } else if rows > 0 && selected >= top + rows {
        selected + 1 - rows
    } else {
        top
    }
}

/// `1234` → `1.2k`, `1234567` → `1.2M`.
pub fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => trim_zero(format!("{:.1}k", n as f64 / 1e3)),
        _ => trim_zero(format!("{:.1}M", n as f64 / 1e6)),
    }
}

fn trim_zero(s: String) -> String {
    s.replace(".0k", "k").replace(".0M", "M")
}

/// Milliseconds as `m:ss` or `h:mm:ss`.
pub fn elapsed(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A text gauge `████▌░░░` of `width` cells for `frac` in [0, 1].
pub fn bar(frac: f64, width: usize) -> (String, String) {
    let frac = if frac.is_finite() {
        frac.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (frac * width as f64 * 8.0).round() as usize;
    let full = eighths / 8;
    let part = eighths % 8;
    let mut filled = "█".repeat(full);
    if part > 0 && full < width {
        filled.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][part - 1]);
    }
    let used = full + usize::from(part > 0 && full < width);
    (filled, "░".repeat(width.saturating_sub(used)))
}

/// The columns a pane `width` wide has for its title (the corners, a space either side
/// and one line of border to the right); a title fitted to it is never cut.
pub fn title_room(width: u16) -> usize {
    usize::from(width.saturating_sub(5))
}

/// Draws a bordered pane with a title (cut with `…` before the corner); returns its
/// inner area.
pub fn pane(buf: &mut Buffer, r: Rect, title: &str, focused: bool, theme: &Theme) -> Rect {
    let clean = crate::base::text::sanitize::sanitize(title);
    // The title never runs into the border's corner: cut with `…` to the pane's width.
    let room = title_room(r.width);
    let clean = if crate::base::text::sanitize::display_width(&clean) > room {
        let (cut, _) = crate::base::text::wrap::truncate_to_width(&clean, room.saturating_sub(1));
        format!("{cut}…")
    } else {
        clean
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(format!(" {clean} "))
        .title_style(if focused {
            theme.title().add_modifier(Modifier::BOLD)
        } else {
            theme.title()
        });
    let inner = block.inner(r);
    block.render(r, buf);
    inner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(compact(999), "999");
        assert_eq!(compact(1000), "1k");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(128_000), "128k");
        assert_eq!(compact(2_500_000), "2.5M");
        assert_eq!(elapsed(61_000), "1:01");
        assert_eq!(elapsed(3_661_000), "1:01:01");
        let (f, e) = bar(0.5, 8);
        assert_eq!((f.chars().count(), e.chars().count()), (4, 4));
        let (f, e) = bar(1.7, 4);
        assert_eq!((f.as_str(), e.as_str()), ("████", ""));
        let (f, e) = bar(f64::NAN, 3);
        assert_eq!((f.as_str(), e.as_str()), ("", "░░░"));
    }
}
