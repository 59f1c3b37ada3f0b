//! The Eval screen's check table: each check's pass bar, rate and 95% interval, its
//! gate, and against the parent iteration the paired difference with its interval and
//! the flips each way.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::state::{EvalScreen, Focus};
use crate::base::text::sanitize::display_width;
use crate::base::text::wrap::pad_or_truncate;
use crate::tui::ui::text::{bar, fill, keep_visible, pane, put};
use crate::tui::ui::theme::Theme;

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn signed(x: f64) -> String {
    format!("{:+.1}", x * 100.0)
}

/// Draws the check table into `r`.
pub fn draw_checks(buf: &mut Buffer, r: Rect, s: &mut EvalScreen, theme: &Theme) {
    let focused = s.focus == Focus::Checks;
    let title = format!("Checks · {}", s.model.checks.len());
    let inner = pane(buf, r, &title, focused, theme);
    if inner.height < 2 {
        return;
    }
    let w = usize::from(inner.width);
    let parent = s.model.parent.is_some();
    // name, bar, rate, interval, [difference, flips]
    let fixed = 7 + 15 + if parent { 20 + 8 } else { 0 };
    let barw = (w.saturating_sub(fixed) / 3).clamp(6, 30);
    let namew = w.saturating_sub(fixed + barw + 1).clamp(8, 40);
    let mut head = format!(
        " {}{} {:>6} {:<14}",
        pad_or_truncate("check", namew),
        pad_or_truncate("pass", barw),
        "rate",
        "95% interval"
    );
    if parent {
        head.push_str(&format!("{:<20}{}", "Δ parent [95%]", " ↓   ↑"));
    }
    put(
        buf,
        inner.x,
        inner.y,
        inner.width,
        &head,
        theme.title().add_modifier(Modifier::BOLD),
    );
    let rows = usize::from(inner.height - 1);
    s.check = s.check.min(s.model.checks.len().saturating_sub(1));
    s.check_top = keep_visible(s.check, s.check_top, rows);
    for (k, c) in s
        .model
        .checks
        .iter()
        .enumerate()
        .skip(s.check_top)
        .take(rows)
    {
        let y = inner.y + 1 + (k - s.check_top) as u16;
        let selected = focused && k == s.check;
        let style = if selected {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, style);
        let filtered = if s.filter.check == Some(k) {
            "▸"
        } else {
            " "
        };
        let mut x = inner.x;
        x += put(
            buf,
            x,
            y,
            inner.width,
            &format!("{filtered}{}", pad_or_truncate(&c.name, namew)),
            style,
        );
        let (full, empty) = bar(c.rate.estimate, barw);
        let gate_missed = c.gate.is_some_and(|g| c.rate.estimate < g);
        let bar_style = if selected {
            style
        } else if gate_missed {
            theme.error()
        } else {
            theme.ok()
        };
        x += put(
            buf,
            x,
            y,
            inner.width.saturating_sub(x - inner.x),
            &full,
            bar_style,
        );
        x += put(
            buf,
            x,
            y,
            inner.width.saturating_sub(x - inner.x),
            &empty,
            if selected { style } else { theme.muted() },
        );
        let mut text = format!(
            " {:>6} [{:>5}–{:>5}]",
            if c.of == 0 {
                "—".into()
            } else {
                pct(c.rate.estimate)
            },
            format!("{:.1}", c.rate.lo * 100.0),
            format!("{:.1}", c.rate.hi * 100.0),
        );
        if parent {
            match &c.parent {
                // Nothing flipped: the same outcome on every sample both ran (an
                // interval around zero read as a change that might be there).
                Some(d) if d.regressed == 0 && d.improved == 0 => {
                    text.push_str(&format!(" {:<19} {:>3} {:>3}", "±0 · none flipped", 0, 0));
                }
                Some(d) => {
                    let diff = format!(
                        "{} [{},{}]",
                        signed(d.difference.estimate),
                        signed(d.difference.lo),
                        signed(d.difference.hi)
                    );
                    text.push_str(&format!(
                        " {:<19} {:>3} {:>3}",
                        diff, d.regressed, d.improved
                    ));
                }
                None => text.push_str(" (not in the parent)"),
            }
        }
        // The errors and the gate follow when they fit whole; a figure is never cut.
        let room = usize::from(inner.width.saturating_sub(x - inner.x));
        let extras = [
            (c.errors > 0).then(|| format!(" · {} err", c.errors)),
            c.gate.map(|g| format!(" · gate {}", pct(g))),
        ];
        for extra in extras.into_iter().flatten() {
            if display_width(&text) + display_width(&extra) <= room {
                text.push_str(&extra);
            }
        }
        let warn = c.parent.as_ref().is_some_and(|d| d.difference.hi < 0.0) || gate_missed;
        put(
            buf,
            x,
            y,
            inner.width.saturating_sub(x - inner.x),
            &text,
            if selected {
                style
            } else if warn {
                theme.warn()
            } else {
                theme.style_base()
            },
        );
    }
}
