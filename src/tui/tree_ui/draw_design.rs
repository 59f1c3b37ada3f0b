//! Drawing an Init→Execute context: the requirement, rationale and constraints, the
//! design files (role, path as written, found or not), and the file opened below them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::state::Browser;
use crate::base::text::sanitize::sanitize;
use crate::base::text::wrap::{pad_or_truncate, wrap_ranges};
use crate::tui::ui::text::{fill, keep_visible, pane, put};
use crate::tui::ui::theme::Theme;

/// Draws the design view into `body`.
pub fn draw_design(buf: &mut Buffer, body: Rect, b: &mut Browser, theme: &Theme) {
    let Some(init) = b.tree.init.as_ref() else {
        return;
    };
    let mut head: Vec<String> = vec![format!(
        "requirement: {}",
        init.user_requirement.as_deref().unwrap_or("(none)")
    )];
    if let Some(r) = &init.design_rationale {
        head.push(format!("rationale: {r}"));
    }
    if !init.known_constraints.is_empty() {
        head.push(format!(
            "known constraints: {}",
            init.known_constraints.join(" · ")
        ));
    }
    for w in &init.warnings {
        head.push(format!("⚠ {w}"));
    }
    let list_h = (head.len() + init.design.len() + 4) as u16;
    let (top, rest) = match b.design.open {
        Some(_) => {
            let h = list_h.min(body.height / 2).max(3.min(body.height));
            (
                Rect { height: h, ..body },
                Some(Rect {
                    y: body.y + h,
                    height: body.height - h,
                    ..body
                }),
            )
        }
        None => (body, None),
    };
    let title = format!(
        "Init→Execute context · {} design file(s) · enter opens · esc closes",
        init.design.len()
    );
    let inner = pane(buf, top, &title, true, theme);
    let mut y = inner.y;
    for l in &head {
        let clean = sanitize(l);
        for r in wrap_ranges(&clean, inner.width) {
            if y >= inner.bottom() {
                return;
            }
            let style = if l.starts_with('⚠') {
                theme.warn()
            } else {
                theme.style_base()
            };
            put(buf, inner.x, y, inner.width, &clean[r], style);
            y += 1;
        }
    }
    y += 1;
    let rows_h = usize::from(inner.bottom().saturating_sub(y));
    let w = usize::from(inner.width);
    let longest = init
        .design
        .iter()
        .map(|f| crate::base::text::sanitize::display_width(&sanitize(&f.role)))
        .max()
        .unwrap_or(0);
    let rolew = longest.min(w / 2);
    let first = keep_visible(b.design.selected, 0, rows_h);
    for (k, f) in init.design.iter().enumerate().skip(first).take(rows_h) {
        let style = if k == b.design.selected {
            theme.selected()
        } else if f.found.is_none() {
            theme.warn()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, style);
        let text = format!(
            "  {}  {}{}",
            pad_or_truncate(&sanitize(&f.role), rolew),
            sanitize(&f.written),
            if f.found.is_some() {
                ""
            } else {
                "  (not found)"
            }
        );
        put(buf, inner.x, y, inner.width, &text, style);
        y += 1;
    }
    let Some(rest) = rest else { return };
    let inner = pane(buf, rest, "Design file", true, theme);
    let lines = b.design.lines();
    let mut y = inner.y;
    b.design.top = b.design.top.min(lines.len().saturating_sub(1));
    for (k, l) in lines.iter().enumerate().skip(b.design.top) {
        let clean = sanitize(l);
        let style = if k == 0 {
            theme.title().add_modifier(Modifier::BOLD)
        } else {
            theme.style_base()
        };
        let ranges = wrap_ranges(&clean, inner.width);
        if ranges.is_empty() {
            y += 1;
        }
        for r in ranges {
            if y >= inner.bottom() {
                return;
            }
            put(buf, inner.x, y, inner.width, &clean[r], style);
            y += 1;
        }
        if y >= inner.bottom() {
            return;
        }
    }
}
