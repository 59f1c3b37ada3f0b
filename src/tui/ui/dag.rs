//! The Plan DAG pane: tasks in dependency layers (one gutter label per layer), status
//! glyph and colour, attempt count, the selected task's edges marked (▲ upstream,
//! ▼ downstream) and listed on the last line. Only visible lines are built.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::fit::{fit_line, Part};
use super::text::{put, title_room};
use super::theme::Theme;
use crate::model::event::TaskStatus;
use crate::model::state::RunState;
use crate::tui::app::UiState;

/// Braille spinner frames for running tasks.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The glyph of a status (running tasks animate with `tick`).
pub fn glyph(s: TaskStatus, tick: u64) -> &'static str {
    match s {
        TaskStatus::Pending => "○",
        TaskStatus::Ready => "◇",
        TaskStatus::Running => SPINNER[(tick % SPINNER.len() as u64) as usize],
        TaskStatus::Success => "✔",
        TaskStatus::Partial => "◑",
        TaskStatus::Failed => "✘",
        TaskStatus::Timeout => "◷",
        TaskStatus::Blocked => "⊘",
        TaskStatus::Cancelled => "–",
    }
}

const GUTTER: u16 = 4;

/// Geometry of the layered layout for a pane width.
struct Grid {
    cell: u16,
    per_line: usize,
    /// First line of each layer.
    starts: Vec<usize>,
    lines: usize,
}

fn grid(run: &RunState, width: u16) -> Grid {
    let longest = run
        .tasks
        .iter()
        .map(|t| crate::base::text::sanitize::display_width(&t.id))
        .max()
        .unwrap_or(4)
        .min(64) as u16;
    let usable = width.saturating_sub(GUTTER).max(1);
    let cell = (longest + 6).clamp(10, 34).min(usable);
    let per_line = (usable / cell).max(1) as usize;
    let mut starts = Vec::with_capacity(run.layers.len());
    let mut lines = 0;
    for l in run.layers.iter() {
        starts.push(lines);
        lines += l.len().div_ceil(per_line).max(1);
    }
    Grid {
        cell,
        per_line,
        starts,
        lines,
    }
}

/// The glyph of a task that failed and waits for a person's review.
pub const REVIEW_GLYPH: &str = "?";

/// `▶2 ✔3 ✘1 ?1 ⊘1`: the tasks per status, with the glyphs the DAG draws (only the
/// statuses that occur; pending and ready left out; failed tasks waiting for review
/// counted apart, as `?`).
pub fn status_counts(run: &RunState) -> String {
    let mut shown = Vec::new();
    let waiting = run.awaiting_review;
    for s in [
        TaskStatus::Running,
        TaskStatus::Success,
        TaskStatus::Partial,
        TaskStatus::Failed,
        TaskStatus::Timeout,
        TaskStatus::Blocked,
        TaskStatus::Cancelled,
    ] {
        let mut n = run.count(s);
        if s == TaskStatus::Failed {
            n = n.saturating_sub(waiting);
        }
        if s == TaskStatus::Timeout && waiting > 0 {
            shown.push(format!("{REVIEW_GLYPH}{waiting}"));
        }
        if n > 0 {
            let g = if s == TaskStatus::Running {
                "▶"
            } else {
                glyph(s, 0)
            };
            shown.push(format!("{g}{n}"));
        }
    }
    shown.join(" ")
}

/// The pane's title for a pane `width` wide: `Plan DAG · follow · 5 tasks · 5 layers ·
/// ✔3 ✘1 ⊘1`; on a narrow pane the counts stay longest, the layers go first, then
/// `follow`, then the tasks.
pub fn title(run: &RunState, ui: &UiState, width: u16) -> String {
    let mut parts = vec![Part::new("Plan DAG", 100)];
    if ui.follow {
        parts.push(Part::new("follow", 60));
    }
    parts.push(Part::new(format!("{} tasks", run.tasks.len()), 70));
    parts.push(Part::new(format!("{} layers", run.layers.len()), 50));
    let counts = status_counts(run);
    if !counts.is_empty() {
        parts.push(Part::new(counts, 90));
    }
    fit_line(&parts, title_room(width), " · ")
}

/// Draws the DAG into `inner` (the pane without its border); keeps the selection visible.
pub fn draw(buf: &mut Buffer, inner: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    if run.tasks.is_empty() {
        put(
            buf,
            inner.x,
            inner.y,
            inner.width,
            "waiting for the plan…",
            theme.muted(),
        );
        return;
    }
    let g = grid(run, inner.width);
    ui.dag_per_line = g.per_line;
    let sel = ui.task.min(run.tasks.len() - 1);
    let sel_task = &run.tasks[sel];
    let rows = inner.height.saturating_sub(1).max(1) as usize;
    let sel_layer = (sel_task.layer as usize).min(run.layers.len().saturating_sub(1));
    let sel_pos = run.layers[sel_layer]
        .iter()
        .position(|&t| t == sel)
        .unwrap_or(0);
    let sel_line = g.starts.get(sel_layer).copied().unwrap_or(0) + sel_pos / g.per_line;
    if sel_line < ui.dag_top {
        ui.dag_top = sel_line;
    } else if sel_line >= ui.dag_top + rows {
        ui.dag_top = sel_line + 1 - rows;
    }
    ui.dag_top = ui.dag_top.min(g.lines.saturating_sub(rows));
    let top = ui.dag_top;
    // First visible layer.
    let mut layer = match g.starts.binary_search(&top) {
        Ok(l) => l,
        Err(l) => l.saturating_sub(1),
    };
    let mut y = inner.y;
    let mut line = top;
    while y < inner.y + rows as u16 && layer < run.layers.len() {
        let start = g.starts[layer];
        let k = line - start;
        let row = &run.layers[layer];
        if k == 0 {
            put(
                buf,
                inner.x,
                y,
                GUTTER,
                &format!("{layer:>3} "),
                theme.muted(),
            );
        } else {
            put(buf, inner.x, y, GUTTER, "    ", theme.muted());
        }
        let from = k * g.per_line;
        for (c, &t) in row.iter().skip(from).take(g.per_line).enumerate() {
            let x = inner.x + GUTTER + c as u16 * g.cell;
            draw_cell(buf, x, y, g.cell, run, ui, theme, t, sel);
            ui.layout.dag_cells.push((Rect::new(x, y, g.cell, 1), t));
        }
        line += 1;
        y += 1;
        if line >= start + row.len().div_ceil(g.per_line).max(1) {
            layer += 1;
        }
    }
    // The selected task's edges.
    let bottom = inner.y + inner.height - 1;
    if inner.height > 1 {
        let ups: Vec<&str> = sel_task
            .deps
            .iter()
            .map(|&d| &*run.tasks[d as usize].id)
            .collect();
        let downs: Vec<&str> = sel_task
            .dependents
            .iter()
            .map(|&d| &*run.tasks[d as usize].id)
            .collect();
        let text = format!(
            "▲ {}  ▼ {}",
            if ups.is_empty() {
                "—".into()
            } else {
                ups.join(", ")
            },
            if downs.is_empty() {
                "—".into()
            } else {
                downs.join(", ")
            }
        );
        put(buf, inner.x, bottom, inner.width, &text, theme.muted());
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_cell(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    cell: u16,
    run: &RunState,
    ui: &UiState,
    theme: &Theme,
    t: usize,
    sel: usize,
) {
    let task = &run.tasks[t];
    let sel_task = &run.tasks[sel];
    let edge = u32::try_from(t).ok();
    let mark = if edge.is_some_and(|t| sel_task.deps.contains(&t)) {
        "▲"
    } else if edge.is_some_and(|t| sel_task.dependents.contains(&t)) {
        "▼"
    } else {
        " "
    };
    let status_style = theme.status(task.status.as_str());
    let activity = task.activity(super::status::screen_now(run, ui));
    let stalled = activity.is_some_and(|a| a.stalled());
    put(buf, x, y, 1, mark, theme.accent());
    put(
        buf,
        x + 1,
        y,
        1,
        if stalled {
            "⏸"
        } else if task.awaiting_review {
            REVIEW_GLYPH
        } else {
            glyph(task.status, ui.tick + t as u64)
        },
        if stalled || task.awaiting_review {
            theme.warn()
        } else {
            status_style
        },
    );
    let id_len = crate::base::text::sanitize::display_width(&task.id).min(3) as u16;
    // What follows the id, whole or not at all (the glyph still says it), never cut: the
    // longest form that leaves the id three columns.
    let forms = match activity {
        // A stalled invocation says for how long it has been quiet.
        Some(a) if a.stalled() => a
            .quiet_forms()
            .into_iter()
            .map(|f| format!(" {f}"))
            .collect(),
        _ if task.attempts > 1 => vec![format!("×{}", task.attempts)],
        _ => Vec::new(),
    };
    let attempts = forms
        .into_iter()
        .find(|f| cell >= 4 + id_len + f.chars().count() as u16)
        .unwrap_or_default();
    let id_w = cell.saturating_sub(4 + attempts.chars().count() as u16) as usize;
    let clean = crate::base::text::sanitize::sanitize(&task.id);
    let id = crate::base::text::wrap::middle_cut(&clean, id_w);
    let mut style = status_style;
    if t == sel {
        style = theme.selected().add_modifier(Modifier::BOLD);
    }
    let used = put(buf, x + 3, y, id_w as u16, &id, style);
    if !attempts.is_empty() {
        put(
            buf,
            x + 3 + used,
            y,
            cell.saturating_sub(3 + used),
            &attempts,
            theme.warn(),
        );
    }
}
