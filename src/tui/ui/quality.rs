//! The Quality pane: grades A/B/C/D per agent and in total as stacked bars, the average
//! score and the issue count.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::text::put;
use super::theme::Theme;
use crate::base::protocol::Grade;
use crate::base::text::wrap::pad_or_truncate;
use crate::model::state::{Quality, RunState};

/// Draws the quality rows into `inner`.
pub fn draw(buf: &mut Buffer, inner: Rect, run: &RunState, theme: &Theme) {
    if inner.height == 0 || inner.width < 10 {
        return;
    }
    let w = inner.width as usize;
    let name_w = if w >= 70 { 22 } else { 10 }.min(w / 3);
    let wide = w >= 60;
    let tail_w = if wide { 22 } else { 15 };
    let bar_w = w.saturating_sub(name_w + 2 + tail_w).max(4);
    let mut y = inner.y;
    let header = if wide {
        format!(
            "{:name_w$} {:bar_w$} {:>8} {:>6} {:>6}",
            "agent", "A B C D", "atoms", "score", "issues"
        )
    } else {
        format!(
            "{:name_w$} {:bar_w$} {:>4} {:>5} {:>4}",
            "agent", "ABCD", "atom", "score", "iss"
        )
    };
    put(buf, inner.x, y, inner.width, &header, theme.muted());
    y += 1;
    let rows_left = inner.bottom().saturating_sub(y) as usize;
    // Keep the total row visible.
    let shown = run.agents.len().min(rows_left.saturating_sub(1));
    for (i, a) in run.agents.iter().take(shown).enumerate() {
        let name = pad_or_truncate(&a.name, name_w);
        row(
            buf,
            inner,
            y,
            &name,
            Style::default().fg(theme.agent(i)),
            &a.quality,
            name_w,
            bar_w,
            theme,
        );
        y += 1;
    }
    if y < inner.bottom() {
        let name = pad_or_truncate("total", name_w);
        row(
            buf,
            inner,
            y,
            &name,
            theme.title().add_modifier(Modifier::BOLD),
            &run.quality,
            name_w,
            bar_w,
            theme,
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn row(
    buf: &mut Buffer,
    inner: Rect,
    y: u16,
    name: &str,
    name_style: Style,
    q: &Quality,
    name_w: usize,
    bar_w: usize,
    theme: &Theme,
) {
    let mut x = inner.x;
    x += put(buf, x, y, name_w as u16, name, name_style) + 1;
    let total = q.atoms();
    let counts = [Grade::A, Grade::B, Grade::C, Grade::D].map(|g| q.count(g) as usize);
    let cells_of = segments(counts, bar_w);
    let mut used = 0usize;
    for (k, &cells) in cells_of.iter().enumerate() {
        if cells > 0 {
            let letter = ['A', 'B', 'C', 'D'][k];
            let seg: String = std::iter::once(letter)
                .chain(std::iter::repeat_n('█', cells - 1))
                .collect();
            put(
                buf,
                x + used as u16,
                y,
                cells as u16,
                &seg,
                theme.grade(letter),
            );
            used += cells;
        }
    }
    if used < bar_w {
        let empty = "·".repeat(bar_w - used);
        put(
            buf,
            x + used as u16,
            y,
            (bar_w - used) as u16,
            &empty,
            theme.muted(),
        );
    }
    x += bar_w as u16 + 1;
    let tail = if inner.width >= 60 {
        format!("{:>8} {:>6.2} {:>6}", total, q.avg_score(), q.issues)
    } else {
        format!("{:>4} {:>5.2} {:>4}", total, q.avg_score(), q.issues)
    };
    put(
        buf,
        x,
        y,
        inner.right().saturating_sub(x),
        &tail,
        theme.style_base(),
    );
}

/// Splits `width` cells among the counts in proportion (largest remainder), giving every
/// non-zero count at least one cell when there is room.
pub fn segments(counts: [usize; 4], width: usize) -> [usize; 4] {
    let total: usize = counts.iter().sum();
    let mut out = [0usize; 4];
    if total == 0 || width == 0 {
        return out;
    }
    let nonzero = counts.iter().filter(|&&c| c > 0).count();
    let mut rems = [(0usize, 0usize); 4];
    let mut used = 0;
    for k in 0..4 {
        let exact = counts[k] * width;
        out[k] = exact / total;
        if counts[k] > 0 && out[k] == 0 && nonzero <= width {
            out[k] = 1;
        }
        used += out[k];
        rems[k] = (exact % total, k);
    }
    rems.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut i = 0;
    while used < width && i < 8 {
        let k = rems[i % 4].1;
        if counts[k] > 0 {
            out[k] += 1;
            used += 1;
        }
        i += 1;
    }
    while used > width {
        // take back from the largest segment
        let k = (0..4).max_by_key(|&k| out[k]).unwrap_or(0);
        out[k] -= 1;
        used -= 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::segments;

    #[test]
    fn segments_fill_the_bar_in_proportion() {
        assert_eq!(segments([7, 2, 1, 0], 10), [7, 2, 1, 0]);
        assert_eq!(segments([1, 0, 0, 0], 9), [9, 0, 0, 0]);
        assert_eq!(segments([0, 0, 0, 0], 9), [0, 0, 0, 0]);
        let s = segments([100, 1, 1, 1], 8);
        assert_eq!(s.iter().sum::<usize>(), 8);
        assert!(s.iter().all(|&c| c >= 1), "{s:?}");
        assert_eq!(segments([3, 3, 3, 0], 4).iter().sum::<usize>(), 4);
    }
}
