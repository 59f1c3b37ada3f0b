//! A sample opened on the Eval screen: the checks that did not pass with what they
//! expected and what they found side by side, then the passes; or one of its four
//! documents.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::detail::Detail;
use super::state::EvalScreen;
use crate::base::text::wrap::pad_or_truncate;
use crate::tui::ui::text::{pane, put};
use crate::tui::ui::theme::Theme;

/// Draws the sample opened into `body`.
pub fn draw_detail(buf: &mut Buffer, body: Rect, s: &mut EvalScreen, theme: &Theme) {
    let marked = s
        .detail
        .as_ref()
        .is_some_and(|d| s.marked.contains(&d.sample_id));
    let page = usize::from(body.height.saturating_sub(3)).max(1);
    s.page = page;
    let Some(d) = s.detail.as_mut() else {
        return;
    };
    let title = format!(
        "Sample {} · {}{}",
        d.sample_id,
        d.status,
        if marked {
            " · ◆ marked for rerun"
        } else {
            ""
        }
    );
    let inner = pane(buf, body, &title, true, theme);
    if inner.height < 2 {
        return;
    }
    let mut x = inner.x;
    for (k, t) in Detail::TABS.iter().enumerate() {
        let style = if k == d.tab {
            theme.selected().add_modifier(Modifier::BOLD)
        } else {
            theme.muted()
        };
        x += put(
            buf,
            x,
            inner.y,
            inner.width.saturating_sub(x - inner.x),
            &format!(" {t} "),
            style,
        );
        x += put(
            buf,
            x,
            inner.y,
            inner.width.saturating_sub(x - inner.x),
            " ",
            theme.muted(),
        );
    }
    let area = Rect {
        y: inner.y + 1,
        height: inner.height - 1,
        ..inner
    };
    let lines: Vec<(String, ratatui::style::Style)> = if d.tab == 0 {
        side_by_side(d, area.width, theme)
    } else {
        d.docs[d.tab - 1]
            .iter()
            .map(|l| (l.clone(), theme.style_base()))
            .collect()
    };
    let rows = usize::from(area.height);
    d.scroll = d.scroll.min(lines.len().saturating_sub(rows));
    for (k, (text, style)) in lines.iter().skip(d.scroll).take(rows).enumerate() {
        put(buf, area.x, area.y + k as u16, area.width, text, *style);
    }
}

/// Each check's header line, then its expected and found values in two columns.
fn side_by_side(d: &Detail, width: u16, theme: &Theme) -> Vec<(String, ratatui::style::Style)> {
    let half = usize::from(width.saturating_sub(3) / 2).max(8);
    let mut out = Vec::new();
    if d.sides.is_empty() {
        out.push(("no check result (not scored)".to_string(), theme.muted()));
    }
    for c in &d.sides {
        let (sign, style) = match c.passed {
            Some(true) => ("✓", theme.ok()),
            Some(false) => ("✗", theme.error()),
            None => ("·", theme.warn()),
        };
        let at = if c.at.is_empty() {
            String::new()
        } else {
            format!(" at {}", c.at)
        };
        out.push((
            format!("{sign} {} · epoch {}{at} — {}", c.check, c.epoch, c.why),
            style.add_modifier(Modifier::BOLD),
        ));
        // Side by side for what did not pass; a pass is its line.
        if c.passed == Some(true) {
            continue;
        }
        out.push((
            format!("  {} │ {}", pad_or_truncate("expected", half), "found"),
            theme.muted(),
        ));
        let n = c.expected.len().max(c.found.len());
        for k in 0..n {
            let e = c.expected.get(k).map_or("", String::as_str);
            let f = c.found.get(k).map_or("", String::as_str);
            out.push((
                format!("  {} │ {}", pad_or_truncate(e, half), f),
                theme.style_base(),
            ));
        }
    }
    out
}
