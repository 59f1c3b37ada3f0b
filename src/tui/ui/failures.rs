//! The Failures screen: one row per failed, timed-out, partial or retried invocation,
//! with counts per error code and per agent in the title, the filters in force on the
//! first line, and columns dropped by priority when the terminal is narrow.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::fit::{fit_line, Part};
use super::text::{fill, put};
use super::theme::Theme;
use crate::base::text::sanitize::{display_width, sanitize};
use crate::base::text::wrap::pad_or_truncate;
use crate::data::store::FailedInvocation;
use crate::tui::app::failures_list::{status_of, FailureSort, FailuresList};
use crate::tui::app::UiState;

/// The pane title: how many rows, whose, how many decisions wait for review (`waiting`
/// for the run on screen, or the review queue once loaded), and the counts per code and
/// agent that fit.
pub fn title(f: &FailuresList, waiting: u32, width: u16) -> String {
    let Some(rows) = &f.rows else {
        return "Failures · loading…".into();
    };
    let scope = scope(f);
    let mut t = if f.view.len() == rows.len() {
        format!("Failures · {} · {scope}", rows.len())
    } else {
        format!("Failures · {} of {} · {scope}", f.view.len(), rows.len())
    };
    // Decisions waiting for a person come right after the scope: `v` shows them.
    let waiting = f
        .queue
        .as_ref()
        .map_or(waiting as usize, |q| q.iter().filter(|i| i.waits()).count());
    if waiting > 0 {
        t.push_str(&format!(" · {waiting} to review (v)"));
    }
    let (codes, agents) = f.counts();
    let room = usize::from(width).saturating_sub(6);
    let add = |label: &str, items: &[(String, usize)], t: &mut String| {
        let mut first = true;
        for (k, n) in items {
            let piece = if first {
                format!(" · {label} {k} {n}")
            } else {
                format!(", {k} {n}")
            };
            if display_width(t) + display_width(&piece) > room {
                if !first {
                    t.push('…');
                }
                return;
            }
            t.push_str(&piece);
            first = false;
        }
    };
    add("codes", codes, &mut t);
    add("agents", agents, &mut t);
    t
}

/// Whose failures the rows are: `run R…` under a one-run filter, `this run` or `every
/// run` when the rows come from one run (or none), else how many runs they come from.
fn scope(f: &FailuresList) -> String {
    if let Some(r) = &f.query.run {
        return format!("run {r}");
    }
    match f.run_count() {
        0 | 1 if f.this_run_only => "this run".into(),
        0 | 1 => "every run".into(),
        n => format!("{n} runs"),
    }
}

/// Draws the list into `inner`.
pub fn draw(buf: &mut Buffer, inner: Rect, ui: &mut UiState, theme: &Theme) {
    if inner.height < 3 || inner.width < 20 {
        return;
    }
    let f = &ui.failures;
    let mut y = inner.y;
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &filters_line(f, usize::from(inner.width)),
        theme.muted(),
    );
    y += 1;
    let longest_task = f.rows.as_ref().map_or(0, |rows| {
        f.view
            .iter()
            .map(|&i| display_width(&rows[i].task_id))
            .max()
            .unwrap_or(0)
    });
    let all_runs = f.query.run.is_none() && f.run_count() > 1;
    let cols = Columns::fit(inner.width, all_runs, longest_task);
    // Sorting cycles through the columns shown.
    ui.failures.sortable = cols.sortable();
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &cols.header(),
        theme.title().add_modifier(Modifier::BOLD),
    );
    y += 1;
    let rows_h = inner.bottom().saturating_sub(y) as usize;
    ui.list_rows = rows_h;
    let f = &ui.failures;
    if let Some(e) = &f.error {
        put(
            buf,
            inner.x,
            y,
            inner.width,
            &format!("cannot list failures: {e}"),
            theme.error(),
        );
        return;
    }
    let Some(rows) = f.rows.clone() else {
        put(buf, inner.x, y, inner.width, "loading…", theme.muted());
        return;
    };
    if f.view.is_empty() {
        let msg = if rows.is_empty() {
            "no failed, timed-out, partial or retried attempt — nothing to look at here"
        } else {
            "no failure matches the filters (x clears them)"
        };
        put(buf, inner.x, y, inner.width, msg, theme.muted());
        return;
    }
    let selected = f.selected.min(f.view.len() - 1);
    let top = super::text::keep_visible(selected, f.top, rows_h);
    let area = Rect::new(inner.x, y, inner.width, rows_h as u16);
    let f = &ui.failures;
    for (k, &i) in f.view.iter().enumerate().skip(top).take(rows_h) {
        let r = &rows[i];
        let base = if k == selected {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, base);
        let mut x = inner.x;
        for (col, text) in cols.cells(r) {
            let w = col.min(inner.right().saturating_sub(x));
            let style = match (k == selected, text.1) {
                (true, _) => base,
                (false, Role::Status) => theme.status(status_of(r)),
                (false, Role::Grade) => theme.grade(text.0.chars().next().unwrap_or('-')),
                (false, Role::Code) => theme.error(),
                (false, Role::Muted) => theme.muted(),
                (false, Role::Plain) => base,
            };
            x += put(buf, x, y, w, &text.0, style);
        }
        y += 1;
    }
    ui.failures.selected = selected;
    ui.failures.top = top;
    ui.layout.list = Some((area, top));
}

/// The filters in force, the sort, then the keys that fit in `width` columns (the
/// least used go first, whole).
fn filters_line(f: &FailuresList, width: usize) -> String {
    let q = &f.query;
    let mut parts = Vec::new();
    if let Some(c) = &q.code {
        parts.push(format!("code {c}"));
    }
    if let Some(a) = &q.agent {
        parts.push(format!("agent {a}"));
    }
    if let Some(s) = &q.status {
        parts.push(format!("status {s}"));
    }
    if let Some(r) = &q.run {
        parts.push(format!("run {r}"));
    }
    if q.window != crate::tui::app::failures_list::Window::All {
        parts.push(q.window.name().to_string());
    }
    if !q.text.is_empty() {
        parts.push(format!("search “{}”", q.text));
    }
    let sort = format!(
        "sort {}{}",
        q.sort.name(),
        if q.reverse { " ↑" } else { "" }
    );
    let filters = if parts.is_empty() {
        "no filter".to_string()
    } else {
        parts.join(" · ")
    };
    let mut line = vec![Part::new(filters, 100), Part::new(sort, 95)];
    line.extend(
        [
            ("enter open", 80),
            ("n N next/prev", 60),
            ("f code", 72),
            ("A agent", 70),
            ("t status", 70),
            ("T time", 70),
            ("R run", 71),
            ("s S sort", 75),
            ("/ search", 74),
            ("x clear", 73),
        ]
        .map(|(k, r)| Part::new(k, r).group(1)),
    );
    fit_line(&line, width, "   ")
}

/// Columns of a run's tag, where a whole run id does not fit.
const TAG_WIDTH: u16 = 5;

/// A run's tag where its whole id does not fit: the random part that ends it
/// (`R20261203-113000-ab12` → `ab12`, as the Runs screen shows it at the id's end), else
/// the id's last columns.
pub fn run_tag(run_id: &str) -> String {
    let width = usize::from(TAG_WIDTH);
    match run_id.rsplit_once('-') {
        Some((_, last)) if !last.is_empty() && last.chars().count() <= width => last.into(),
        _ => {
            let chars: Vec<char> = run_id.chars().collect();
            chars[chars.len().saturating_sub(width)..].iter().collect()
        }
    }
}

/// How a cell is coloured.
#[derive(Clone, Copy)]
enum Role {
    Plain,
    Muted,
    Status,
    Code,
    Grade,
}

/// Column widths at this terminal width; 0 hides a column.
struct Columns {
    time: u16,
    run: u16,
    task: u16,
    attempt: u16,
    agent: u16,
    status: u16,
    code: u16,
    grade: u16,
}

impl Columns {
    fn fit(width: u16, all_runs: bool, longest_task: usize) -> Columns {
        let mut c = Columns {
            time: 9,
            // Every run's rows name their run: whole when there is room, else its tag.
            run: match (all_runs, width >= 120) {
                (false, _) => 0,
                (true, true) => 23,
                (true, false) => TAG_WIDTH + 1,
            },
            task: 0,
            attempt: 5,
            agent: if width >= 100 { 17 } else { 0 },
            status: 9,
            code: 6,
            grade: 3,
        };
        let fixed = c.time + c.run + c.attempt + c.agent + c.status + c.code + c.grade;
        // The task id gets what it needs, up to half of what is left; the message the rest.
        let need = u16::try_from(longest_task + 1).unwrap_or(u16::MAX);
        c.task = need
            .min((width.saturating_sub(fixed) / 2).clamp(12, 40))
            .max(6);
        c
    }

    /// The sorts of the columns shown (score is the grade's).
    fn sortable(&self) -> Vec<FailureSort> {
        let shown = [
            (self.time, FailureSort::Time),
            (self.run, FailureSort::Run),
            (self.task, FailureSort::Task),
            (self.agent, FailureSort::Agent),
            (self.code, FailureSort::Code),
            (self.grade, FailureSort::Score),
            (self.attempt, FailureSort::Attempt),
        ];
        shown
            .into_iter()
            .filter(|(w, _)| *w > 0)
            .map(|(_, s)| s)
            .collect()
    }

    fn header(&self) -> String {
        let mut s = String::new();
        let mut col = |w: u16, name: &str| {
            if w > 0 {
                s.push_str(&pad_or_truncate(name, usize::from(w)));
            }
        };
        col(self.time, "time");
        col(self.run, "run");
        col(self.task, "task");
        col(self.attempt, "att");
        col(self.agent, "agent");
        col(self.status, "status");
        col(self.code, "code");
        col(self.grade, "gr");
        s.push_str("message");
        s
    }

    /// The cells of a row: (width, (text, role)); the message takes what is left.
    fn cells(&self, r: &FailedInvocation) -> Vec<(u16, (String, Role))> {
        let time = r.started_at.get(11..19).unwrap_or("").to_string();
        let cell = |w: u16, s: &str, role: Role| {
            (
                w,
                (
                    pad_or_truncate(&sanitize(s), usize::from(w.saturating_sub(1))) + " ",
                    role,
                ),
            )
        };
        let mut out = vec![cell(self.time, &time, Role::Muted)];
        if self.run > 0 {
            let shown = if self.run > TAG_WIDTH + 1 {
                r.run_id.clone()
            } else {
                run_tag(&r.run_id)
            };
            out.push(cell(self.run, &shown, Role::Muted));
        }
        out.push(cell(
            self.task,
            &middle_cut(&r.task_id, self.task.saturating_sub(1)),
            Role::Plain,
        ));
        out.push(cell(
            self.attempt,
            &format!("{}/{}", r.attempt, r.attempts),
            Role::Plain,
        ));
        if self.agent > 0 {
            out.push(cell(self.agent, &r.agent, Role::Plain));
        }
        out.push(cell(self.status, status_of(r), Role::Status));
        out.push(cell(self.code, &r.error_codes.join(","), Role::Code));
        out.push(cell(
            self.grade,
            r.grade.as_deref().unwrap_or("—"),
            Role::Grade,
        ));
        let msg = match (&r.message, r.score) {
            (Some(m), _) => m.clone(),
            (None, Some(s)) => format!("score {s:.2} below the threshold"),
            (None, None) => String::new(),
        };
        out.push((u16::MAX, (sanitize(&msg), Role::Plain)));
        out
    }
}

/// An id cut in the middle (`TASK_VAULT…CHECK_01`) so ids that differ at the end stay
/// apart.
fn middle_cut(s: &str, width: u16) -> String {
    let w = usize::from(width);
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= w || w < 5 {
        return s.to_string();
    }
    let tail = (w - 1) / 2;
    let head = w - 1 - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// The review queue's title: how many wait, how many were decided or retried, and
/// whose they are (`this run` when the queue was read for one run; else `every run`,
/// or how many runs its rows come from).
pub fn queue_title(f: &FailuresList, one_run: bool) -> String {
    match &f.queue {
        None => "Review queue · loading…".into(),
        Some(q) => {
            let waiting = q.iter().filter(|i| i.waits()).count();
            let decided = q.iter().filter(|i| i.decision.is_some()).count();
            let retried = q.len() - waiting - decided;
            let mut t = format!("Review queue · {waiting} waiting · {decided} decided");
            if retried > 0 {
                t.push_str(&format!(" · {retried} retried"));
            }
            let scope = match queue_runs(q) {
                _ if one_run => "this run".to_string(),
                0 | 1 => "every run".to_string(),
                n => format!("{n} runs"),
            };
            t.push_str(&format!(" · {scope}"));
            t
        }
    }
}

/// How many runs the queue's rows come from.
fn queue_runs(q: &[crate::run::review::ReviewItem]) -> usize {
    q.iter()
        .map(|i| i.run_id.as_str())
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// Draws the review queue: one row per task a hallucination stopped for review.
pub fn draw_queue(buf: &mut Buffer, inner: Rect, ui: &mut UiState, theme: &Theme) {
    if inner.height < 3 || inner.width < 20 {
        return;
    }
    let mut y = inner.y;
    put(
        buf,
        inner.x,
        y,
        inner.width,
        "enter evidence · Y accept (the task's dependents run) · X reject with a reason · v the failures list",
        theme.muted(),
    );
    y += 1;
    let taskw = 24usize.min(usize::from(inner.width) / 3);
    // Rows of several runs name their run (its tag).
    let runw = match ui.failures.queue.as_deref().map(queue_runs) {
        Some(n) if n > 1 => usize::from(TAG_WIDTH) + 1,
        _ => 0,
    };
    // The agent where there is room (the evidence names it too).
    let agentw = if inner.width >= 100 { 18 } else { 0 };
    let header = format!(
        "{}{}{}{}{:>6}  {:>5}  why",
        pad_or_truncate("run", runw),
        pad_or_truncate("task", taskw),
        pad_or_truncate("agent", agentw),
        pad_or_truncate("decision", 22),
        "refs",
        "score"
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
    let rows_h = usize::from(inner.bottom().saturating_sub(y));
    ui.list_rows = rows_h;
    let Some(queue) = &ui.failures.queue else {
        put(buf, inner.x, y, inner.width, "loading…", theme.muted());
        return;
    };
    if queue.is_empty() {
        put(
            buf,
            inner.x,
            y,
            inner.width,
            "nothing waits for review: no answer referred to assets that do not exist",
            theme.muted(),
        );
        return;
    }
    let selected = ui.failures.queue_selected.min(queue.len() - 1);
    let top = super::text::keep_visible(selected, 0, rows_h);
    let area = Rect::new(inner.x, y, inner.width, rows_h as u16);
    for (k, item) in queue.iter().enumerate().skip(top).take(rows_h) {
        let base = if k == selected {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, base);
        let decision = match &item.decision {
            None if item.retried => format!("retried after try {}", item.attempt),
            None => "waiting".to_string(),
            Some(d) => format!(
                "{} by {}",
                match d.decision {
                    crate::run::review::DecisionKind::Accepted => "accepted",
                    crate::run::review::DecisionKind::Rejected => "rejected",
                },
                d.reviewer
            ),
        };
        let run = match runw {
            0 => String::new(),
            w => pad_or_truncate(&sanitize(&run_tag(&item.run_id)), w),
        };
        let agent = match agentw {
            0 => String::new(),
            w => pad_or_truncate(&sanitize(&item.agent), w - 1) + " ",
        };
        let text = format!(
            "{run}{} {agent}{} {:>6}  {:>5.2}  {}",
            pad_or_truncate(&sanitize(&item.task_id), taskw - 1),
            pad_or_truncate(&sanitize(&decision), 21),
            item.fabricated.len(),
            item.avg_score,
            sanitize(item.message.as_deref().unwrap_or(""))
        );
        let style = match (k == selected, item.waits(), item.retried) {
            (true, _, _) => base,
            (false, true, _) => theme.warn(),
            (false, false, true) => theme.muted(),
            _ => base,
        };
        put(buf, inner.x, y, inner.width, &text, style);
        y += 1;
    }
    ui.failures.queue_selected = selected;
    ui.layout.list = Some((area, top));
}
