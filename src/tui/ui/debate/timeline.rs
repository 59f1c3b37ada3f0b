//! The timeline of rounds: each round with its host action and consensus and how each
//! agent's turn ended, the selected round highlighted, agents answering now marked; as a
//! pane (two lines a round, then the closing turns) or as one line.

use ratatui::style::{Modifier, Style};

use super::labels::{action_style, agent_style, outcome_mark, short_action, spinner};
use super::lines::{num, Line, Lines};
use crate::base::protocol::debate::{AgentRole, AgentStatus};
use crate::model::state::debate::{DebateState, RoundView};
use crate::tui::ui::theme::Theme;

/// Agents answering now (planner, critic, host, reporter order), while the session runs.
pub fn in_flight(d: &DebateState) -> Vec<AgentRole> {
    if d.is_finished() {
        return Vec::new();
    }
    crate::model::state::debate::AGENTS
        .iter()
        .filter(|a| d.agents.get(*a).map(|v| &v.status) == Some(&AgentStatus::Running))
        .cloned()
        .collect()
}

fn consensus(r: &RoundView) -> Option<f64> {
    r.comparison
        .as_ref()
        .map(|c| c.mean_similarity)
        .or_else(|| r.decision.as_ref().and_then(|h| h.consensus))
}

/// The pane's lines: two a round, then the reporter when it writes.
pub fn lines(
    width: u16,
    d: &DebateState,
    selected: Option<u32>,
    tick: u64,
    theme: &Theme,
) -> Lines {
    let mut out = Lines::new(width);
    let flying = in_flight(d);
    if d.rounds.is_empty() {
        out.push(vec![("no round yet".into(), theme.muted())]);
    }
    for r in &d.rounds {
        let sel = selected == Some(r.round);
        let base = if sel {
            theme.selected()
        } else {
            theme.style_base()
        };
        let mut head: Line = vec![(
            format!("{} round {} ", if sel { "▸" } else { " " }, r.round),
            base.add_modifier(Modifier::BOLD),
        )];
        match &r.decision {
            Some(h) => head.push((
                h.action.as_str().to_string(),
                action_style(&h.action, theme),
            )),
            None => head.push(("…".into(), theme.muted())),
        }
        out.push(head);
        let mut second: Line = vec![("   ".into(), theme.style_base())];
        if let Some(c) = consensus(r) {
            second.push((format!("{} ", num(c)), theme.style_base()));
        }
        for t in &r.turns {
            second.push((
                format!("{}{} ", outcome_mark(t), t.agent.as_str()),
                agent_style(&t.agent, theme).remove_modifier(Modifier::BOLD),
            ));
        }
        if r.round == d.current_round {
            for a in flying.iter().filter(|a| **a != AgentRole::Reporter) {
                second.push((format!("{}{} ", spinner(tick), a.as_str()), theme.accent()));
            }
        }
        out.push(second);
    }
    if !d.closing.is_empty() {
        let mut l: Line = vec![("  closing ".into(), theme.title())];
        for t in &d.closing {
            l.push((
                format!("{}{} ", outcome_mark(t), t.agent.as_str()),
                agent_style(&t.agent, theme).remove_modifier(Modifier::BOLD),
            ));
        }
        out.push(l);
    }
    if flying.contains(&AgentRole::Reporter) {
        out.push(vec![(
            format!("{} reporter writing…", spinner(tick)),
            theme.accent(),
        )]);
    } else if d.report.is_some() {
        out.push(vec![("  ✔ report".into(), theme.ok())]);
    }
    out
}

/// The timeline in one line: `rounds 1 cont .78 ▸2 oppose .64◂ 3 conv .93`.
pub fn line(d: &DebateState, selected: Option<u32>, tick: u64, theme: &Theme) -> Line {
    let max = d.spec.as_ref().map_or(0, |s| s.max_rounds);
    let mut l: Line = vec![(format!("rounds {}/{max} ", d.rounds.len()), theme.title())];
    for r in &d.rounds {
        let sel = selected == Some(r.round);
        let style = if sel {
            theme.selected().add_modifier(Modifier::BOLD)
        } else {
            theme.style_base()
        };
        let mut text = format!(" {} ", r.round);
        match &r.decision {
            Some(h) => text.push_str(short_action(&h.action)),
            None => text.push('…'),
        }
        if let Some(c) = consensus(r) {
            text.push_str(&format!(" {}", num(c).trim_start_matches('0')));
        }
        text.push(' ');
        let action = r.decision.as_ref().map(|h| action_style(&h.action, theme));
        l.push((text, if sel { style } else { action.unwrap_or(style) }));
    }
    if !d.closing.is_empty() {
        let marks: String = d.closing.iter().map(outcome_mark).collect();
        l.push((format!(" closing {marks} "), theme.title()));
    }
    let flying = in_flight(d);
    if !flying.is_empty() {
        let names: Vec<&str> = flying.iter().map(AgentRole::as_str).collect();
        l.push((
            format!(" {} {}", spinner(tick), names.join(" ")),
            Style::new().fg(theme.accent),
        ));
    }
    l
}
