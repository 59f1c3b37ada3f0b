//! A tool-using loop read whole: a step's popup (its thought, each call with its
//! arguments, the observation, a spilled observation's stored file) and the
//! conversation view (every message with its role and tokens).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::overlay::{centered, scroll_overlay, wrapped};
use super::text::{fill_rect, keep_visible, pane, put};
use super::theme::Theme;
use crate::base::text::sanitize::sanitize;
use crate::base::text::wrap::pad_or_truncate;
use crate::model::state::loop_view::{LoopCall, LoopStep};
use crate::model::state::RunState;
use crate::tui::app::docs::{Doc, DocKey};
use crate::tui::app::loop_keys::{popup_loop, ConversationList, StepPopup};
use crate::tui::app::UiState;

/// Draws a step's popup over `area`; returns the clamped first line.
pub fn draw_step(
    buf: &mut Buffer,
    area: Rect,
    run: &RunState,
    ui: &mut UiState,
    p: &StepPopup,
    theme: &Theme,
) -> usize {
    let l = popup_loop(run, p.task, &p.invocation);
    let task = run.tasks.get(p.task).map_or("?", |t| &t.id);
    let (title, lines) = match l.and_then(|l| Some((l, l.step(p.step)?))) {
        Some((l, s)) => {
            let k = l.steps.iter().position(|x| x.step == s.step).unwrap_or(0);
            (
                format!(" Step {} ({}/{}) · {task} ", s.step, k + 1, l.steps.len()),
                step_lines(ui, &p.invocation, s),
            )
        }
        None => (
            format!(" Step {} · {task} ", p.step),
            vec!["this step is not in the run on screen".to_string()],
        ),
    };
    let lines = wrapped(&lines, area.width.saturating_sub(8));
    // Where the view is, when the step is longer than the popup (as `scroll_overlay`
    // sizes it: the lines and a border, within the screen less two rows).
    let rows = (lines.len() + 2).min(usize::from(area.height.saturating_sub(2)).max(3)) - 2;
    let title = if lines.len() > rows {
        let top = p.top.min(lines.len() - rows);
        format!(
            "{}· lines {}–{} of {} ",
            title,
            top + 1,
            top + rows,
            lines.len()
        )
    } else {
        title
    };
    scroll_overlay(buf, area, &title, &lines, p.top, theme, ui)
}

/// A step's lines: the keys, the thought, then each call whole.
fn step_lines(ui: &UiState, inv: &std::sync::Arc<str>, s: &LoopStep) -> Vec<String> {
    let mut out = vec![
        "← → the steps before and after · C the conversation · ↑ ↓ PgUp PgDn scroll · esc"
            .to_string(),
        String::new(),
        match s.message_tokens {
            Some(t) => format!("── Thought (the step's message: {t} tokens) ──"),
            None => "── Thought ──".to_string(),
        },
    ];
    if s.thought.trim().is_empty() {
        out.push("(no thought: the model only asked for tools)".into());
    } else {
        out.extend(s.thought.trim_end().lines().map(str::to_string));
    }
    let n = s.calls.len();
    for (k, c) in s.calls.iter().enumerate() {
        out.push(String::new());
        call_lines(
            ui,
            inv,
            c,
            if n > 1 {
                format!(" {}/{n}", k + 1)
            } else {
                String::new()
            },
            &mut out,
        );
    }
    out
}

fn call_lines(
    ui: &UiState,
    inv: &std::sync::Arc<str>,
    c: &LoopCall,
    of: String,
    out: &mut Vec<String>,
) {
    out.push(format!("── Action{of}: {} ──", c.tool));
    let args = serde_json::to_string_pretty(&c.input).unwrap_or_else(|_| c.input.to_string());
    out.extend(args.lines().map(str::to_string));
    out.push(String::new());
    let Some(a) = &c.answer else {
        out.push("── Observation: not back yet ──".into());
        return;
    };
    let level = serde_json::to_value(a.output_level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    out.push(format!(
        "── Observation{} · {level} · {:.0} ms · {} tokens{}{} ──",
        if a.is_error { " (error)" } else { "" },
        a.duration_ms,
        a.output_tokens,
        if a.retries > 0 {
            format!(" · {} retries", a.retries)
        } else {
            String::new()
        },
        if a.cached { " · cached" } else { "" },
    ));
    if a.observation.trim().is_empty() {
        out.push("(empty)".into());
    } else {
        out.extend(a.observation.trim_matches('\n').lines().map(str::to_string));
    }
    for note in &c.notes {
        out.push(format!("✦ {note}"));
    }
    if let Some(path) = &a.data_file {
        out.push(String::new());
        out.push(format!(
            "── Stored file: {path} ({} bytes) ──",
            a.data_size_bytes
        ));
        match ui
            .docs
            .get(&DocKey::DataFile(inv.clone(), path.as_str().into()))
        {
            Some(Doc::Ready(t)) => out.extend(t.lines().map(str::to_string)),
            Some(Doc::Missing(why)) => out.push(format!("⚠ {why}")),
            Some(Doc::Loading) | None => out.push("loading…".into()),
        }
    }
}

/// Draws the conversation view over `area`; returns the clamped first row.
pub fn draw_conversation(
    buf: &mut Buffer,
    area: Rect,
    run: &RunState,
    ui: &mut UiState,
    c: &ConversationList,
    theme: &Theme,
) -> usize {
    let Some(l) = popup_loop(run, c.task, &c.invocation) else {
        let lines = vec!["this loop is not in the run on screen".to_string()];
        return scroll_overlay(buf, area, " Conversation ", &lines, 0, theme, ui);
    };
    let rows = l.conversation();
    let task = run.tasks.get(c.task).map_or("?", |t| &t.id);
    let w = area.width.saturating_sub(4).clamp(10, 120);
    let width = w.saturating_sub(3);
    let mut head = vec![
        "every message of the loop, in order · Enter opens a message's step · ↑ ↓ move · esc"
            .to_string(),
    ];
    if let Some(f) = &l.finished {
        head.push(format!(
            "ended ({}): {} steps · {} tool calls · {} compressions · prompts {} tokens · model text {} tokens",
            f.stop.replace('_', " "),
            f.steps,
            f.tool_calls,
            f.compressions,
            f.input_tokens,
            f.output_tokens
        ));
    }
    let head = wrapped(&head, width);
    // The selected message whole, under the list (its row may be cut).
    let selected = c.selected.min(rows.len().saturating_sub(1));
    let whole = rows
        .get(selected)
        .map(|r| wrapped(&[format!("▸ {}", r.text)], width))
        .unwrap_or_default();
    let whole: Vec<String> = whole.into_iter().take(4).collect();
    let want = u16::try_from(head.len() + rows.len() + whole.len() + 3).unwrap_or(u16::MAX);
    let h = want.min(area.height.saturating_sub(2)).max(3);
    let r = centered(area, w, h);
    Clear.render(r, buf);
    fill_rect(buf, r, theme.style_base());
    let title = format!("Conversation · {task} · {} messages", rows.len());
    let inner = pane(buf, r, &title, true, theme);
    let x = inner.x + 1;
    let mut y = inner.y;
    for line in head {
        if y >= inner.bottom() {
            break;
        }
        put(buf, x, y, width, &line, theme.muted());
        y += 1;
    }
    if y < inner.bottom() {
        put(
            buf,
            x,
            y,
            width,
            &format!("{:<13} {:>7}  message", "role", "tokens"),
            theme.accent(),
        );
        y += 1;
    }
    let bottom = inner.bottom().saturating_sub(whole.len() as u16).max(y + 1);
    for (k, line) in whole.iter().enumerate() {
        let row = bottom + k as u16;
        if row < inner.bottom() {
            put(buf, x, row, width, line, theme.accent());
        }
    }
    let list_rows = bottom.min(inner.bottom()).saturating_sub(y) as usize;
    ui.list_rows = list_rows.max(1);
    let top = keep_visible(selected, c.top, list_rows.max(1))
        .min(rows.len().saturating_sub(list_rows.max(1)));
    for (k, row) in rows.iter().enumerate().skip(top).take(list_rows) {
        let tokens = row.tokens.map_or("—".to_string(), |t| t.to_string());
        let text = format!("{:<13} {:>7}  {}", row.role, tokens, sanitize(&row.text));
        let style = if k == selected {
            theme.selected()
        } else if row.role == "tool" && row.text.contains("(error)") {
            theme.warn()
        } else {
            theme.style_base()
        };
        let cut = pad_or_truncate(&text, width as usize);
        put(buf, x, y, width, &cut, style);
        y += 1;
    }
    top
}
