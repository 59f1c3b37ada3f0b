//! Words and colours of the Debate screen: host actions (full and short), session
//! statuses, turn outcomes, agents, and the colour of a similarity against the
//! session's thresholds.

use ratatui::style::{Color, Modifier, Style};

use crate::base::protocol::debate::{AgentRole, HostAction, SessionStatus};
use crate::base::protocol::debate_spec::Thresholds;
use crate::model::event::debate::TurnOutcome;
use crate::model::state::debate::{DebateState, TurnView};
use crate::tui::ui::theme::Theme;

/// The thresholds the session runs under (the defaults before `debate_started`).
pub fn thresholds(d: &DebateState) -> Thresholds {
    d.spec.as_ref().map(|s| s.thresholds).unwrap_or_default()
}

/// An action in a few letters, for the one-line timeline.
pub fn short_action(a: &HostAction) -> &str {
    match a {
        HostAction::Continue => "cont",
        HostAction::Converge => "conv",
        HostAction::ForceOpposition => "oppose",
        HostAction::UpdateCommand => "update",
        HostAction::Terminate => "stop",
        HostAction::Other(s) => s.as_str(),
    }
}

/// The colour of a host action.
pub fn action_style(a: &HostAction, theme: &Theme) -> Style {
    match a {
        HostAction::Converge => theme.ok(),
        HostAction::Continue => theme.accent(),
        HostAction::ForceOpposition | HostAction::UpdateCommand => theme.warn(),
        HostAction::Terminate | HostAction::Other(_) => theme.error(),
    }
}

/// The session's status word and its badge.
pub fn status(d: &DebateState, theme: &Theme) -> (String, Style) {
    let s = d.status.clone().unwrap_or(SessionStatus::InProgress);
    let style = match s {
        SessionStatus::InProgress => theme.badge(theme.accent),
        SessionStatus::Converged => theme.badge(theme.ok),
        SessionStatus::Terminated | SessionStatus::MaxRoundsReached => theme.badge(theme.warn),
        SessionStatus::Cancelled
        | SessionStatus::Failed
        | SessionStatus::Interrupted
        | SessionStatus::Other(_) => theme.badge(theme.error),
    };
    (s.as_str().to_string(), style)
}

/// The colour of an agent (planner, critic, host, reporter in the theme's order).
pub fn agent_color(a: &AgentRole, theme: &Theme) -> Color {
    let i = match a {
        AgentRole::Planner => 0,
        AgentRole::Critic => 1,
        AgentRole::Host => 2,
        AgentRole::Reporter => 3,
        AgentRole::Other(_) => 4,
    };
    theme.agent(i)
}

/// An agent's name in its colour, bold.
pub fn agent_style(a: &AgentRole, theme: &Theme) -> Style {
    Style::new()
        .fg(agent_color(a, theme))
        .add_modifier(Modifier::BOLD)
}

/// A turn's mark and words: `✔ valid`, `✘ invalid`, `◷ timed out`, with `↻ reused`.
pub fn outcome(t: &TurnView, theme: &Theme) -> (String, Style) {
    let (mark, word, style) = match t.outcome {
        TurnOutcome::Valid => ("✔", "valid", theme.ok()),
        TurnOutcome::Invalid => ("✘", "invalid", theme.error()),
        TurnOutcome::TimedOut => ("◷", "timed out", theme.warn()),
        TurnOutcome::Failed => ("✘", "failed", theme.error()),
        TurnOutcome::Cancelled => ("–", "cancelled", theme.muted()),
    };
    let reused = if t.reused { " · ↻ reused" } else { "" };
    let tries = if t.attempts > 1 {
        format!(" · {} tries", t.attempts)
    } else {
        String::new()
    };
    (format!("{mark} {word}{reused}{tries}"), style)
}

/// The glyph of a turn in the timeline.
pub fn outcome_mark(t: &TurnView) -> &'static str {
    match (t.outcome, t.reused) {
        (_, true) => "↻",
        (TurnOutcome::Valid, false) => "✔",
        (TurnOutcome::Invalid | TurnOutcome::Failed, false) => "✘",
        (TurnOutcome::TimedOut, false) => "◷",
        (TurnOutcome::Cancelled, false) => "–",
    }
}

/// The colour a similarity has against the thresholds: converge and above ok, continue
/// and above warn, below error (NaN muted).
pub fn similarity_color(v: f64, t: &Thresholds, theme: &Theme) -> Color {
    if !v.is_finite() {
        theme.muted
    } else if v > t.converge_above {
        theme.ok
    } else if v > t.continue_above {
        theme.warn
    } else {
        theme.error
    }
}

/// A spinner frame for something under way.
pub fn spinner(tick: u64) -> &'static str {
    const FRAMES: [&str; 4] = ["◐", "◓", "◑", "◒"];
    FRAMES[(tick % 4) as usize]
}
