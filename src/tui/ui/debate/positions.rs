//! The positions pane: each speaking agent's position summary in the selected round —
//! conclusion, key reasons, assumptions, confidence and its change, whether the
//! conclusion changed, and how the turn ended (reused, invalid, timed out, cancelled);
//! while the agent answers, the text it streams with the turn's time and tokens; in the
//! last round, its closing answer (remaining uncertainties, worst cases).

use ratatui::style::Modifier;

use super::labels::{agent_style, outcome, spinner};
use super::lines::{delta, num, Line, Lines};
use crate::base::protocol::debate::{AgentRole, AgentStatus};
use crate::model::event::debate::TurnOutcome;
use crate::model::state::debate::{AgentView, DebateState, RoundView, TurnView};
use crate::tui::ui::theme::Theme;

/// What a live pane needs besides the session: the frame, the time, and how many rows
/// a streaming answer may take.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    /// Frame counter (spinners).
    pub tick: u64,
    /// The moment shown, ms.
    pub now_ms: i64,
    /// Rows of streamed text shown (its tail).
    pub rows: usize,
}

/// `3.2 s`, `1:05`: a turn's time so far.
pub fn elapsed(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{}:{:02}", ms / 60_000, (ms / 1000) % 60)
    }
}

/// `◐ answering · 3.2 s · 120 tokens` and the tail of the streamed text.
fn answering(out: &mut Lines, head: Line, a: &AgentView, live: &Live, theme: &Theme) {
    let mut l = head;
    l.push((format!(" {} answering", spinner(live.tick)), theme.accent()));
    if let Some(t0) = a.started_ms {
        l.push((
            format!(" · {}", elapsed(live.now_ms - t0)),
            theme.style_base(),
        ));
    }
    // A session whose text does not stream (a moderated one) shows its time alone.
    if a.stream_tokens > 0 {
        l.push((format!(" · {} tokens", a.stream_tokens), theme.muted()));
    }
    if let Some(n) = a.attempt.filter(|n| *n > 1) {
        l.push((format!(" · try {n}"), theme.warn()));
    }
    out.push(l);
    // The tail of the text, each line without its indentation (JSON's takes room).
    let mut text = Lines::new(out.width);
    for l in a.stream.lines().map(str::trim).filter(|l| !l.is_empty()) {
        text.text(l, 1, theme.muted());
    }
    let skip = text.out.len().saturating_sub(live.rows.max(1));
    out.out.extend(text.out.into_iter().skip(skip));
}

/// Why a turn has no position, in words (nothing for a cancelled one: its head says so).
fn no_position(t: &TurnView) -> Option<&'static str> {
    match t.outcome {
        TurnOutcome::Cancelled => None,
        TurnOutcome::TimedOut => Some(" no answer in time"),
        TurnOutcome::Failed => Some(" no answer: the call failed"),
        TurnOutcome::Valid | TurnOutcome::Invalid => Some(" position unreadable"),
    }
}

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
    live: &Live,
    theme: &Theme,
) {
    let turn = round.and_then(|r| r.turns.iter().find(|t| &t.agent == agent));
    let head = (agent.as_str().to_string(), agent_style(agent, theme));
    let running = d
        .agents
        .get(agent)
        .filter(|a| a.status == AgentStatus::Running && !d.is_finished());
    let last = round.is_some_and(|r| Some(r.round) == d.rounds.last().map(|l| l.round));
    // In the last round the closing answer, the newest word, comes first.
    if last {
        let closing = d.closing.iter().find(|t| &t.agent == agent);
        let closing_head = vec![head.clone(), (" closing".into(), theme.title())];
        match (closing, running.filter(|a| a.closing)) {
            (_, Some(a)) => answering(out, closing_head, a, live, theme),
            (Some(t), None) => closing_lines(out, closing_head, t, theme),
            (None, None) => {}
        }
        if closing.is_some() || running.is_some_and(|a| a.closing) {
            out.blank();
        }
    }
    match turn {
        None => match running.filter(|a| !a.closing) {
            Some(a) if round.is_some_and(|r| r.round == d.current_round) => {
                answering(out, vec![head], a, live, theme);
            }
            // The round is under way and this agent has not spoken yet: it waits.
            _ if round.is_some_and(|r| r.round == d.current_round) && !d.is_finished() => {
                let waits = match agent {
                    AgentRole::Critic => " waiting for the planner",
                    _ => " waiting for its turn",
                };
                out.push(vec![head, (waits.into(), theme.muted())]);
            }
            _ => out.push(vec![
                head,
                (" no output in this round".into(), theme.muted()),
            ]),
        },
        Some(t) => {
            let first_round = round.is_some_and(|r| r.round <= 1);
            position_lines(out, head, t, first_round, theme);
        }
    }
}

/// A closing answer: how it ended, the remaining uncertainties and the worst cases.
fn closing_lines(out: &mut Lines, mut head: Line, t: &TurnView, theme: &Theme) {
    let (word, style) = outcome(t, theme);
    head.push((format!(" {word}"), style));
    out.push(head);
    let list = |key: &str| -> Vec<String> {
        t.output
            .as_ref()
            .and_then(|o| o.pointer(&format!("/metadata/{key}")))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    };
    let (uncertain, worst) = (list("remaining_uncertainties"), list("worst_cases"));
    if uncertain.is_empty() && worst.is_empty() {
        if t.outcome != TurnOutcome::Cancelled && !t.content.trim().is_empty() {
            out.text(&t.content, 1, theme.style_base());
        }
        return;
    }
    out.bullets(" uncertain", &uncertain, theme.title(), theme.warn());
    out.bullets(" worst cases", &worst, theme.title(), theme.warn());
}

/// A turn's position: how it ended, confidence and change (none in the first round,
/// whatever the answer says), conclusion, reasons, assumptions.
fn position_lines(
    out: &mut Lines,
    head: (String, ratatui::style::Style),
    t: &TurnView,
    first_round: bool,
    theme: &Theme,
) {
    let (word, style) = outcome(t, theme);
    out.push(vec![head, (format!(" {word}"), style)]);
    let Some(p) = &t.position else {
        if let Some(why) = no_position(t) {
            out.push(vec![(why.into(), theme.error())]);
        }
        if !t.content.is_empty() {
            out.text(&t.content, 1, theme.muted());
        }
        return;
    };
    let mut second = vec![(
        format!(" confidence {}", num(p.confidence)),
        theme.style_base(),
    )];
    match p.changes_from_last_round.as_ref().filter(|_| !first_round) {
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
    live: &Live,
    theme: &Theme,
) -> Lines {
    let mut out = Lines::new(width);
    for (i, a) in speakers(round).iter().enumerate() {
        if i > 0 {
            out.blank();
        }
        agent_lines(&mut out, d, round, a, live, theme);
    }
    out
}
