//! The similarity heat map of a round: the pairwise matrix with agent labels, each
//! cell's value printed on a background coloured by the session's thresholds, the most
//! different pair marked `◆`, the mean, and each agent's similarity to its own previous
//! position.

use ratatui::style::{Modifier, Style};

use super::labels::{agent_style, similarity_color};
use super::lines::{num, Line, Lines};
use crate::base::protocol::debate_spec::Thresholds;
use crate::base::text::sanitize::sanitize;
use crate::base::text::wrap::pad_or_truncate;
use crate::model::event::debate::PositionsCompared;
use crate::model::state::debate::RoundView;
use crate::tui::ui::theme::Theme;

/// Columns of one cell (`0.64◆` with a space either side, then a gap).
const CELL: usize = 8;

/// The heat map's lines for `round` in a pane `width` wide; `detail` adds the method.
pub fn lines(
    width: u16,
    round: Option<&RoundView>,
    t: &Thresholds,
    detail: bool,
    theme: &Theme,
) -> Lines {
    let mut out = Lines::new(width);
    let Some(c) = round.and_then(|r| r.comparison.as_ref()) else {
        out.push(vec![("positions not compared yet".into(), theme.muted())]);
        return out;
    };
    let n = c.agents.len();
    let label_w = c
        .agents
        .iter()
        .map(|a| crate::base::text::sanitize::display_width(&sanitize(a.as_str())))
        .max()
        .unwrap_or(0)
        .clamp(4, 10);
    let mut head: Line = vec![(" ".repeat(label_w + 1), theme.style_base())];
    for a in &c.agents {
        head.push((
            format!(" {}", pad_or_truncate(&sanitize(a.as_str()), CELL - 1)),
            agent_style(a, theme),
        ));
    }
    out.push(head);
    for i in 0..n {
        out.push(matrix_row(c, i, label_w, t, theme));
    }
    if c.similarity_matrix.len() != n || c.similarity_matrix.iter().any(|r| r.len() != n) {
        out.push(vec![(
            "matrix unreadable: sizes differ".into(),
            theme.error(),
        )]);
    }
    out.push(mean_line(c, t, detail, theme));
    out.push(self_line(c, t, detail, theme));
    if detail {
        out.push(vec![(
            format!(
                "{} ({}) · {} embedded, {} cached",
                c.method, c.embedder, c.embedded, c.cached
            ),
            theme.muted(),
        )]);
    }
    out
}

/// Agent `i`'s row of the matrix: its label, then its similarity to each agent on a
/// background coloured by the thresholds, `◆` on the most different pair.
fn matrix_row(
    c: &PositionsCompared,
    i: usize,
    label_w: usize,
    t: &Thresholds,
    theme: &Theme,
) -> Line {
    let n = c.agents.len();
    let pair = c.most_different_pair;
    let marked =
        |i: usize, j: usize| n > 1 && pair[0] != pair[1] && (pair == [i, j] || pair == [j, i]);
    let a = &c.agents[i];
    let mut row: Line = vec![(
        format!("{} ", pad_or_truncate(&sanitize(a.as_str()), label_w)),
        agent_style(a, theme),
    )];
    for j in 0..n {
        let v = c
            .similarity_matrix
            .get(i)
            .and_then(|r| r.get(j))
            .copied()
            .unwrap_or(f64::NAN);
        let mark = if marked(i, j) { "◆" } else { " " };
        let style = if i == j {
            theme.muted().add_modifier(Modifier::DIM)
        } else if v.is_finite() {
            theme.badge(similarity_color(v, t, theme))
        } else {
            theme.muted()
        };
        let text = if v.is_finite() { num(v) } else { " ?  ".into() };
        row.push((format!(" {text}{mark} "), style));
        row.push((" ".into(), theme.style_base()));
    }
    row
}

/// The mean similarity, and which pair is the most different.
fn mean_line(c: &PositionsCompared, t: &Thresholds, detail: bool, theme: &Theme) -> Line {
    let pair = c.most_different_pair;
    let mut mean: Line = vec![
        ("mean ".into(), theme.muted()),
        (
            num(c.mean_similarity),
            Style::new().fg(similarity_color(c.mean_similarity, t, theme)),
        ),
    ];
    if let (Some(a), Some(b)) = (c.agents.get(pair[0]), c.agents.get(pair[1])) {
        if pair[0] != pair[1] {
            let what = if detail {
                " · ◆ most different pair "
            } else {
                " · ◆ "
            };
            mean.push((
                format!("{what}{} ↔ {}", sanitize(a.as_str()), sanitize(b.as_str())),
                theme.muted(),
            ));
        }
    }
    mean
}

/// Each agent's similarity to its own previous position, warned when stubborn; or that
/// this is the first round.
fn self_line(c: &PositionsCompared, t: &Thresholds, detail: bool, theme: &Theme) -> Line {
    if c.self_similarity.is_empty() {
        return vec![("self: first round".into(), theme.muted())];
    }
    let what = if detail {
        "self vs last round "
    } else {
        "self "
    };
    let mut l: Line = vec![(what.into(), theme.muted())];
    for (k, (a, v)) in c.self_similarity.iter().enumerate() {
        let sep = if k > 0 { " · " } else { "" };
        l.push((format!("{sep}{} ", sanitize(a)), theme.muted()));
        let stubborn = *v > t.stubborn_self_similarity;
        l.push((
            num(*v),
            if stubborn {
                theme.warn()
            } else {
                theme.style_base()
            },
        ));
    }
    l
}
