//! The Agent output pane: the selected task's raw stream (following the tail until the
//! person scrolls), its parsed atoms, its full request, or its quality issues. Only the
//! visible lines are sanitized and wrapped.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::fit::{fit_line, Part};
use super::text::{put, title_room};
use super::theme::Theme;
use crate::base::text::wrap::wrap_ranges;
use crate::model::state::{RunState, TaskView};
use crate::tui::app::ui_state::{Doc, DocKey, OutputView};
use crate::tui::app::UiState;

/// The pane's title for a pane `width` wide: `Output · TASK · agent · raw · attempt 2/3
/// ([ ]) · scrolled (G follows)`; on a narrow pane the task, the attempt and the scroll
/// stay longest, the agent and the view's name go first.
pub fn title(run: &RunState, ui: &UiState, width: u16) -> String {
    let Some(t) = run.tasks.get(ui.task) else {
        return "Output".into();
    };
    let mut parts = vec![Part::new("Output", 100), Part::new(t.id.to_string(), 95)];
    if let Some(a) = run.agents.get(t.agent).filter(|a| !a.name.is_empty()) {
        parts.push(Part::new(&*a.name, 40));
    }
    parts.push(Part::new(ui.view.title(), 50));
    if let Some((_, k, n)) = ui.shown_invocation(t).filter(|(_, _, n)| *n > 1) {
        parts.push(Part::new(format!("attempt {k}/{n} ([ ])"), 90).or(format!("attempt {k}/{n}")));
    }
    if !ui.scroll.follow {
        parts.push(Part::new("scrolled (G follows)", 60).or("scrolled"));
    }
    fit_line(&parts, title_room(width), " · ")
}

/// A source of logical lines.
trait Lines {
    fn count(&self) -> usize;
    fn get(&self, i: usize) -> &str;
}

impl Lines for crate::model::state::OutputBuffer {
    fn count(&self) -> usize {
        self.len()
    }
    fn get(&self, i: usize) -> &str {
        self.line(i)
    }
}

impl Lines for Vec<&str> {
    fn count(&self) -> usize {
        self.len()
    }
    fn get(&self, i: usize) -> &str {
        self[i]
    }
}

/// The invocation an output view shows: its id, which attempt it is and how many there are.
type Shown = Option<(std::sync::Arc<str>, usize, usize)>;

/// Draws the output of the selected task into `inner`.
pub fn draw(buf: &mut Buffer, inner: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    ui.output_rows = inner.height as usize;
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let Some(task) = run.tasks.get(ui.task) else {
        put(
            buf,
            inner.x,
            inner.y,
            inner.width,
            "no task selected",
            theme.muted(),
        );
        return;
    };
    let shown = ui.shown_invocation(task);
    match ui.view {
        OutputView::Raw if ui.earlier_attempt(task) => {
            let (inv, k, n) = shown.clone().unwrap_or_else(|| ("?".into(), 0, 0));
            let text = doc_text(ui, &DocKey::Stream(inv.clone()));
            let header =
                format!("── attempt {k}/{n} · {inv} · read back from the log (] goes on) ──");
            let mut lines: Vec<&str> = vec![&header];
            lines.extend(text.lines());
            draw_lines(buf, inner, &lines, ui, theme);
        }
        OutputView::Raw => draw_raw(buf, inner, run, task, ui, theme),
        OutputView::Issues => draw_issues(buf, inner, task, &shown, ui, theme),
        OutputView::Context => {
            let text = context_lines(task);
            let lines: Vec<&str> = text.iter().map(String::as_str).collect();
            draw_lines(buf, inner, &lines, ui, theme);
        }
        OutputView::Atoms | OutputView::Request => {
            let key = shown.map(|(inv, _, _)| match ui.view {
                OutputView::Atoms => DocKey::Atoms(inv),
                _ => DocKey::Request(inv),
            });
            let text = key.map_or_else(|| "no invocation yet".into(), |k| doc_text(ui, &k));
            let lines: Vec<&str> = text.lines().collect();
            draw_lines(buf, inner, &lines, ui, theme);
        }
    }
}

/// The latest attempt's live stream: what the invocation is doing, how many earlier
/// lines are only in the log, then the stream (folded where the person folded it).
fn draw_raw(
    buf: &mut Buffer,
    inner: Rect,
    run: &RunState,
    task: &TaskView,
    ui: &mut UiState,
    theme: &Theme,
) {
    let mut area = inner;
    // A running invocation: how long it runs, how long it has been quiet.
    if let Some(a) = task.activity(super::status::screen_now(run, ui)) {
        let style = if a.stalled() {
            theme.warn()
        } else {
            theme.muted()
        };
        // Left out from the right, a part at a time: a figure is never cut.
        let parts: Vec<Part> = (a.parts().into_iter().enumerate())
            .map(|(i, p)| Part::new(p, 9u8.saturating_sub(i as u8)))
            .collect();
        let line = fit_line(&parts, usize::from(area.width), " · ");
        put(buf, area.x, area.y, area.width, &line, style);
        area.y += 1;
        area.height = area.height.saturating_sub(1);
    }
    if task.spilled || task.output.dropped() > 0 {
        let text = format!(
            "… {} earlier line(s) are in the log{}",
            task.output.dropped(),
            if task.spilled { " (loading…)" } else { "" }
        );
        put(buf, area.x, area.y, area.width, &text, theme.muted());
        area.y += 1;
        area.height = area.height.saturating_sub(1);
    }
    if task.output.is_empty() {
        // Wrapped, not cut: a blocked task's reason is read whole.
        let msg = crate::base::text::sanitize::sanitize(&waiting_text(task));
        let rows = wrap_ranges(&msg, area.width);
        for (k, r) in rows.into_iter().take(usize::from(area.height)).enumerate() {
            let row = msg[r].trim_end();
            put(
                buf,
                area.x,
                area.y + k as u16,
                area.width,
                row,
                theme.muted(),
            );
        }
        return;
    }
    match ui.folds.get(&ui.task).cloned() {
        Some(folds) if folds.any() => {
            let out = &task.output;
            let lines = super::loop_fold::fold_lines(out.len(), |i| out.line(i), &folds);
            let lines: Vec<&str> = lines.iter().map(|l| l.as_ref()).collect();
            draw_lines(buf, area, &lines, ui, theme);
        }
        _ => draw_lines(buf, area, &task.output, ui, theme),
    }
}

/// The quality issues of the shown attempt: which attempt (or the latest invocation's
/// figures), the task's notes, then the issues document.
fn draw_issues(
    buf: &mut Buffer,
    inner: Rect,
    task: &TaskView,
    shown: &Shown,
    ui: &mut UiState,
    theme: &Theme,
) {
    let mut lines: Vec<&str> = Vec::new();
    let header;
    let latest = !ui.earlier_attempt(task);
    if let (Some((inv, k, n)), false) = (shown, latest) {
        header = format!(
            "attempt {k}/{n} · {inv} (the quality check and errors below are this attempt's)"
        );
        lines.push(&header);
    } else if let Some(last) = &task.last {
        header = format!(
            "latest invocation: {} · {} atom(s) · avg score {:.2} · {} issue(s)",
            last.status.map_or("stopped", |s| s.as_str()),
            last.atoms,
            last.avg_score,
            last.issues
        );
        lines.push(&header);
    }
    for n in &task.notes {
        lines.push(n);
    }
    let doc = shown
        .clone()
        .map(|(inv, _, _)| doc_text(ui, &DocKey::Issues(inv)));
    let doc = doc.unwrap_or_else(|| "no invocation yet".into());
    lines.push("");
    lines.extend(doc.lines());
    draw_lines(buf, inner, &lines, ui, theme);
}

/// The context report of a task as a table: each input with its tokens, priority, mode,
/// action and tokens after; then the limit and whether it fits (seed 000 §7.2).
pub fn context_lines(task: &TaskView) -> Vec<String> {
    let Some(c) = &task.context else {
        return vec![
            "no context plan: no data references, and the prompt is far below the agent's limit"
                .into(),
        ];
    };
    let r = &c.report;
    let mut out = vec![format!(
        "{:<21} {:>7} {:>4} {:<9} {:<14} {:>7}",
        "input", "tokens", "prio", "mode", "action", "after"
    )];
    for i in &c.inputs {
        out.push(format!(
            "{:<21} {:>7} {:>4} {:<9} {:<14} {:>7}",
            crate::base::text::wrap::pad_or_truncate(
                &crate::base::text::wrap::middle_cut(&i.name, 21),
                21
            ),
            i.tokens,
            i.priority,
            format!("{:?}{}", i.mode, if i.batched { "*" } else { "" }).to_lowercase(),
            crate::base::text::wrap::pad_or_truncate(&i.action, 14),
            i.tokens_after
        ));
    }
    for (name, size) in &r.total_input_data {
        if name == "system_prompt" || name == "task_instructions" {
            out.push(format!(
                "{:<21} {:>7} {:>4} {:<9} {:<14} {:>7}",
                name, size.tokens, size.priority, "—", "keep", size.tokens
            ));
        }
    }
    out.push(String::new());
    out.push(format!(
        "inputs {} tokens · limit {} · overflow {}",
        r.total_tokens, r.context_limit, r.overflow
    ));
    let inputs = r.resolution.final_tokens;
    if task.prompt_tokens >= inputs && task.prompt_tokens > 0 {
        out.push(format!(
            "the prompt as sent: {} tokens = the inputs after trimming ({inputs}) + {} of request framing (output requirements, constraints, JSON)",
            task.prompt_tokens,
            task.prompt_tokens - inputs
        ));
    } else if task.prompt_tokens > 0 {
        out.push(format!(
            "the prompt as sent: {} tokens (the inputs after trimming: {inputs})",
            task.prompt_tokens
        ));
    }
    out.push(format!(
        "{} → {} tokens · within limit: {}",
        r.resolution.strategy,
        r.resolution.final_tokens,
        if r.resolution.within_limit {
            "yes"
        } else {
            "NO"
        }
    ));
    for a in &r.resolution.actions {
        out.push(format!(
            "  {} {}{}: {} → {}",
            a.action,
            a.data,
            a.filter
                .as_deref()
                .map(|f| format!(" ({f})"))
                .unwrap_or_default(),
            a.original_tokens,
            a.reduced_tokens
        ));
    }
    if c.inputs.iter().any(|i| i.batched) {
        out.push("* over 50,000 tokens: passed by reference in batches".into());
    }
    out
}

fn waiting_text(task: &TaskView) -> String {
    use crate::model::event::TaskStatus::*;
    match task.status {
        Pending => "waiting for its dependencies".into(),
        Ready => "ready: waiting for a free slot".into(),
        Running => "running: waiting for the first chunk…".into(),
        // The note says `E006: blocked: …` already.
        Blocked => task.notes.last().map_or_else(
            || "blocked: an upstream task failed".into(),
            |n| n.to_string(),
        ),
        s => format!("{}: no output", s.as_str()),
    }
}

/// The text of a loaded document, or what is happening to it.
fn doc_text(ui: &UiState, key: &DocKey) -> std::sync::Arc<str> {
    match ui.docs.get(key) {
        Some(Doc::Ready(t)) => t.clone(),
        Some(Doc::Missing(why)) => why.as_str().into(),
        Some(Doc::Loading) | None => "loading…".into(),
    }
}

/// Draws logical lines wrapped to the width, following the tail when `ui.scroll.follow`,
/// otherwise from `ui.scroll.top` (clamped so the last page stays full).
fn draw_lines<L: Lines>(buf: &mut Buffer, area: Rect, lines: &L, ui: &mut UiState, theme: &Theme) {
    let n = lines.count();
    let h = area.height as usize;
    if h == 0 || n == 0 {
        return;
    }
    let base = theme.style_base();
    // The first logical line of the last page, found by wrapping backwards.
    let mut rows = 0;
    let mut last_top = n;
    while last_top > 0 && rows < h {
        last_top -= 1;
        rows += wrapped_count(lines.get(last_top), area.width);
    }
    let skip_rows_at_top = rows.saturating_sub(h);
    if ui.scroll.follow || ui.scroll.top >= last_top {
        if !ui.scroll.follow && ui.scroll.top > last_top {
            ui.scroll.top = last_top;
        }
        if ui.scroll.top >= last_top {
            ui.scroll.follow = true;
        }
        ui.scroll.top = last_top;
        render_from(buf, area, lines, last_top, skip_rows_at_top, base);
    } else {
        render_from(buf, area, lines, ui.scroll.top, 0, base);
    }
}

fn wrapped_count(line: &str, width: u16) -> usize {
    let clean = crate::base::text::sanitize::sanitize_cow(line);
    // A line no wider than the pane in bytes, or in columns, takes one row.
    if clean.len() <= width as usize
        || unicode_width::UnicodeWidthStr::width(clean.as_ref()) <= width as usize
    {
        return 1;
    }
    wrap_ranges(&clean, width).len()
}

fn render_from<L: Lines>(
    buf: &mut Buffer,
    area: Rect,
    lines: &L,
    first: usize,
    mut skip: usize,
    style: Style,
) {
    let mut y = area.y;
    let mut i = first;
    while y < area.bottom() && i < lines.count() {
        let clean = crate::base::text::sanitize::sanitize_cow(lines.get(i));
        let style = if clean.starts_with("──") || clean.starts_with('↻') || clean.starts_with('⚠')
        {
            style.add_modifier(ratatui::style::Modifier::DIM)
        } else {
            style
        };
        for r in wrap_ranges(&clean, area.width) {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if y >= area.bottom() {
                break;
            }
            buf.set_stringn(area.x, y, &clean[r], area.width as usize, style);
            y += 1;
        }
        i += 1;
    }
}
