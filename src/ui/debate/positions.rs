//! The positions pane: each speaking agent's position summary in the selected round —
//! conclusion, key reasons, assumptions, confidence and its change, whether the
//! conclusion changed, and how the turn ended (reused, invalid, timed out).

use ratatui::style::Modifier;

use super::labels::{agent_style, outcome, spinner};
use super::lines::{delta, num, Lines};
use crate::protocol::debate::{AgentRole, AgentStatus};
use crate::state::debate::{DebateState, RoundView};
use crate::ui::theme::Theme;

/// The agents whose positions are shown, in order: planner, critic, then any other
/// that spoke in the round (never the host or the reporter).
pub fn speakers(round: Option<&RoundView>) -> Vec<AgentRole> {
    let mut out = vec![AgentRole::Planner, AgentRole::Critic];
    for t in round.map(|r| r.turns.as_slice()).unwrap_or_default() {
        let extra = !matches!(t.agent, AgentRole::Host | AgentRole::Reporter);
        if extra && !out.contains(&t.agent) {
            out.push(t.agent.clone());
        }
    }
    out
}

/// The lines of `agent`'s position in `round`, for a pane `width` wide.
pub fn agent_lines(
    out: &mut Lines,
    d: &DebateState,
    round: Option<&RoundView>,
    agent: &AgentRole,
    tick: u64,
    theme: &Theme,
) {
    let turn = round.and_then(|r| r.turns.iter().find(|t| &t.agent == agent));
    let head = (agent.as_str().to_string(), agent_style(agent, theme));
    let Some(t) = turn else {
        let running = round.is_some_and(|r| r.round == d.current_round)
            && d.agents.get(agent).map(|a| &a.status) == Some(&AgentStatus::Running)
            && !d.is_finished();
        let what = if running {
            format!(" {} answering…", spinner(tick))
        } else {
            " no output in this round".into()
        };
        out.push(vec![head, (what, theme.muted())]);
        return;
    };
    let (word, style) = outcome(t, theme);
    out.push(vec![head, (format!(" {word}"), style)]);
    let Some(p) = &t.position else {
        out.push(vec![(" position unreadable".into(), theme.error())]);
        if !t.content.is_empty() {
            out.text(&t.content, 1, theme.muted());
        }
        return;
    };
    let mut second = vec![(
        format!(" confidence {}", num(p.confidence)),
        theme.style_base(),
    )];
    match &p.changes_from_last_round {
        Some(c) => {
            second.push((format!(" ({})", delta(c.confidence_delta)), theme.muted()));
            second.push(if c.conclusion_changed {
                (
                    " · changed".into(),
                    theme.accent().add_modifier(Modifier::BOLD),
                )
            } else {
                (" · unchanged".into(), theme.muted())
            });
        }
        None => second.push((" · first position".into(), theme.muted())),
    }
    out.push(second);
    out.lead(
        &p.conclusion,
        "▸ ",
        1,
        theme.accent(),
        theme.style_base().add_modifier(Modifier::BOLD),
    );
    out.bullets(
        " reasons",
        &p.key_reasons,
        theme.title(),
        theme.style_base(),
    );
    if let Some(c) = &p.changes_from_last_round {
        out.bullets(" added", &c.reasons_added, theme.title(), theme.accent());
    }
    out.bullets(" assumes", &p.assumptions, theme.title(), theme.muted());
}

/// Every speaker's lines, one after the other with a blank line between them.
pub fn lines(
    width: u16,
    d: &DebateState,
    round: Option<&RoundView>,
    tick: u64,
    theme: &Theme,
) -> Lines {
    let mut out = Lines::new(width);
    for (i, a) in speakers(round).iter().enumerate() {
        if i > 0 {
            out.blank();
        }
        agent_lines(&mut out, d, round, a, tick, theme);
    }
    out
}
