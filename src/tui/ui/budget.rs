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
    let cols = Cols::new(inner.width as usize, run);
    let mut y = inner.y;
    put(buf, inner.x, y, inner.width, &cols.header(), theme.muted());
    y += 1;
    if run.agents.is_empty() {
        put(buf, inner.x, y, inner.width, "no agents yet", theme.muted());
    }
    for (i, a) in run.agents.iter().enumerate() {
        if y >= inner.bottom() {
            break;
        }
        let mut row = Row {
            buf: &mut *buf,
            x: inner.x,
            y,
            right: inner.right(),
            theme,
        };
        row.agent(&cols, i, a);
        y += 1;
    }
}

/// Which columns the pane shows at its width, and how wide they are.
struct Cols {
    /// Wide enough for cumulative in/out, calls, trims and batches.
    wide: bool,
    /// Width of the numbers after each gauge.
    nums_w: usize,
    /// The provider's own counts are shown.
    reported_col: bool,
    /// The cost of each agent's calls is shown.
    cost_col: bool,
    /// The cost per call is shown.
    per_call_col: bool,
    /// Width of each gauge.
    gauge_w: usize,
    /// Width of the agent's name.
    name_w: usize,
}

impl Cols {
    /// The columns for a pane `w` wide showing `run`.
    fn new(w: usize, run: &RunState) -> Self {
        let wide = w >= 90;
        // Numbers are right-aligned after one space, so a gauge never touches them.
        let nums_w = if wide { 13 } else { 11 };
        let reported_col = w >= 104 && run.agents.iter().any(|a| a.reported.calls > 0);
        // The cost of each agent's calls from 56 columns on; per call when wide.
        let cost_col = w >= 56;
        let per_call_col = w >= 130;
        let cost_w =
            if cost_col { COST_W + 1 } else { 0 } + if per_call_col { COST_W + 1 } else { 0 };
        let gauge_w = if w >= 110 + cost_w + if reported_col { 14 } else { 0 } {
            12
        } else {
            6
        };
        let extras = if wide { 40 } else { 0 } + if reported_col { 14 } else { 0 } + cost_w;
        let fixed = 1 + gauge_w + nums_w + 1 + gauge_w + nums_w + extras;
        let name_w = w.saturating_sub(fixed).clamp(4, 22);
        Cols {
            wide,
            nums_w,
            reported_col,
            cost_col,
            per_call_col,
            gauge_w,
            name_w,
        }
    }

    /// The header row naming the columns shown.
    fn header(&self) -> String {
        let mut header = format!(
            "{:name_w$} {:<gw$}{:>nw$} {:<gw$}{:>nw$}",
            "agent",
            if self.gauge_w > 7 { "context" } else { "ctx" },
            "",
            "output",
            "",
            name_w = self.name_w,
            gw = self.gauge_w,
            nw = self.nums_w
        );
        if self.wide {
            header.push_str(&format!(
                " {:>8} {:>8} {:>9} {:>5} {:>5}",
                "in", "out", "calls", "trims", "batch"
            ));
        }
        if self.reported_col {
            header.push_str(&format!(" {:>13}", "provider i/o"));
        }
        if self.cost_col {
            header.push_str(&format!(" {:>COST_W$}", "cost"));
        }
        if self.per_call_col {
            header.push_str(&format!(" {:>COST_W$}", "per call"));
        }
        header
    }
}

/// One agent's row being drawn, left to right from `x`.
struct Row<'a> {
    /// The buffer drawn into.
    buf: &'a mut Buffer,
    /// Where the next cell starts.
    x: u16,
    /// The row's line.
    y: u16,
    /// The pane's right edge.
    right: u16,
    /// The theme's styles.
    theme: &'a Theme,
}

impl Row<'_> {
    /// Columns left before the pane's right edge.
    fn room(&self) -> u16 {
        self.right.saturating_sub(self.x)
    }

    /// Puts `text` at the cursor and moves past it.
    fn put(&mut self, text: &str, style: Style) {
        self.x += put(self.buf, self.x, self.y, self.room(), text, style);
    }

    /// Draws a gauge `w` wide at the cursor and moves past it.
    fn gauge(&mut self, w: usize, frac: f64) {
        let w = w.min(self.room() as usize);
        self.x += gauge(self.buf, self.x, self.y, w, frac, self.theme);
    }

    /// Draws agent `a` (the `i`-th) in the columns `cols`.
    fn agent(&mut self, cols: &Cols, i: usize, a: &AgentView) {
        let theme = self.theme;
        let flagged = a.reported.disagrees();
        let name = pad_or_truncate(
            &a.name,
            cols.name_w.saturating_sub(if flagged { 2 } else { 0 }),
        );
        self.put(&name, Style::default().fg(theme.agent(i)));
        if flagged {
            self.put(" ≠", theme.warn());
        }
        self.x += 1;
        self.gauges(cols, a);
        if cols.wide {
            let rest = format!(
                " {:>8} {:>8} {:>9} {:>5} {:>5}",
                compact(a.tokens_in),
                compact(a.tokens_out),
                calls(a),
                a.trims,
                a.batches
            );
            self.put(&rest, theme.style_base());
        }
        if cols.reported_col {
            self.reported(a, flagged);
        }
        if cols.cost_col {
            let cell = format!(" {:>COST_W$}", a.spend.label());
            self.put(&cell, theme.style_base());
        }
        if cols.per_call_col {
            self.per_call(a);
        }
    }

    /// The context gauge (latest prompt against the limit) and the output gauge (latest
    /// output against max_tokens), each with its numbers.
    fn gauges(&mut self, cols: &Cols, a: &AgentView) {
        let nums_w = cols.nums_w;
        let limit = a.max_input_tokens;
        let frac = ratio(a.last_prompt, limit);
        self.gauge(cols.gauge_w, frac);
        let unused = a.invocations == 0;
        let nums = format!(
            "{:>nums_w$}",
            format!(" {}/{}", or_dash(a.last_prompt, unused), compact(limit))
        );
        self.put(&nums, level(frac, self.theme));
        self.x += 1;
        // While the latest call streams, its output so far, estimated from its bytes
        // (`~`); once it ends, the count of its output.
        let (output, shown) = match a.streaming {
            Some((_, bytes)) if bytes > 0 && a.in_flight > 0 => {
                let est = bytes.div_ceil(BYTES_PER_TOKEN);
                (est, format!("~{}", compact(est)))
            }
            _ => (a.last_output, compact(a.last_output)),
        };
        let ofrac = ratio(output, a.max_tokens as u64);
        self.gauge(cols.gauge_w, ofrac);
        let onums = format!(
            "{:>nums_w$}",
            format!(" {shown}/{}", compact(a.max_tokens as u64))
        );
        self.put(&onums, level(ofrac, self.theme));
    }

    /// The provider's own prompt/output counts, warned when they disagree with ours.
    fn reported(&mut self, a: &AgentView, flagged: bool) {
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
            self.theme.warn()
        } else {
            self.theme.style_base()
        };
        self.put(&cell, style);
    }

    /// What a priced call cost on average, `—` when none was priced.
    fn per_call(&mut self, a: &AgentView) {
        let per_call = match a.spend.known() {
            Some(usd) if a.spend.priced > 0 => crate::base::cost::usd(usd / a.spend.priced as f64),
            _ => crate::base::cost::NO_PRICE.to_string(),
        };
        self.put(&format!(" {per_call:>COST_W$}"), self.theme.muted());
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

/// Bytes per token of the streaming estimate (about four for English text and JSON).
const BYTES_PER_TOKEN: u64 = 4;

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
