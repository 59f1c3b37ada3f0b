//! The Runs screen: runs in the database, newest first, with status, start, how long
//! each took, its tasks by outcome and the reviews waiting; `/` filters the rows and
//! Enter opens one read-only from its log.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::text::{elapsed, fill, put};
use super::theme::Theme;
use crate::base::text::wrap::pad_or_truncate;
use crate::data::store::RunSummary;
use crate::tui::app::runs_list::{outcome_glyphs, outcome_words, RunFacts};
use crate::tui::app::UiState;

/// Column widths for a list `w` cells wide.
struct Cols {
    started: usize,
    outcomes: usize,
    words: bool,
    events: bool,
    plan: usize,
}

impl Cols {
    /// Fixed columns: run 21+1, status 15+1 (`awaiting_review`), time 8+1, review 10.
    const FIXED: usize = 22 + 16 + 9 + 10;

    fn for_width(w: usize) -> Cols {
        let started = if w >= 140 { 17 } else { 12 };
        let left = w.saturating_sub(Self::FIXED + started);
        // The plan (a debate's question) names the run: it keeps room before the
        // outcomes spread out as words or the event counts appear.
        let words = left >= 70;
        let outcomes = if words { 30 } else { left.min(14) };
        let rest = left - outcomes;
        let events = rest >= 55;
        let plan = rest.saturating_sub(if events { 15 } else { 0 }).min(40);
        Cols {
            started,
            outcomes,
            words,
            events,
            plan,
        }
    }
}

/// Draws the runs list into `inner`.
pub fn draw(buf: &mut Buffer, inner: Rect, ui: &mut UiState, theme: &Theme) {
    if inner.height < 2 {
        return;
    }
    let mut y = inner.y;
    let c = Cols::for_width(inner.width as usize);
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &header(&c),
        theme.title().add_modifier(Modifier::BOLD),
    );
    y += 1;
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
    let view = ui.runs.view();
    if !ui.runs.query.is_empty() {
        let line = format!(
            "/{} · {} of {} runs (/ changes it, x clears)",
            ui.runs.query,
            view.len(),
            list.len()
        );
        put(buf, inner.x, y, inner.width, &line, theme.accent());
        y += 1;
    }
    draw_rows(buf, Rect { y, ..inner }, ui, &view, &c, theme);
}

/// The header row naming the columns `c` shows.
fn header(c: &Cols) -> String {
    let mut header = format!(
        "{:<22}{:<16}{:<started$}{:>8} {:<outcomes$}{:<10}",
        "run",
        "status",
        "started",
        "time",
        "tasks",
        "review",
        started = c.started,
        outcomes = c.outcomes,
    );
    if c.events {
        header.push_str(&format!("{:>7}{:>7} ", "events", "atoms"));
    }
    if c.plan > 0 {
        header.push_str(&pad_or_truncate("plan", c.plan));
    }
    header
}

/// Draws the filtered rows `view` from `area.y` to the bottom of `area`, keeping the
/// selection in sight, and records the rows shown for the mouse and paging.
fn draw_rows(
    buf: &mut Buffer,
    area: Rect,
    ui: &mut UiState,
    view: &[usize],
    c: &Cols,
    theme: &Theme,
) {
    let y = area.y;
    let rows = area.bottom().saturating_sub(y) as usize;
    ui.list_rows = rows;
    if view.is_empty() {
        put(
            buf,
            area.x,
            y,
            area.width,
            "no run matches (Esc or x clears the filter)",
            theme.muted(),
        );
        ui.runs.selected = 0;
        return;
    }
    let selected = ui.runs.selected.min(view.len() - 1);
    let top = super::text::keep_visible(selected, ui.runs.top, rows);
    ui.layout.list = Some((Rect::new(area.x, y, area.width, rows as u16), top));
    let Some(list) = &ui.runs.rows else {
        return;
    };
    let none = RunFacts::default();
    let shown = view.iter().enumerate().skip(top).take(rows);
    for ((k, &i), y) in shown.zip(area.y..) {
        let run = &list[i];
        let line = RunRow {
            run,
            facts: ui.runs.facts.get(&run.run_id).unwrap_or(&none),
            marked: ui.runs.marked.as_deref() == Some(&*run.run_id),
            selected: k == selected,
            now: ui.now_ms,
        };
        line.draw(buf, Rect { y, ..area }, c, theme);
    }
    ui.runs.selected = selected;
    ui.runs.top = top;
}

/// One run's row and what it is drawn from.
struct RunRow<'a> {
    /// The run.
    run: &'a RunSummary,
    /// Its tasks by outcome and the reviews waiting.
    facts: &'a RunFacts,
    /// The run is marked (`◆`).
    marked: bool,
    /// The row is the selected one.
    selected: bool,
    /// The time now, for a running run's duration.
    now: i64,
}

impl RunRow<'_> {
    /// Draws the row on line `area.y`, across `area`.
    fn draw(&self, buf: &mut Buffer, area: Rect, c: &Cols, theme: &Theme) {
        let (run, facts, y) = (self.run, self.facts, area.y);
        let style = if self.selected {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, area.x, y, area.width, style);
        let id = if self.marked {
            format!("◆ {}", run.run_id)
        } else {
            run.run_id.clone()
        };
        let mut x = area.x;
        x += put(buf, x, y, 22, &pad_or_truncate(&id, 21), style) + 1;
        let status_style = if self.selected {
            style
        } else {
            theme.status(run_status_role(&run.status))
        };
        x += put(
            buf,
            x,
            y,
            15,
            &pad_or_truncate(&run.status, 15),
            status_style,
        ) + 1;
        x += put(
            buf,
            x,
            y,
            area.right().saturating_sub(x),
            &self.middle(c),
            style,
        );
        let review = if facts.reviews_waiting > 0 {
            format!("{} waiting", facts.reviews_waiting)
        } else {
            "—".to_string()
        };
        let review_style = if facts.reviews_waiting > 0 && !self.selected {
            theme.warn().add_modifier(Modifier::BOLD)
        } else {
            style
        };
        x += put(
            buf,
            x,
            y,
            area.right().saturating_sub(x),
            &pad_or_truncate(&review, 10),
            review_style,
        );
        put(
            buf,
            x,
            y,
            area.right().saturating_sub(x),
            &self.tail(c),
            style,
        );
    }

    /// Start, duration and the tasks by outcome, before the reviews.
    fn middle(&self, c: &Cols) -> String {
        let run = self.run;
        let started = started(&run.created_at, c.started > 12);
        let mut rest = format!(
            "{:<w$}{:>8} ",
            started,
            duration(run, self.now),
            w = c.started
        );
        let outcomes = if c.words {
            outcome_words(self.facts).join(" · ")
        } else {
            outcome_glyphs(self.facts)
        };
        // One column kept free before the reviews.
        rest.push_str(&pad_or_truncate(&outcomes, c.outcomes.saturating_sub(1)));
        rest.push(' ');
        rest
    }

    /// Event and atom counts and the plan, after the reviews, as far as they are shown.
    fn tail(&self, c: &Cols) -> String {
        let run = self.run;
        let mut tail = String::new();
        if c.events {
            tail.push_str(&format!("{:>7}{:>7} ", run.events, run.atoms));
        }
        if c.plan > 0 {
            // A debate names its question (kept as the run's plan source).
            let plan = if run.plan_id == "debate" {
                &run.plan_source
            } else {
                &run.plan_id
            };
            tail.push_str(&pad_or_truncate(
                &crate::base::text::sanitize::sanitize(plan),
                c.plan,
            ));
        }
        tail
    }
}

/// `2026-11-27 21:03` (long) or `11-27 21:03`.
fn started(created: &str, long: bool) -> String {
    let s: String = created
        .chars()
        .take(16)
        .collect::<String>()
        .replace('T', " ");
    if long {
        s
    } else {
        s.chars().skip(5).collect()
    }
}

/// How long the run has run, as its own clock counts it (the Run screen's clock: pauses
/// and the gaps before a resume left out); from its start to its end (to now while it
/// runs) for a log that has no start; `—` when neither is known.
fn duration(run: &RunSummary, now_ms: i64) -> String {
    if let Some(ms) = run.active_ms {
        let since = run.ticking_since.map_or(0, |t| (now_ms - t).max(0));
        return elapsed(ms + since);
    }
    let ms = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|d| d.timestamp_millis())
    };
    let Some(start) = ms(&run.created_at) else {
        return "—".into();
    };
    let end = match run.finished_at.as_deref() {
        Some(f) => ms(f),
        None if run.status == "running" && now_ms > 0 => Some(now_ms),
        None => None,
    };
    end.map_or_else(|| "—".into(), |e| elapsed(e - start))
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
