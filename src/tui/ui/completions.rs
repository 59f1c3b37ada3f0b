//! The command line's candidates: after Tab, a box just above the status line lists
//! the words the one being typed can complete to (or says that none does).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::text::{pane, put};
use super::theme::Theme;
use crate::base::text::sanitize::display_width;
use crate::tui::app::UiState;

/// Most rows of candidates shown; the rest are counted.
const MAX_ROWS: usize = 6;

/// Draws the candidates box above `status` (the status line's row), inside `area`.
pub fn draw(buf: &mut Buffer, area: Rect, status: Rect, ui: &UiState, theme: &Theme) {
    let Some(c) = &ui.completions else {
        return;
    };
    if ui.input.is_none() || !ui.command_prompt || area.width < 20 {
        return;
    }
    let width = area.width;
    let inner_w = usize::from(width.saturating_sub(2));
    // Candidates in columns, as wide as the widest one plus two spaces.
    let col_w = c
        .items
        .iter()
        .map(|s| display_width(s))
        .max()
        .unwrap_or(0)
        .saturating_add(2)
        .clamp(1, inner_w.max(1));
    let cols = (inner_w / col_w).max(1);
    let rows_needed = c.items.len().div_ceil(cols);
    let room = usize::from(status.y.saturating_sub(area.y + 3));
    let rows = rows_needed.min(MAX_ROWS).min(room).max(1);
    let shown = (rows * cols).min(c.items.len());
    let hidden = c.items.len() - shown;
    let title = if c.items.is_empty() {
        c.title.clone()
    } else if hidden > 0 {
        format!("{} · {hidden} more: type more letters", c.title)
    } else {
        c.title.clone()
    };
    let height = rows as u16 + 2;
    let r = Rect {
        x: area.x,
        y: status.y.saturating_sub(height),
        width,
        height,
    };
    Clear.render(r, buf);
    let inner = pane(buf, r, &title, true, theme);
    if c.items.is_empty() {
        put(
            buf,
            inner.x,
            inner.y,
            inner.width,
            "Backspace and try another word; ? lists every action",
            theme.muted(),
        );
        return;
    }
    for (k, item) in c.items.iter().take(shown).enumerate() {
        // Down the columns, like `ls`.
        let (col, row) = (k / rows, k % rows);
        let x = inner.x + (col * col_w) as u16;
        let y = inner.y + row as u16;
        if y >= inner.bottom() || x >= inner.right() {
            continue;
        }
        put(buf, x, y, inner.right() - x, item, theme.style_base());
    }
}
