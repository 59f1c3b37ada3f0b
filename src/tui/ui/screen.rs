//! The whole frame: tab bar, the current screen, the status bar and overlays.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::widgets::{Clear, Widget};
use ratatui::Frame;

use super::fit::{fit_line, Part};
use super::overlay::{centered, scroll_overlay, wrapped};
use super::text::{fill, paint, pane, put};
use super::theme::Theme;
use super::{atoms, budget, dag, failures, help, output, quality, runs};
use crate::model::state::RunState;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::ui_state::{Overlay, Pane, Question};
use crate::tui::app::{Screen, UiState};

/// Draws one frame.
pub fn draw(frame: &mut Frame, run: &RunState, ui: &mut UiState, theme: &Theme, keys: &Keymap) {
    let area = frame.area();
    draw_buffer(frame.buffer_mut(), area, run, ui, theme, keys);
}

/// Draws into a buffer (what `draw` does, usable without a terminal).
pub fn draw_buffer(
    buf: &mut Buffer,
    area: Rect,
    run: &RunState,
    ui: &mut UiState,
    theme: &Theme,
    keys: &Keymap,
) {
    paint(buf, area, theme.style_base());
    ui.layout = Default::default();
    if area.height < 4 || area.width < 20 {
        put(
            buf,
            area.x,
            area.y,
            area.width,
            "terminal too small",
            theme.warn(),
        );
        return;
    }
    let (header, body, status) = frame_rows(area);
    draw_header(buf, header, run, ui, theme);
    draw_screen(buf, body, run, ui, theme);
    super::status::draw(buf, status, run, ui, theme);
    super::completions::draw(buf, area, status, ui, theme);
    draw_overlay(buf, area, run, ui, theme, keys);
}

/// Draws the current screen into `body`.
fn draw_screen(buf: &mut Buffer, body: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    match ui.screen {
        Screen::Run if run.debate.is_some() => super::debate::draw(buf, body, run, ui, theme),
        Screen::Run => draw_run(buf, body, run, ui, theme),
        Screen::Atoms => {
            let inner = pane(buf, body, "Atoms", true, theme);
            atoms::draw(buf, inner, run, ui, theme);
        }
        Screen::Runs => {
            let inner = pane(
                buf,
                body,
                "Runs in this database (enter replays · d marks one, d on another compares)",
                true,
                theme,
            );
            runs::draw(buf, inner, ui, theme);
        }
        Screen::Failures if ui.failures.review => {
            let title = failures::queue_title(&ui.failures, ui.review_scope().is_some());
            let inner = pane(buf, body, &title, true, theme);
            failures::draw_queue(buf, inner, ui, theme);
        }
        Screen::Failures => {
            let title = failures::title(&ui.failures, run.awaiting_review, body.width);
            let inner = pane(buf, body, &title, true, theme);
            failures::draw(buf, inner, ui, theme);
        }
    }
}

/// Draws the open overlay, if any, over the frame `area`, keeping where it scrolled to.
fn draw_overlay(
    buf: &mut Buffer,
    area: Rect,
    run: &RunState,
    ui: &mut UiState,
    theme: &Theme,
    keys: &Keymap,
) {
    match ui.overlay.clone() {
        Some(Overlay::Help { top }) => {
            let lines = help::lines(keys);
            let top = scroll_overlay(buf, area, " Help ", &lines, top, theme, ui);
            ui.overlay = Some(Overlay::Help { top });
        }
        Some(Overlay::Evidence { lines, top }) => {
            let title = crate::tui::app::review_keys::selected(ui)
                .map(|i| format!(" review · {} · {} ", i.run_id, i.task_id))
                .unwrap_or_else(|| " review ".into());
            let top = scroll_overlay(buf, area, &title, &lines, top, theme, ui);
            ui.overlay = Some(Overlay::Evidence { lines, top });
        }
        Some(Overlay::Text { title, lines, top }) => {
            let top = scroll_overlay(buf, area, &title, &lines, top, theme, ui);
            ui.overlay = Some(Overlay::Text { title, lines, top });
        }
        Some(Overlay::Attempt(mut v)) => {
            let lines = wrapped(&attempt_lines(ui, &v), area.width.saturating_sub(8));
            let title = format!(
                " {} · {} ",
                v.title,
                match v.view {
                    crate::tui::app::ui_state::OutputView::Raw => "stream",
                    other => other.title(),
                }
            );
            v.top = scroll_overlay(buf, area, &title, &lines, v.top, theme, ui);
            ui.overlay = Some(Overlay::Attempt(v));
        }
        Some(Overlay::LoopStep(mut p)) => {
            p.top = super::loop_popup::draw_step(buf, area, run, ui, &p, theme);
            ui.overlay = Some(Overlay::LoopStep(p));
        }
        Some(Overlay::Conversation(mut c)) => {
            c.top = super::loop_popup::draw_conversation(buf, area, run, ui, &c, theme);
            ui.overlay = Some(Overlay::Conversation(c));
        }
        Some(Overlay::AtomDetail { atom, top }) => {
            let lines = wrapped(
                &atoms::detail_lines(run, ui, atom),
                area.width.saturating_sub(8),
            );
            let top = scroll_overlay(buf, area, " Atom ", &lines, top, theme, ui);
            ui.overlay = Some(Overlay::AtomDetail { atom, top });
        }
        Some(Overlay::Confirm(q)) => {
            let text = confirm_text(q, run, ui);
            draw_confirm(buf, area, text, theme);
        }
        None => {}
    }
}

/// The question a confirm overlay asks.
fn confirm_text(q: Question, run: &RunState, ui: &UiState) -> String {
    match q {
        Question::Quit if run.debate.is_some() => "Quit? The debate stops here. y / n".to_string(),
        Question::Quit => format!(
            "Quit? The run stops and stays resumable ({}). y / n",
            ui.resume_hint
        ),
        Question::QuitWithReviews(n) => format!(
            "Quit? {} for your review: 4 v shows {}; later, plexus review {}. y / n",
            if n == 1 {
                "1 task waits".to_string()
            } else {
                format!("{n} tasks wait")
            },
            if n == 1 { "it" } else { "them" },
            run.run_id
        ),
        Question::Accept => {
            let task = ui
                .accept_pending
                .as_ref()
                .map_or("this task", |(_, t)| t.as_str());
            format!(
                "Accept the atoms of {task}? They are stored as reviewed and its dependents may run. y / n"
            )
        }
        Question::Cancel if run.debate.is_some() => {
            "Stop the debate? The session ends cancelled. y / n".to_string()
        }
        Question::Cancel => "Cancel the run? Unfinished tasks end cancelled. y / n".to_string(),
    }
}

/// Draws the confirm box with `text` centred in `area`.
fn draw_confirm(buf: &mut Buffer, area: Rect, text: String, theme: &Theme) {
    // One line when it fits, else wrapped: the question is never cut.
    let lines = wrapped(&[text], area.width.saturating_sub(6));
    let widest = lines
        .iter()
        .map(|l| crate::base::text::sanitize::display_width(l))
        .max()
        .unwrap_or(0) as u16;
    let r = centered(area, (widest + 4).min(area.width), lines.len() as u16 + 2);
    Clear.render(r, buf);
    let inner = pane(buf, r, "Confirm", true, theme);
    for (k, line) in lines.iter().enumerate().take(inner.height as usize) {
        put(
            buf,
            inner.x + 1,
            inner.y + k as u16,
            inner.width.saturating_sub(1),
            line,
            theme.warn(),
        );
    }
}

fn draw_run(buf: &mut Buffer, body: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    let agents = u16::try_from(run.agents.len().max(1)).unwrap_or(u16::MAX);
    let bottom_h = agents.saturating_add(4).max(5).min(body.height / 2);
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Min(3), Constraint::Length(bottom_h)])
        .split(body);
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(42), Constraint::Percentage(58)])
        .split(rows[0]);
    let bottom = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(58), Constraint::Percentage(42)])
        .split(rows[1]);
    let title = dag::title(run, ui, top[0].width);
    ui.layout.panes = vec![
        (top[0], Pane::Dag),
        (top[1], Pane::Output),
        (bottom[0], Pane::Budget),
        (bottom[1], Pane::Quality),
    ];
    let inner = pane(buf, top[0], &title, ui.focus == Pane::Dag, theme);
    dag::draw(buf, inner, run, ui, theme);
    let out_title = output::title(run, ui, top[1].width);
    let inner = pane(buf, top[1], &out_title, ui.focus == Pane::Output, theme);
    output::draw(buf, inner, run, ui, theme);
    let inner = pane(
        buf,
        bottom[0],
        &budget::title(run, bottom[0].width),
        ui.focus == Pane::Budget,
        theme,
    );
    budget::draw(buf, inner, run, theme);
    let inner = pane(buf, bottom[1], "Quality", ui.focus == Pane::Quality, theme);
    quality::draw(buf, inner, run, theme);
}

/// A screen's rows: the header line, the body, the status line (`area` at least 3 high).
pub fn frame_rows(area: Rect) -> (Rect, Rect, Rect) {
    let header = Rect { height: 1, ..area };
    let status = Rect {
        y: area.bottom().saturating_sub(1),
        height: 1,
        ..area
    };
    let body = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(2),
        ..area
    };
    (header, body, status)
}

fn draw_header(buf: &mut Buffer, r: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    fill(buf, r.x, r.y, r.width, theme.style_base());
    let mut x = r.x;
    x += put(
        buf,
        x,
        r.y,
        r.width,
        " plexus ",
        theme.accent().add_modifier(Modifier::BOLD),
    );
    for (i, s) in Screen::ALL.iter().enumerate() {
        let title = match s {
            Screen::Run if run.debate.is_some() => "Debate",
            _ => s.title(),
        };
        let label = format!(" {} {title} ", i + 1);
        let style = if *s == ui.screen {
            theme.selected().add_modifier(Modifier::BOLD)
        } else {
            theme.muted()
        };
        let w = put(buf, x, r.y, r.right().saturating_sub(x), &label, style);
        ui.layout.tabs.push((x, x + w, *s));
        x += w;
    }
    ui.layout.header_y = r.y;
    if super::hints::no_run(run, ui) {
        // Nothing open: no plan or run to name.
        return;
    }
    // The run id first, then whether it is read-only, then the plan: what fits.
    let mut parts = Vec::new();
    if !run.plan_id.is_empty() {
        parts.push(Part::new(format!("plan {}", run.plan_id), 50));
    }
    let id = if run.run_id.is_empty() {
        "—"
    } else {
        &run.run_id
    };
    parts.push(Part::new(id, 90));
    if ui.read_only {
        parts.push(Part::new("(read-only)", 70).sep(" "));
    }
    let room = usize::from(r.right().saturating_sub(x).saturating_sub(2));
    let right = format!("{} ", fit_line(&parts, room, " "));
    let w = crate::base::text::sanitize::display_width(&right) as u16;
    if w > 1 && r.right().saturating_sub(x) > w + 1 {
        put(buf, r.right() - w, r.y, w, &right, theme.muted());
    }
}

/// The attempt overlay's lines: which keys switch, then the document.
fn attempt_lines(ui: &UiState, v: &crate::tui::app::ui_state::AttemptView) -> Vec<String> {
    let mut out = vec![
        "o stream · e request · a atoms · i issues & retry decision · [ ] the task's other failed attempts · n N other rows · enter: find it in the run · esc".to_string(),
        String::new(),
    ];
    match ui.docs.get(&v.doc()) {
        Some(crate::tui::app::ui_state::Doc::Ready(t)) => out.extend(t.lines().map(str::to_string)),
        Some(crate::tui::app::ui_state::Doc::Missing(w)) => out.push(w.clone()),
        _ => out.push("loading…".into()),
    }
    out
}
