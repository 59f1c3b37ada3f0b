//! The consensus trend: one bar per round on a 0–1 scale with the continue and converge
//! thresholds drawn across it as labelled lines, or the same in one line of eighth
//! blocks when there is no room.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::labels::similarity_color;
use super::lines::{num, Line};
use crate::base::protocol::debate_spec::Thresholds;
use crate::tui::ui::text::put;
use crate::tui::ui::theme::Theme;

const EIGHTHS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// Columns of a round's bar and the gap after it.
const BAR: u16 = 3;
const GAP: u16 = 3;

/// The row (from the bottom, 0-based) of a `rows`-high chart that holds level `v`.
fn row_of(v: f64, rows: u16) -> u16 {
    let v = if v.is_finite() {
        v.clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((v * f64::from(rows)).floor() as u16).min(rows.saturating_sub(1))
}

/// The block of a bar's cell on row `y` (from the bottom).
fn cell(v: f64, rows: u16, y: u16) -> &'static str {
    let v = if v.is_finite() {
        v.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (v * f64::from(rows) * 8.0).round() as i64;
    let here = (eighths - i64::from(y) * 8).clamp(0, 8);
    EIGHTHS[here as usize]
}

/// Draws the chart into `r`: bars of `trend` (round 1 first), the selected round's label
/// highlighted, the threshold lines with their labels on the right.
pub fn draw(
    buf: &mut Buffer,
    r: Rect,
    trend: &[f64],
    selected: Option<u32>,
    t: &Thresholds,
    theme: &Theme,
) {
    if r.height < 3 || r.width < 20 {
        return;
    }
    let axis = 5u16;
    let labels_w = 15u16;
    let rows = r.height - 2;
    let x0 = r.x + axis;
    let plot_w = r.width.saturating_sub(axis + labels_w);
    let shown = usize::from(plot_w / (BAR + GAP)).max(1);
    let first = trend.len().saturating_sub(shown);
    let lines = [
        (t.converge_above, "converge", theme.ok()),
        (t.continue_above, "continue", theme.warn()),
    ];
    // The scale.
    for (v, label) in [(1.0, "1.0"), (0.5, "0.5"), (0.0, "0")] {
        let y = r.y + rows - 1 - row_of(v, rows);
        put(buf, r.x, y, axis - 1, &format!("{label:>4}"), theme.muted());
    }
    // Threshold lines behind the bars, labelled at the right end.
    let mut labelled: Vec<(u16, String, Style)> = Vec::new();
    for (v, name, style) in lines {
        let y = r.y + rows - 1 - row_of(v, rows);
        for x in x0..x0 + plot_w {
            put(buf, x, y, 1, "┄", style);
        }
        let text = format!("{name} {}", num(v));
        match labelled.iter_mut().find(|(ly, _, _)| *ly == y) {
            Some(l) => l.1 = format!("{} / {}", l.1, text),
            None => labelled.push((y, text, style)),
        }
    }
    for (y, text, style) in labelled {
        put(buf, x0 + plot_w + 1, y, labels_w - 1, &text, style);
    }
    // Bars, with the round and its value under each.
    for (k, &v) in trend.iter().enumerate().skip(first) {
        let x = x0 + (k - first) as u16 * (BAR + GAP) + 1;
        let style = Style::new().fg(similarity_color(v, t, theme));
        for y in 0..rows {
            let c = cell(v, rows, y);
            if c != " " {
                let row = r.y + rows - 1 - y;
                for dx in 0..BAR {
                    put(buf, x + dx, row, 1, c, style);
                }
            }
        }
        let round = k as u32 + 1;
        let label_style = if selected == Some(round) {
            theme.selected().add_modifier(Modifier::BOLD)
        } else {
            theme.muted()
        };
        put(
            buf,
            x,
            r.y + rows,
            BAR + GAP - 1,
            &format!("r{round}"),
            label_style,
        );
        put(buf, x, r.y + rows + 1, BAR + GAP - 1, &short(v), style);
    }
    if trend.is_empty() {
        put(
            buf,
            x0 + 1,
            r.y + rows,
            plot_w,
            "no round compared yet",
            theme.muted(),
        );
    }
}

/// `0.78` as `.78` (1 as `1.0`).
fn short(v: f64) -> String {
    let s = num(v);
    s.strip_prefix('0').map(str::to_string).unwrap_or(s)
}

/// The trend in one line: `trend ▆▅█ .78 .64 .93 · ┄ converge 0.90 · ┄ continue 0.70`.
pub fn line(trend: &[f64], selected: Option<u32>, t: &Thresholds, theme: &Theme) -> Line {
    let mut l: Line = vec![("trend ".into(), theme.title())];
    if trend.is_empty() {
        l.push(("—".into(), theme.muted()));
    }
    for (k, &v) in trend.iter().enumerate() {
        let style = Style::new().fg(similarity_color(v, t, theme));
        let style = if selected == Some(k as u32 + 1) {
            style.add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
        } else {
            style
        };
        l.push((cell(v, 1, 0).to_string(), style));
    }
    l.push((" ".into(), theme.style_base()));
    for (k, &v) in trend.iter().enumerate() {
        let sep = if k > 0 { " " } else { "" };
        l.push((
            format!("{sep}{}", short(v)),
            Style::new().fg(similarity_color(v, t, theme)),
        ));
    }
    l.push((
        format!(" · ┄ converge >{}", num(t.converge_above)),
        theme.ok(),
    ));
    l.push((
        format!(" · ┄ continue >{}", num(t.continue_above)),
        theme.warn(),
    ));
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_rows() {
        assert_eq!(row_of(0.9, 10), 9);
        assert_eq!(row_of(1.0, 10), 9);
        assert_eq!(row_of(f64::NAN, 10), 0);
        assert_eq!(cell(1.0, 4, 3), "█");
        assert_eq!(cell(0.0, 4, 0), " ");
        assert_eq!(cell(0.5, 1, 0), "▄");
        assert_eq!(short(0.78), ".78");
    }
}
