//! The Runs screen: runs in the database, newest first, with status, time and counts;
//! Enter opens one read-only from its log.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::text::{fill, put};
use super::theme::Theme;
use crate::app::UiState;
use crate::text::wrap::pad_or_truncate;

/// Draws the runs list into `inner`.
pub fn draw(buf: &mut Buffer, inner: Rect, ui: &mut UiState, theme: &Theme) {
    if inner.height < 2 {
        return;
    }
    let mut y = inner.y;
    let w = inner.width as usize;
    let plan_w = w.saturating_sub(24 + 12 + 17 + 7 + 8 + 7 + 2).min(40);
    let header = format!(
        "{:<24}{:<12}{:<17}{:>7}{:>8}{:>7}  {}",
        "run",
        "status",
        "created",
        "tasks",
        "events",
        "atoms",
        pad_or_truncate("plan", plan_w)
    );
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &header,
        theme.title().add_modifier(Modifier::BOLD),
    );
    y += 1;
    let rows = inner.bottom().saturating_sub(y) as usize;
    ui.list_rows = rows;
    if let Some(e) = &ui.runs.error {
        put(buf, inner.x, y, inner.width, e, theme.error());
        return;
    }
    let Some(list) = &ui.runs.rows else {
        put(buf, inner.x, y, inner.width, "loading…", theme.muted());
        return;
    };
    if list.is_empty() {
        put(
            buf,
            inner.x,
            y,
            inner.width,
            "no runs in this database yet",
            theme.muted(),
        );
        return;
    }
    let selected = ui.runs.selected.min(list.len() - 1);
    let top = super::text::keep_visible(selected, ui.runs.top, rows);
    ui.layout.list = Some((Rect::new(inner.x, y, inner.width, rows as u16), top));
    for (k, run) in list.iter().enumerate().skip(top).take(rows) {
        let style = if k == selected {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, style);
        let created: String = run
            .created_at
            .chars()
            .take(16)
            .collect::<String>()
            .replace('T', " ");
        let mut x = inner.x;
        let marked = ui.runs.marked.as_deref() == Some(&*run.run_id);
        let id = if marked {
            format!("◆ {}", run.run_id)
        } else {
            run.run_id.clone()
        };
        x += put(buf, x, y, 24, &pad_or_truncate(&id, 23), style) + 1;
        let st = if k == selected {
            style
        } else {
            theme.status(run_status_role(&run.status))
        };
        x += put(buf, x, y, 12, &format!("{:<12}", run.status), st);
        let rest = format!(
            "{:<17}{:>7}{:>8}{:>7}  {}",
            created,
            run.task_count,
            run.events,
            run.atoms,
            // A debate names its question (kept as the run's plan source).
            pad_or_truncate(
                &crate::text::sanitize::sanitize(if run.plan_id == "debate" {
                    &run.plan_source
                } else {
                    &run.plan_id
                }),
                plan_w
            )
        );
        put(buf, x, y, inner.right().saturating_sub(x), &rest, style);
        y += 1;
    }
    ui.runs.selected = selected;
    ui.runs.top = top;
}

/// The task-status colour role that matches a run status.
fn run_status_role(s: &str) -> &'static str {
    match s {
        "succeeded" => "success",
        "partial" => "partial",
        "failed" => "failed",
        // A decision waits: warn, like a partial outcome, not an error.
        "awaiting_review" => "partial",
        "running" => "running",
        "paused" => "ready",
        "cancelled" => "cancelled",
        _ => "pending",
    }
}
