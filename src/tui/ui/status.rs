//! The status bar: the run, its state, its own clock (pauses left out, and how long a
//! pause has lasted), the tasks counted by outcome, then the input line, the latest
//! message or the keys that work now. When the terminal is narrow the least important
//! parts go first, whole (see [`super::fit`]); what is being typed always shows.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::fit::{fit, Part};
use super::text::{elapsed, fill, put};
use super::theme::Theme;
use crate::base::text::sanitize::display_width;
use crate::model::event::{RunStatus, TaskStatus};
use crate::model::state::RunState;
use crate::tui::app::UiState;

pub use super::rank;

/// Separator between the facts and the keys (the facts end in a space already).
const BETWEEN: &str = " ";

/// Draws the status bar into the row `r`.
pub fn draw(buf: &mut Buffer, r: Rect, run: &RunState, ui: &UiState, theme: &Theme) {
    let bar = theme.selected();
    fill(buf, r.x, r.y, r.width, bar);
    let width = usize::from(r.width);
    let mut parts = facts(run, ui, theme, width);
    if let Some(input) = &ui.input {
        parts.extend(prompt(ui, input, width, bar));
    } else if let Some(f) = ui.flash.as_ref().filter(|f| !stale(f, run)) {
        let style = if f.warn { theme.badge(theme.warn) } else { bar };
        let text = if f.warn {
            format!(" {} ", f.text)
        } else {
            f.text.clone()
        };
        // A message too long for the room left is cut at a word; it is whole in `M`.
        let higher: Vec<Part> = parts
            .iter()
            .filter(|(p, _)| p.rank > rank::MESSAGE)
            .map(|(p, _)| p.clone())
            .collect();
        let used: usize = fit(&higher, width, BETWEEN)
            .iter()
            .map(|k| display_width(k.sep) + display_width(k.text))
            .sum();
        let room = width.saturating_sub(used + display_width(BETWEEN) + 1);
        let mut part = Part::new(text.clone(), rank::MESSAGE).group(1);
        if room >= 8 {
            part = part.or(crate::base::text::cut::cut_width(&text, room).into_owned());
        }
        parts.push((part, style));
    } else {
        parts.extend(
            super::hints::hints(run, ui)
                .into_iter()
                .map(|p| (p.group(1), bar)),
        );
    }
    let (line, styles): (Vec<Part>, Vec<Style>) = parts.into_iter().unzip();
    let mut x = r.x;
    for k in fit(&line, width, BETWEEN) {
        let room = r.right().saturating_sub(x);
        x += put(buf, x, r.y, room, k.sep, bar);
        let room = r.right().saturating_sub(x);
        x += put(buf, x, r.y, room, k.text, styles[k.index]);
    }
}

/// Whether a message is older than the run's end and says nothing of it (`retrying T`
/// after the run succeeded): the keys show instead; it stays in `M`. Warnings stay.
fn stale(f: &crate::tui::app::ui_state::Flash, run: &RunState) -> bool {
    !f.warn && run.finished_ts.is_some_and(|end| f.at_ms < end)
}

/// The facts: the run id, its state as a badge, the clock, the provider, the counts (a
/// replay's position in place of the run id, which its title bar shows).
fn facts(run: &RunState, ui: &UiState, theme: &Theme, width: usize) -> Vec<(Part, Style)> {
    let bar = theme.selected();
    let bold = bar.add_modifier(Modifier::BOLD);
    let fact = |text: String, rank: u8| Part::new(format!(" {text} "), rank).sep("│");
    if super::hints::no_run(run, ui) {
        // Browsing the database with no run open: nothing runs, nothing starts.
        return vec![(fact("no run open".into(), rank::STATE), bold)];
    }
    let state = match (run.status, run.cancelling) {
        (_, true) => "cancelling",
        (None, _) => "starting",
        (Some(s), _) => s.label(),
    };
    // The state word is a badge (the screen's background on its colour): a role colour
    // as text on the bar's background would not stand out.
    let state_style = match run.status {
        Some(RunStatus::Failed | RunStatus::Cancelled) => theme.badge(theme.error),
        Some(
            RunStatus::Paused
            | RunStatus::Interrupted
            | RunStatus::BudgetReached
            | RunStatus::Partial
            | RunStatus::AwaitingReview,
        ) => theme.badge(theme.warn),
        Some(RunStatus::Succeeded) => theme.badge(theme.ok),
        _ => bold,
    };
    let mut out = Vec::new();
    if ui.replay.is_none() {
        let id = if run.run_id.is_empty() {
            "—"
        } else {
            &run.run_id
        };
        let r = if width >= 100 {
            rank::RUN_ID
        } else {
            rank::RUN_ID_NARROW
        };
        out.push((fact(id.to_string(), r), bold));
    }
    out.push((fact(state.to_string(), rank::STATE), state_style));
    out.push((fact(clock(run, ui), rank::CLOCK), bold));
    if ui.replay.is_none() && !run.provider.is_empty() && width >= 100 {
        out.push((fact(run.provider.clone(), rank::PROVIDER), bold));
    }
    out.push((fact(outcome_counts(run), rank::COUNTS), bold));
    if let Some((long, short, shortest)) = calls_in_flight(run, ui) {
        out.push((fact(long, rank::CALLS).or(short).or(shortest), bold));
    }
    if let Some(t) = &ui.replay {
        let (long, short) = replay_position(t);
        out.push((fact(long, rank::POSITION).or(format!(" {short} ")), bold));
    }
    out
}

/// The prompt being typed: its label (shorter forms for a narrow terminal) and the text
/// typed with the cursor, whose end always shows.
fn prompt(ui: &UiState, input: &str, width: usize, bar: Style) -> Vec<(Part, Style)> {
    let labels: Vec<String> = if ui.command_prompt {
        vec![":".into()]
    } else if ui.seek_prompt {
        vec![
            "seek to (40%, 1234, 14:03:21, +1:30, start, end): ".into(),
            "seek to (40%, 1234, +1:30, end): ".into(),
            "seek to: ".into(),
        ]
    } else if let Some((_, task)) = &ui.reason_for {
        vec![
            format!("why reject {task}'s atoms (Enter rejects, Esc cancels): "),
            format!("why reject {task}: "),
            "why reject: ".into(),
        ]
    } else {
        vec!["/".into()]
    };
    let shortest = labels.last().map_or(0, |l| display_width(l));
    // The typed text keeps its end (where the cursor is) within the row.
    let room = width.saturating_sub(3 + shortest);
    let typed = format!("{}▏", super::fit::tail(input, room));
    let mut label = Part::new(labels[0].clone(), rank::PROMPT).group(1);
    for l in &labels[1..] {
        label = label.or(l.clone());
    }
    vec![
        (label, bar),
        (Part::new(typed, rank::TYPED).group(1).sep(""), bar),
    ]
}

/// The moment the screen shows: the wall clock for a live run, the last event's time for
/// a run shown from its log.
pub fn screen_now(run: &RunState, ui: &UiState) -> i64 {
    if ui.read_only || ui.replay.is_some() || ui.now_ms == 0 {
        run.last_ts
    } else {
        ui.now_ms.max(run.last_ts)
    }
}

/// The run's own time: running time only; while paused, how long the pause has lasted.
pub fn clock(run: &RunState, ui: &UiState) -> String {
    let now = screen_now(run, ui);
    let active = elapsed(run.clock.active_at(now));
    match run.clock.paused_for(now) {
        Some(p) if run.status == Some(RunStatus::Paused) => {
            format!("{active} · paused {}", elapsed(p))
        }
        _ => active,
    }
}

/// The tasks by outcome: `3 ok · 1 partial · 1 failed · 63 blocked · 4 running · 129 to
/// go`; only the outcomes that occur, each as the DAG draws it (a partial task is `◑`
/// there, not `✓`).
pub fn outcome_counts(run: &RunState) -> String {
    let c = |s: TaskStatus| run.count(s);
    let parts = [
        (c(TaskStatus::Success), "ok"),
        (c(TaskStatus::Partial), "partial"),
        (
            (c(TaskStatus::Failed) + c(TaskStatus::Timeout)).saturating_sub(run.awaiting_review),
            "failed",
        ),
        (run.awaiting_review, "to review"),
        (c(TaskStatus::Blocked), "blocked"),
        (c(TaskStatus::Cancelled), "cancelled"),
        (c(TaskStatus::Running), "running"),
        (c(TaskStatus::Pending) + c(TaskStatus::Ready), "to go"),
    ];
    let shown: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if shown.is_empty() && run.debate.is_some() {
        "debate session".into()
    } else if shown.is_empty() {
        format!("{} tasks", run.tasks.len())
    } else {
        shown.join(" · ")
    }
}

/// The calls in flight and the one running the longest, in three lengths:
/// `2 calls · slowest T3 0:47`, ` 2 calls · 0:47 `, ` 2 calls `; none when no call runs.
fn calls_in_flight(run: &RunState, ui: &UiState) -> Option<(String, String, String)> {
    let n: u32 = run.agents.iter().map(|a| a.in_flight).sum();
    if n == 0 {
        return None;
    }
    let now = screen_now(run, ui);
    let slowest = run
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Running)
        .filter_map(|t| Some((t.running_since?, &t.id)))
        .min_by_key(|(since, _)| *since);
    let calls = if n == 1 {
        "1 call".to_string()
    } else {
        format!("{n} calls")
    };
    let Some((since, id)) = slowest else {
        return Some((calls.clone(), format!(" {calls} "), format!(" {calls} ")));
    };
    let age = elapsed(now - since);
    Some((
        format!(
            "{calls} · slowest {} {age}",
            crate::base::text::sanitize::sanitize(id)
        ),
        format!(" {calls} · {age} "),
        format!(" {calls} "),
    ))
}

/// `event N/M · 14:03:21.456 · ▶ ×4`: where a replay is, the time of day (UTC) of
/// that event, and how it plays; and the short form `event N/M · ▶ ×4`.
fn replay_position(t: &crate::tui::app::transport::Transport) -> (String, String) {
    let at = t
        .time()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|d| format!(" · {}", d.format("%H:%M:%S%.3f")))
        .unwrap_or_default();
    let total = if t.indexed < t.total {
        format!("{} (read {})", t.total, t.indexed)
    } else {
        t.total.to_string()
    };
    (
        format!("event {}/{total}{at} · {}", t.position, t.play_label()),
        format!("event {}/{} · {}", t.position, t.total, t.play_label()),
    )
}
