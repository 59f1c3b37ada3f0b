//! The Debate screen: a debate session's rounds, the selected round's positions, their
//! similarity as a heat map and the host's decision, the consensus trend against the
//! thresholds, and the final report. Drawn from the `DebateState` folded with the run;
//! on a wide terminal every pane shows, sized by what it holds (the similarity pane as
//! wide as its matrix, the rounds pane only from 160 columns, the speakers' positions the
//! rest); at 80x24 the positions and the report take turns (`w`).

pub mod decision;
pub mod heatmap;
pub mod labels;
pub mod lines;
pub mod positions;
pub mod report;
pub mod timeline;
pub mod trend;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};

use crate::base::protocol::debate_spec::Thresholds;
use crate::model::state::debate::DebateState;
use crate::model::state::RunState;
use crate::tui::app::debate::DebateTab;
use crate::tui::app::UiState;
use crate::tui::ui::text::pane;
use crate::tui::ui::theme::Theme;
use lines::{clamp, line_width, Lines};
use positions::Live;

/// Smallest body that gets the wide layout.
const WIDE: (u16, u16) = (120, 34);

/// Narrowest body that also gets the rounds pane (below it, the timeline is a line of the
/// session pane).
const ROUNDS_PANE: u16 = 160;

/// Draws the Debate screen of `run` into `body` (nothing when the run is no debate).
pub fn draw(buf: &mut Buffer, body: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    let Some(d) = run.debate.as_deref() else {
        return;
    };
    let now_ms = crate::tui::ui::status::screen_now(run, ui);
    if body.width >= WIDE.0 && body.height >= WIDE.1 {
        wide(buf, body, d, ui, now_ms, theme);
    } else {
        compact(buf, body, d, ui, now_ms, theme);
    }
}

/// Columns the widest of `lines` takes.
fn widest(lines: &Lines) -> u16 {
    let w = lines.out.iter().map(line_width).max().unwrap_or(0);
    u16::try_from(w).unwrap_or(u16::MAX)
}

fn split(r: Rect, dir: Direction, c: &[Constraint]) -> Vec<Rect> {
    Layout::default()
        .direction(dir)
        .constraints(c.to_vec())
        .split(r)
        .to_vec()
}

fn row(r: Rect, k: u16) -> Rect {
    Rect {
        y: r.y + k.min(r.height.saturating_sub(1)),
        height: u16::from(k < r.height),
        ..r
    }
}

/// 80x24: status, timeline and trend a line each; below, the round (positions, heat
/// map, decision) or the report.
fn compact(
    buf: &mut Buffer,
    body: Rect,
    d: &DebateState,
    ui: &mut UiState,
    now_ms: i64,
    theme: &Theme,
) {
    let sel = ui.debate.selected(d);
    let tick = ui.tick;
    let t = labels::thresholds(d);
    let heads = [
        report::status_line(d, theme),
        timeline::line(d, sel, tick, theme),
        trend::line(&d.consensus_trend, sel, &t, theme),
    ];
    for (k, l) in heads.iter().enumerate() {
        lines::draw(buf, row(body, k as u16), std::slice::from_ref(l), 0);
    }
    let main = Rect {
        y: body.y + 3.min(body.height),
        height: body.height.saturating_sub(3),
        ..body
    };
    if main.height < 3 {
        return;
    }
    match ui.debate.tab {
        DebateTab::Report => {
            report_pane(buf, main, d, ui, (now_ms, theme), "Report (w: the round)")
        }
        DebateTab::Positions => {
            let cols = split(
                main,
                Direction::Horizontal,
                &[Constraint::Percentage(56), Constraint::Percentage(44)],
            );
            round_panes(buf, cols[1], d, ui, theme, false);
            let round = sel.and_then(|r| d.round(r));
            let title = format!("Positions · round {} (w: report)", sel.unwrap_or(0));
            let inner = pane(buf, cols[0], &title, true, theme);
            let live = Live {
                tick,
                now_ms,
                rows: usize::from(inner.height.saturating_sub(2) / 2).max(2),
            };
            let l = positions::lines(inner.width, d, round, &live, theme);
            scroll_positions(buf, &[(inner, l)], ui);
        }
    }
}

/// The heat map above the host's decision, in `r`.
fn round_panes(
    buf: &mut Buffer,
    r: Rect,
    d: &DebateState,
    ui: &UiState,
    theme: &Theme,
    detail: bool,
) {
    let sel = ui.debate.selected(d);
    let round = sel.and_then(|n| d.round(n));
    let t = labels::thresholds(d);
    let heat = heatmap::lines(r.width.saturating_sub(2), round, &t, detail, theme);
    let heat_h = (heat.out.len() as u16 + 2).min(r.height / 2).max(3);
    let rows = split(
        r,
        Direction::Vertical,
        &[Constraint::Length(heat_h), Constraint::Min(3)],
    );
    let inner = pane(buf, rows[0], "Similarity", false, theme);
    lines::draw(buf, inner, &heat.out, 0);
    let title = format!("Host · round {}", sel.unwrap_or(0));
    let inner = pane(buf, rows[1], &title, false, theme);
    let l = decision::lines(inner.width, d, round, ui.tick, theme);
    lines::draw(buf, inner, &l.out, 0);
}

/// Draws the positions panes from the shared scroll position (clamped to the longest).
fn scroll_positions(buf: &mut Buffer, panes: &[(Rect, Lines)], ui: &mut UiState) {
    let rows = panes.iter().map(|(r, _)| r.height).min().unwrap_or(0);
    let longest = panes.iter().map(|(_, l)| l.out.len()).max().unwrap_or(0);
    let top = clamp(ui.debate.positions_top, longest, rows);
    for (r, l) in panes {
        lines::draw(buf, *r, &l.out, top);
    }
    ui.debate.positions_top = top;
    if ui.debate.tab == DebateTab::Positions {
        ui.debate.rows = usize::from(rows);
    }
}

fn report_pane(
    buf: &mut Buffer,
    r: Rect,
    d: &DebateState,
    ui: &mut UiState,
    (now_ms, theme): (i64, &Theme),
    title: &str,
) {
    let focused = ui.debate.tab == DebateTab::Report;
    let inner = pane(buf, r, title, focused, theme);
    let l = report::lines(inner.width, d, ui.tick, now_ms, theme);
    let top = clamp(ui.debate.report_top, l.out.len(), inner.height);
    lines::draw(buf, inner, &l.out, top);
    ui.debate.report_top = top;
    if focused {
        ui.debate.rows = usize::from(inner.height);
    }
}

/// A wide terminal: the session on top (with the timeline in a line below 160
/// columns); the rounds, the positions side by side, the heat map and decision in the
/// middle; the trend and the report below.
fn wide(
    buf: &mut Buffer,
    body: Rect,
    d: &DebateState,
    ui: &mut UiState,
    now_ms: i64,
    theme: &Theme,
) {
    let sel = ui.debate.selected(d);
    let tick = ui.tick;
    let t = labels::thresholds(d);
    let rounds_pane = body.width >= ROUNDS_PANE;
    let head_h = if rounds_pane { 4 } else { 5 };
    let rest = body.height.saturating_sub(head_h);
    let rows = split(
        body,
        Direction::Vertical,
        &[
            Constraint::Length(head_h),
            Constraint::Length(rest - rest * 2 / 5),
            Constraint::Min(8),
        ],
    );
    session_pane(buf, rows[0], d, (sel, tick), &t, rounds_pane, theme);
    // The similarity pane as wide as its matrix (the method too when there is room);
    // the rounds pane as wide as its lines; the positions get the rest.
    let round = sel.and_then(|n| d.round(n));
    let plain = widest(&heatmap::lines(u16::MAX, round, &t, false, theme));
    let full = widest(&heatmap::lines(u16::MAX, round, &t, true, theme));
    let right = if body.width >= ROUNDS_PANE {
        full.max(58)
    } else {
        plain.max(32)
    }
    .saturating_add(2)
    .min(body.width / 3);
    let rounds_w = if rounds_pane {
        let tl = timeline::lines(u16::MAX, d, sel, tick, theme);
        widest(&tl).saturating_add(2).clamp(20, 32)
    } else {
        0
    };
    let mid = split(
        rows[1],
        Direction::Horizontal,
        &[
            Constraint::Length(rounds_w),
            Constraint::Min(40),
            Constraint::Length(right),
        ],
    );
    if rounds_pane {
        rounds_list(buf, mid[0], d, (sel, tick), theme);
    }
    let detail = right.saturating_sub(2) >= full;
    round_panes(buf, mid[2], d, ui, theme, detail);
    positions_wide(buf, mid[1], d, ui, now_ms, theme);
    let bottom = split(
        rows[2],
        Direction::Horizontal,
        &[Constraint::Length(54), Constraint::Min(40)],
    );
    let inner = pane(buf, bottom[0], "Consensus trend", false, theme);
    trend::draw(buf, inner, &d.consensus_trend, sel, &t, theme);
    report_pane(buf, bottom[1], d, ui, (now_ms, theme), "Report (w: focus)");
}

/// The session pane in `r`: its status, the timeline when there is no rounds pane, and
/// the provider, embedder, thresholds and event count; `(sel, tick)` are the selected
/// round and the animation tick, `rounds_pane` whether the rounds have a pane of their own.
fn session_pane(
    buf: &mut Buffer,
    r: Rect,
    d: &DebateState,
    (sel, tick): (Option<u32>, u64),
    t: &Thresholds,
    rounds_pane: bool,
    theme: &Theme,
) {
    let inner = pane(buf, r, "Debate", false, theme);
    let mut info = vec![report::status_line(d, theme)];
    if !rounds_pane {
        info.push(timeline::line(d, sel, tick, theme));
    }
    info.push(vec![(
        format!(
            "provider {} · embedder {} · converge > {} · continue > {} · {} events",
            if d.provider.is_empty() {
                "—"
            } else {
                &d.provider
            },
            if d.embedder.is_empty() {
                "—"
            } else {
                &d.embedder
            },
            lines::num(t.converge_above),
            lines::num(t.continue_above),
            d.events
        ),
        theme.muted(),
    )]);
    lines::draw(buf, inner, &info, 0);
}

/// The rounds pane in `r`: the timeline, scrolled so the selected round stays in view.
fn rounds_list(
    buf: &mut Buffer,
    r: Rect,
    d: &DebateState,
    (sel, tick): (Option<u32>, u64),
    theme: &Theme,
) {
    let max = d.spec.as_ref().map_or(0, |s| s.max_rounds);
    let inner = pane(
        buf,
        r,
        &format!("Rounds {}/{max}", d.rounds.len()),
        false,
        theme,
    );
    let tl = timeline::lines(inner.width, d, sel, tick, theme);
    let sel_line = d
        .rounds
        .iter()
        .position(|r| Some(r.round) == sel)
        .map_or(0, |i| i * 2);
    // The selected round's two lines stay in view.
    let top = (sel_line + 2).saturating_sub(usize::from(inner.height));
    lines::draw(buf, inner, &tl.out, top);
}

/// The speakers' positions side by side, one pane each.
fn positions_wide(
    buf: &mut Buffer,
    r: Rect,
    d: &DebateState,
    ui: &mut UiState,
    now_ms: i64,
    theme: &Theme,
) {
    let sel = ui.debate.selected(d);
    let round = sel.and_then(|n| d.round(n));
    let who = positions::speakers(round);
    let n = u32::try_from(who.len().max(1)).unwrap_or(1);
    let cols = split(
        r,
        Direction::Horizontal,
        &vec![Constraint::Ratio(1, n); who.len().max(1)],
    );
    let focused = ui.debate.tab == DebateTab::Positions;
    let mut panes = Vec::new();
    for (a, c) in who.iter().zip(cols.iter()) {
        let title = format!("{} · round {}", a.as_str(), sel.unwrap_or(0));
        let inner = pane(buf, *c, &title, focused, theme);
        let mut l = Lines::new(inner.width);
        let live = Live {
            tick: ui.tick,
            now_ms,
            rows: usize::from(inner.height.saturating_sub(1)).max(2),
        };
        positions::agent_lines(&mut l, d, round, a, &live, theme);
        panes.push((inner, l));
    }
    scroll_positions(buf, &panes, ui);
}
