//! The host's decision of the selected round: the action and the consensus it rests on,
//! the reason, the agent told to argue the other side or given a new command (and what
//! it must do), the points the next round must address, stubborn agents, who speaks
//! next.

use ratatui::style::Modifier;
use serde_json::Value;

use super::labels::{action_style, spinner};
use super::lines::{num, Lines};
use crate::base::protocol::debate::{AgentRole, AgentStatus, HostDirective};
use crate::model::state::debate::{DebateState, DecisionView, RoundView};
use crate::tui::ui::theme::Theme;

/// Whom a directive targets and what it asks of them (force opposition, update
/// command); `None` for the others or an unreadable directive.
pub fn target(directive: &Value) -> Option<(AgentRole, String)> {
    match serde_json::from_value::<HostDirective>(directive.clone()).ok()? {
        HostDirective::ForceOpposition(f) => Some((
            f.instructions.target,
            format!("{}: {}", f.instructions.role, f.instructions.requirement),
        )),
        HostDirective::UpdateCommand(u) => Some((u.target_agent, u.requirement)),
        HostDirective::Converge(_) | HostDirective::Continue(_) => None,
    }
}

fn names(agents: &[AgentRole]) -> String {
    agents
        .iter()
        .map(AgentRole::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The decision's lines for a pane `width` wide.
pub fn lines(
    width: u16,
    d: &DebateState,
    round: Option<&RoundView>,
    tick: u64,
    theme: &Theme,
) -> Lines {
    let mut out = Lines::new(width);
    let Some(h) = round.and_then(|r| r.decision.as_ref()) else {
        let deciding = round.is_some_and(|r| r.round == d.current_round)
            && d.agents.get(&AgentRole::Host).map(|a| &a.status) == Some(&AgentStatus::Running)
            && !d.is_finished();
        let text = if deciding {
            format!("{} the host is deciding…", spinner(tick))
        } else if round.is_none() {
            "no round yet".into()
        } else {
            "the host has not decided on this round".into()
        };
        out.text(&text, 0, theme.muted());
        return out;
    };
    decision_lines(&mut out, h, theme);
    out
}

fn decision_lines(out: &mut Lines, h: &DecisionView, theme: &Theme) {
    let mut head = vec![(
        h.action.as_str().to_string(),
        action_style(&h.action, theme).add_modifier(Modifier::BOLD),
    )];
    if let Some(c) = h.consensus {
        head.push((format!(" · consensus {}", num(c)), theme.style_base()));
    }
    out.push(head);
    out.lead(&h.reason, "why ", 0, theme.title(), theme.style_base());
    if let Some((who, what)) = target(&h.directive) {
        out.push(vec![
            ("target ".into(), theme.title()),
            (
                who.as_str().to_string(),
                super::labels::agent_style(&who, theme),
            ),
        ]);
        out.text(&what, 1, theme.warn());
    }
    out.bullets(
        "must address",
        &h.must_address,
        theme.title(),
        theme.style_base(),
    );
    if !h.stubborn.is_empty() {
        out.push(vec![
            ("stubborn ".into(), theme.title()),
            (names(&h.stubborn), theme.warn()),
        ]);
    }
    if !h.next_agents.is_empty() {
        out.push(vec![
            ("next ".into(), theme.title()),
            (names(&h.next_agents), theme.muted()),
        ]);
    }
}
