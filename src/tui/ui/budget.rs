//! The Token budget pane: one row per agent — latest prompt against the agent's context
//! limit and latest output against max_tokens as gauges, cumulative in/out, invocations,
//! and (when the provider reports usage) its own counts beside ours, with `≠` on an agent
//! whose counts disagree by more than a quarter; what its calls cost (in all and per
//! call), `—` where its model has no price. The title carries the run's cost, and says
//! "own count only" when the server reports no usage.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::text::{bar, compact, put};
use super::theme::Theme;
use crate::base::text::wrap::pad_or_truncate;
use crate::model::state::{AgentView, RunState};

/// Draws the budget rows into `inner`.
pub fn draw(buf: &mut Buffer, inner: Rect, run: &RunState, theme: &Theme) {
    if inner.height == 0 || inner.width < 10 {
        return;
    }
    let w = inner.width as usize;
    let wide = w >= 90;

    // Numbers are right-aligned after one space, so a gauge never touches them.
    let nums_w = if wide { 13 } else { 11 };
    let reported_col = w >= 104 && run.agents.iter().any(|a| a.reported.calls > 0);
    // The cost of each agent's calls from 56 columns on; per call when wide.
    let cost_col = w >= 56;
    let per_call_col = w >= 130;
    let cost_w = if cost_col { COST_W + 1 } else { 0 } + if per_call_col { COST_W + 1 } else { 0 };
    let gauge_w = if w >= 110 + cost_w + if reported_col { 14 } else { 0 } {
        12
    } else {
        6
    };
    let extras = if wide { 40 } else { 0 } + if reported_col { 14 } else { 0 } + cost_w;
    let fixed = 1 + gauge_w + nums_w + 1 + gauge_w + nums_w + extras;
    let name_w = w.saturating_sub(fixed).clamp(4, 22);
    let mut y = inner.y;
    let mut header = format!(
        "{:name_w$} {:<gw$}{:>nw$} {:<gw$}{:>nw$}",
        "agent",
        if gauge_w > 7 { "context" } else { "ctx" },
        "",
        "output",
        "",
        gw = gauge_w,
        nw = nums_w
    );
    if wide {
        header.push_str(&format!(
            " {:>8} {:>8} {:>9} {:>5} {:>5}",
            "in", "out", "calls", "trims", "batch"
        ));
    }
    if reported_col {
        header.push_str(&format!(" {:>13}", "provider i/o"));
    }
    if cost_col {
        header.push_str(&format!(" {:>COST_W$}", "cost"));
    }
    if per_call_col {
        header.push_str(&format!(" {:>COST_W$}", "per call"));
    }
    put(buf, inner.x, y, inner.width, &header, theme.muted());
    y += 1;
    if run.agents.is_empty() {
        put(buf, inner.x, y, inner.width, "no agents yet", theme.muted());
    }
    let right = inner.right();
    for (i, a) in run.agents.iter().enumerate() {
        if y >= inner.bottom() {
            break;
        }
        let room = |x: u16| right.saturating_sub(x);
        let mut x = inner.x;
        let flagged = a.reported.disagrees();
        let name = pad_or_truncate(&a.name, name_w.saturating_sub(if flagged { 2 } else { 0 }));
        x += put(
            buf,
            x,
            y,
            room(x),
            &name,
            Style::default().fg(theme.agent(i)),
        );
        if flagged {
            x += put(buf, x, y, room(x), " ≠", theme.warn());
        }
        x += 1;
        let limit = a.max_input_tokens;
        let frac = ratio(a.last_prompt, limit);
        x += gauge(buf, x, y, gauge_w.min(room(x) as usize), frac, theme);
        let unused = a.invocations == 0;
        let nums = format!(
            "{:>nums_w$}",
            format!(" {}/{}", or_dash(a.last_prompt, unused), compact(limit))
        );
        x += put(buf, x, y, room(x), &nums, level(frac, theme));
        x += 1;
        let ofrac = ratio(a.last_output, a.max_tokens as u64);
        x += gauge(buf, x, y, gauge_w.min(room(x) as usize), ofrac, theme);
        let onums = format!(
            "{:>nums_w$}",
            format!(
                " {}/{}",
                compact(a.last_output),
                compact(a.max_tokens as u64)
            )
        );
        x += put(buf, x, y, room(x), &onums, level(ofrac, theme));
        if wide {
            let rest = format!(
                " {:>8} {:>8} {:>9} {:>5} {:>5}",
                compact(a.tokens_in),
                compact(a.tokens_out),
                calls(a),
                a.trims,
                a.batches
            );
            x += put(buf, x, y, room(x), &rest, theme.style_base());
        }
        if reported_col {
            let r = &a.reported;
            let cell = if r.calls == 0 {
                format!(" {:>13}", "—")
            } else {
                format!(
                    " {:>13}",
                    format!("{}/{}", compact(r.prompt), compact(r.output))
                )
            };
            let style = if flagged {
                theme.warn()
            } else {
                theme.style_base()
            };
            x += put(buf, x, y, room(x), &cell, style);
        }
        if cost_col {
            let cell = format!(" {:>COST_W$}", a.spend.label());
            x += put(buf, x, y, room(x), &cell, theme.style_base());
        }
        if per_call_col {
            let per_call = match a.spend.known() {
                Some(usd) if a.spend.priced > 0 => {
                    crate::base::cost::usd(usd / a.spend.priced as f64)
                }
                _ => crate::base::cost::NO_PRICE.to_string(),
            };
            put(
                buf,
                x,
                y,
                room(x),
                &format!(" {per_call:>COST_W$}"),
                theme.muted(),
            );
        }
        y += 1;
    }
}

/// Width of a cost cell (`≥$12.35`, `$0.000012`).
const COST_W: usize = 9;

/// The pane's title for a pane `width` wide: the run's cost so far, and what `≠` means
/// when an agent is flagged, in the longest words that fit.
pub fn title(run: &RunState, width: u16) -> String {
    let cost = run.spend();
    let cost = (cost.priced + cost.unpriced > 0).then(|| cost.label());
    let flagged = run.agents.iter().any(|a| a.reported.disagrees());
    let own_only = own_count_only(run);
    let say = |head: &str, cost_word: &str, flag: &str| {
        let mut t = head.to_string();
        if own_only {
            t.push_str(" · own count only");
        }
        if let Some(c) = &cost {
            t.push_str(&format!(" · {cost_word}{c}"));
        }
        if flagged {
            t.push_str(flag);
        }
        t
    };
    let room = super::text::title_room(width);
    let options = [
        say("Token budget", "cost ", " · ≠ provider count >25% off"),
        say("Token budget", "cost ", " · ≠ >25% off"),
        say("Budget", "", " · ≠ >25% off"),
    ];
    let fits = |t: &&String| crate::base::text::sanitize::display_width(t) <= room;
    options.iter().find(fits).unwrap_or(&options[2]).clone()
}

/// Whether the run's token figures are all plexus's own count: its server (not the
/// simulated provider, which reports none by design) answered calls without reporting
/// any usage.
fn own_count_only(run: &RunState) -> bool {
    let served = !run.provider.is_empty() && run.provider != "simulated";
    let answered = run.agents.iter().any(|a| a.invocations > a.in_flight);
    served && answered && run.agents.iter().all(|a| a.reported.calls == 0)
}

/// `—` for a figure not known yet (the agent has not been invoked).
fn or_dash(n: u64, unknown: bool) -> String {
    if unknown {
        "—".into()
    } else {
        compact(n)
    }
}

/// Invocations, and how many are in flight (`10 ▶3`), in at most nine columns.
fn calls(a: &AgentView) -> String {
    let s = if a.in_flight > 0 {
        format!("{} ▶{}", compact(a.invocations as u64), a.in_flight)
    } else {
        compact(a.invocations as u64)
    };
    if s.chars().count() > 9 {
        compact(a.invocations as u64)
    } else {
        s
    }
}

fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 / d as f64
    }
}

/// Style for a fill level: ok below 75 %, warn below 95 %, error above.
fn level(frac: f64, theme: &Theme) -> Style {
    if frac >= 0.95 {
        theme.error()
    } else if frac >= 0.75 {
        theme.warn()
    } else {
        theme.style_base()
    }
}

fn gauge(buf: &mut Buffer, x: u16, y: u16, w: usize, frac: f64, theme: &Theme) -> u16 {
    let (filled, empty) = bar(frac, w);
    let fill_style = if frac >= 0.95 {
        theme.error()
    } else if frac >= 0.75 {
        theme.warn()
    } else {
        theme.ok()
    };
    let a = put(buf, x, y, w as u16, &filled, fill_style);
    let b = put(
        buf,
        x + a,
        y,
        (w as u16).saturating_sub(a),
        &empty,
        theme.muted(),
    );
    a + b
}

#[cfg(test)]
mod tests {
    use crate::model::state::{AgentView, RunState};

    fn run(provider: &str, reported_calls: u32) -> RunState {
        let mut agent = AgentView {
            name: "Scholar".into(),
            invocations: 2,
            in_flight: 1,
            ..AgentView::default()
        };
        agent.reported.calls = reported_calls;
        let mut state = RunState::default();
        state.provider = provider.into();
        state.agents = vec![agent];
        state
    }

    #[test]
    fn the_title_says_own_count_only_when_a_server_reported_no_usage() {
        assert!(super::title(&run("smol", 0), 80).contains("own count only"));
        // The server reported usage for a call: the figures are its.
        assert!(!super::title(&run("smol", 1), 80).contains("own count only"));
        // The simulated provider's counts are the only counts there are.
        assert!(!super::title(&run("simulated", 0), 80).contains("own count only"));
        // Nothing answered yet: nothing to say.
        let mut waiting = run("smol", 0);
        waiting.agents[0].invocations = 1;
        assert!(!super::title(&waiting, 80).contains("own count only"));
    }
}
