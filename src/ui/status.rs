//! The status bar: the run, its state, its own clock (pauses left out, and how long a
//! pause has lasted), the tasks counted by outcome, then the input line, the latest
//! message or the keys that work now.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::text::{elapsed, fill, put};
use super::theme::Theme;
use crate::app::UiState;
use crate::event::{RunStatus, TaskStatus};
use crate::state::RunState;
use crate::text::sanitize::{display_width, sanitize};

/// Draws the status bar into the row `r`.
pub fn draw(buf: &mut Buffer, r: Rect, run: &RunState, ui: &UiState, theme: &Theme) {
    let bar = theme.selected();
    fill(buf, r.x, r.y, r.width, bar);
    let state = match (run.status, run.cancelling) {
        (_, true) => "cancelling",
        (None, _) => "starting",
        (Some(s), _) => s.label(),
    };
    // The state word is a badge (the screen's background on its colour): a role colour
    // as text on the bar's background would not stand out.
    let (prefix, suffix) = match &ui.replay {
        // A replay: the run id and provider are in the title bar; the position here.
        Some(t) => (
            String::new(),
            format!(
                "│ {} │ {} │ {} ",
                clock(run, ui),
                outcome_counts(run),
                replay_position(t)
            ),
        ),
        None => {
            let mut s = format!("│ {} │ ", clock(run, ui));
            if !run.provider.is_empty() && r.width >= 100 {
                s.push_str(&format!("{} │ ", run.provider));
            }
            s.push_str(&outcome_counts(run));
            s.push(' ');
            (
                format!(
                    " {} │",
                    if run.run_id.is_empty() {
                        "—"
                    } else {
                        &run.run_id
                    }
                ),
                s,
            )
        }
    };
    let state_style = match run.status {
        Some(RunStatus::Failed | RunStatus::Cancelled) => theme.badge(theme.error),
        Some(
            RunStatus::Paused
            | RunStatus::Interrupted
            | RunStatus::Partial
            | RunStatus::AwaitingReview,
        ) => theme.badge(theme.warn),
        Some(RunStatus::Succeeded) => theme.badge(theme.ok),
        _ => bar.add_modifier(Modifier::BOLD),
    };
    let bold = bar.add_modifier(Modifier::BOLD);
    let mut used = put(buf, r.x, r.y, r.width, &prefix, bold);
    used += put(
        buf,
        r.x + used,
        r.y,
        r.width.saturating_sub(used),
        &format!(" {state} "),
        state_style,
    );
    used += put(
        buf,
        r.x + used,
        r.y,
        r.width.saturating_sub(used),
        &suffix,
        bold,
    );
    let rest = r.width.saturating_sub(used);
    if let Some(input) = &ui.input {
        put(
            buf,
            r.x + used,
            r.y,
            rest,
            &format!(" {}{input}▏", prompt(ui)),
            bar,
        );
        return;
    }
    let (text, style) = match &ui.flash {
        Some(f) => (
            format!(" {}", f.text),
            if f.warn { theme.badge(theme.warn) } else { bar },
        ),
        None => (hints(run, ui), bar),
    };
    put(
        buf,
        r.x + used,
        r.y,
        rest,
        &fit_words(&text, usize::from(rest)),
        style,
    );
}

fn prompt(ui: &UiState) -> String {
    if ui.command_prompt {
        ":".into()
    } else if ui.seek_prompt {
        "seek to (40%, 1234, 14:03:21, +1:30, start, end): ".into()
    } else if let Some((_, task)) = &ui.reason_for {
        format!("why reject {task}'s atoms (Enter rejects, Esc cancels): ")
    } else {
        "/".into()
    }
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

/// The tasks by outcome: `3 ok · 1 failed · 63 blocked · 4 running · 129 to go`; only
/// the outcomes that occur.
pub fn outcome_counts(run: &RunState) -> String {
    let c = |s: TaskStatus| run.count(s);
    let parts = [
        (c(TaskStatus::Success) + c(TaskStatus::Partial), "ok"),
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

/// The keys that work now, `? help · q quit` first so they show on a narrow terminal.
fn hints(run: &RunState, ui: &UiState) -> String {
    if let Some(t) = &ui.replay {
        // The space key's word says what it does now: pause a replay that plays.
        let space = if t.playing {
            "space pause"
        } else {
            "space play"
        };
        return format!(
            " ? help · {space} · , . step · {{ }} starts · ( ) failures · - + speed · # seek · < > ends"
        );
    }
    if run.debate.is_some() && ui.screen == crate::app::Screen::Run {
        let stop = if run.is_live() && ui.engine_attached && !ui.read_only {
            " · c stop"
        } else {
            ""
        };
        return format!(" ? help · q quit · ← → round · w report · ↑ ↓ scroll{stop}");
    }
    if ui.read_only || !ui.engine_attached {
        return " ? help · q quit · n N failed · 4 failures".into();
    }
    if run.is_live() {
        let pause = if run.status == Some(RunStatus::Paused) {
            "space resume"
        } else {
            "space pause"
        };
        format!(" ? help · q quit · {pause} · c cancel · r retry")
    } else {
        let retry = if run.count(TaskStatus::Failed) + run.count(TaskStatus::Timeout) > 0 {
            " · r retry"
        } else {
            ""
        };
        // The next step first: a review waiting is what the run needs.
        if run.awaiting_review > 0 {
            format!(" 4 v review · ? help · q quit{retry}")
        } else {
            format!(" ? help · q quit{retry}")
        }
    }
}

/// `text` cut to `width` columns, ending with `…` when cut: at a ` · ` between two
/// hints or facts when there is one (a key is never shown without its word), else at a
/// word boundary.
pub fn fit_words(text: &str, width: usize) -> String {
    let clean = sanitize(text);
    if display_width(&clean) <= width {
        return clean;
    }
    if width < 2 {
        return String::new();
    }
    if let Some(end) = clean
        .match_indices(" · ")
        .map(|(i, _)| i)
        .filter(|&i| display_width(&clean[..i]) < width)
        .last()
    {
        return format!("{}…", &clean[..end]);
    }
    crate::text::cut::cut_width(&clean, width).into_owned()
}

/// `event N/M · 14:03:21.456 · ▶ ×4`: where a replay is, the time of day (UTC) of
/// that event, and how it plays.
fn replay_position(t: &crate::app::transport::Transport) -> String {
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
    format!("event {}/{total}{at} · {}", t.position, t.play_label())
}
