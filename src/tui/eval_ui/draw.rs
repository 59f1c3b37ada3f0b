//! Drawing the Eval screen: the progress (done, rate, time left, spend), the check
//! table (pass bar, 95% interval, difference to the parent with its interval, flips),
//! the sample list, a sample's checks side by side or its documents, and the status
//! line with the next keys. The check table is drawn by [`super::draw_checks`], a
//! sample opened by [`super::draw_detail`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::model::{Flip, Status};
use super::state::{EvalScreen, Focus, Show};
use crate::base::text::wrap::pad_or_truncate;
use crate::tui::ui::text::{bar, compact, fill, keep_visible, paint, pane, put};
use crate::tui::ui::theme::Theme;

/// Draws the screen into `buf`.
pub fn draw(buf: &mut Buffer, area: Rect, s: &mut EvalScreen, theme: &Theme) {
    paint(buf, area, theme.style_base());
    if area.height < 10 || area.width < 40 {
        put(
            buf,
            area.x,
            area.y,
            area.width,
            "terminal too small",
            theme.warn(),
        );
        return;
    }
    let status = Rect {
        y: area.bottom() - 1,
        height: 1,
        ..area
    };
    draw_head(buf, Rect { height: 3, ..area }, s, theme);
    let body = Rect {
        y: area.y + 3,
        height: area.height - 4,
        ..area
    };
    if s.detail.is_some() {
        super::draw_detail::draw_detail(buf, body, s, theme);
    } else {
        // The check table takes what its lines need, up to half the body.
        let want = s.model.checks.len() as u16 + 3;
        let h = want.min((body.height / 2).max(5)).min(body.height - 5);
        super::draw_checks::draw_checks(buf, Rect { height: h, ..body }, s, theme);
        let rest = Rect {
            y: body.y + h,
            height: body.height - h,
            ..body
        };
        draw_samples(buf, rest, s, theme);
    }
    draw_status(buf, status, s, theme);
    if s.help {
        draw_help(buf, area, theme);
    }
}

fn draw_head(buf: &mut Buffer, r: Rect, s: &EvalScreen, theme: &Theme) {
    let m = &s.model;
    let row = &m.row;
    let parent = m
        .parent
        .as_ref()
        .map(|p| format!(" vs {} ({})", p.iteration, p.eval_id))
        .unwrap_or_default();
    let status = if s.reading {
        format!("{} (reading…)", row.status)
    } else {
        row.status.clone()
    };
    let mut head = format!(
        " plexus eval · {} · {status} · iteration {}{parent} · {}",
        row.name, row.iteration, row.eval_id
    );
    if crate::base::text::sanitize::display_width(&head) > usize::from(r.width) {
        // Narrow: the parent by its iteration alone, this eval's id kept.
        let vs = m
            .parent
            .as_ref()
            .map(|p| format!(" vs {}", p.iteration))
            .unwrap_or_default();
        head = format!(
            " eval {} · {status} · iteration {}{vs} · {}",
            row.name, row.iteration, row.eval_id
        );
    }
    fill(buf, r.x, r.y, r.width, theme.style_base());
    put(
        buf,
        r.x,
        r.y,
        r.width,
        &head,
        theme.accent().add_modifier(Modifier::BOLD),
    );
    let (done, total) = (m.done(), m.total());
    let frac = if total == 0 {
        0.0
    } else {
        done as f64 / total as f64
    };
    let w = usize::from(r.width / 4).clamp(10, 40);
    let (full, empty) = bar(frac, w);
    let mut x = r.x + 1;
    x += put(
        buf,
        x,
        r.y + 1,
        r.width.saturating_sub(x - r.x),
        &full,
        theme.gauge(),
    );
    x += put(
        buf,
        x,
        r.y + 1,
        r.width.saturating_sub(x - r.x),
        &empty,
        theme.muted(),
    );
    let counts = format!(
        " {done}/{total} ({:.0}%) · passed {} · failed {} · errors {}",
        frac * 100.0,
        m.counts[1],
        m.counts[2],
        m.counts[3]
    );
    put(
        buf,
        x,
        r.y + 1,
        r.width.saturating_sub(x - r.x),
        &counts,
        theme.style_base(),
    );
    let pending = m.counts[0];
    let pace = match (s.rate, m.running() || s.followed()) {
        (Some(rate), true) if rate > 0.0 => {
            let left = pending as f64 / rate;
            format!(
                "{rate:.0}/s · ~{} left",
                crate::tui::ui::text::elapsed((left * 1000.0) as i64)
            )
        }
        (_, true) => "measuring the rate…".into(),
        _ if pending > 0 => format!("stopped with {pending} pending (plexus eval resume)"),
        _ => "done".into(),
    };
    let cost = m
        .cost_usd
        .map_or("no cost recorded".to_string(), |c| format!("${c:.4}"));
    let calls = s
        .calls
        .as_ref()
        .and_then(|c| c.lock().ok().map(|c| c.clone()))
        .filter(|c| !c.is_empty() && s.followed())
        .map(|c| format!(" {c} ·"))
        .unwrap_or_default();
    let spend = format!(
        "{calls} {pace} · {} tokens · {cost} · {} marked",
        compact(m.tokens),
        s.marked.len()
    );
    put(buf, r.x, r.y + 2, r.width, &spend, theme.muted());
}

fn filter_line(s: &EvalScreen) -> String {
    let f = &s.filter;
    let mut parts = Vec::new();
    if f.show != Show::All {
        parts.push(f.show.name().to_string());
    }
    if let Some(k) = f.check {
        if let Some(c) = s.model.checks.get(k) {
            parts.push(format!("missed {}", c.name));
        }
    }
    if f.flips {
        parts.push("flipped".into());
    }
    if let Some((k, v)) = &f.meta {
        if s.meta_values.as_ref().is_some_and(|(key, _)| key == k) {
            parts.push(format!("meta.{k}={v}"));
        } else {
            parts.push(format!("meta.{k}={v} (reading…)"));
        }
    }
    if !f.search.is_empty() {
        parts.push(format!("id “{}”", f.search));
    }
    if parts.is_empty() {
        "no filter".into()
    } else {
        parts.join(" · ")
    }
}

fn draw_samples(buf: &mut Buffer, r: Rect, s: &mut EvalScreen, theme: &Theme) {
    let total = s.model.samples.len();
    let title = if s.rows.len() == total {
        format!("Samples · {total}")
    } else {
        format!("Samples · {} of {total}", s.rows.len())
    };
    let inner = pane(buf, r, &title, s.focus == Focus::Samples, theme);
    if inner.height < 3 {
        return;
    }
    let line = format!(
        "{}   (f status · t check · d flips · / id or meta.K=V · x clear)",
        filter_line(s)
    );
    put(buf, inner.x, inner.y, inner.width, &line, theme.muted());
    let w = usize::from(inner.width);
    let idw = (w / 4).clamp(10, 40);
    let head = format!(
        "  {}{}{:>6}  {}",
        pad_or_truncate("sample", idw),
        pad_or_truncate("status", 9),
        "score",
        "checks missed"
    );
    put(
        buf,
        inner.x,
        inner.y + 1,
        inner.width,
        &head,
        theme.title().add_modifier(Modifier::BOLD),
    );
    let rows = usize::from(inner.height - 2);
    s.page = rows.max(1);
    if s.rows.is_empty() {
        let msg = if total == 0 {
            "no samples in this eval"
        } else {
            "no sample matches (x clears)"
        };
        put(buf, inner.x, inner.y + 2, inner.width, msg, theme.muted());
        return;
    }
    s.selected = s.selected.min(s.rows.len() - 1);
    s.top = keep_visible(s.selected, s.top, rows);
    let focused = s.focus == Focus::Samples;
    for (k, &i) in s.rows.iter().enumerate().skip(s.top).take(rows) {
        let y = inner.y + 2 + (k - s.top) as u16;
        let line = &s.model.samples[i as usize];
        let selected = k == s.selected;
        let style = if selected && focused {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, style);
        let mark = if s.marked.contains(&line.id) {
            "◆"
        } else {
            " "
        };
        let flip = match line.flip {
            Flip::Improved => "↑",
            Flip::Regressed => "↓",
            Flip::None if line.check_flipped => "~",
            Flip::None => " ",
        };
        let missed: Vec<&str> = s
            .model
            .checks
            .iter()
            .enumerate()
            .filter(|(k, _)| line.misses(*k))
            .map(|(_, c)| c.name.as_str())
            .collect();
        let status = if line.inherited {
            format!("{}*", line.status.name())
        } else {
            line.status.name().to_string()
        };
        let mut x = inner.x;
        x += put(
            buf,
            x,
            y,
            inner.width,
            &format!("{mark}{flip}{}", pad_or_truncate(&line.id, idw)),
            style,
        );
        let status_style = if selected && focused {
            style
        } else {
            match line.status {
                Status::Passed => theme.ok(),
                Status::Failed => theme.error(),
                Status::Error => theme.warn(),
                Status::Pending => theme.muted(),
            }
        };
        x += put(
            buf,
            x,
            y,
            inner.width.saturating_sub(x - inner.x),
            &pad_or_truncate(&status, 9),
            status_style,
        );
        let score = line.score.map_or("—".into(), |v| format!("{v:.2}"));
        put(
            buf,
            x,
            y,
            inner.width.saturating_sub(x - inner.x),
            &format!("{score:>6}  {}", missed.join(", ")),
            style,
        );
    }
}

fn draw_status(buf: &mut Buffer, r: Rect, s: &EvalScreen, theme: &Theme) {
    fill(buf, r.x, r.y, r.width, theme.style_base());
    if let Some(text) = &s.input {
        put(
            buf,
            r.x,
            r.y,
            r.width,
            &format!("/{text}▏  (enter apply · esc cancel · meta.K=V filters metadata)"),
            theme.accent(),
        );
        return;
    }
    if let Some((text, warn)) = &s.flash {
        put(
            buf,
            r.x,
            r.y,
            r.width,
            text,
            if *warn { theme.warn() } else { theme.ok() },
        );
        return;
    }
    let hints = if s.detail.is_some() {
        "esc back · ←→ 1-4 documents · j k scroll · n N next/prev · r mark · ? help"
    } else if s.focus == Focus::Checks {
        "enter its misses · j k move · tab samples · f t d / x filter · ? help · q quit"
    } else {
        "enter open · r mark · h handoff · tab checks · f t d / x filter · ? · q quit"
    };
    put(buf, r.x, r.y, r.width, hints, theme.muted());
}

const HELP: &[(&str, &str)] = &[
    ("tab", "move between the check table and the sample list"),
    ("j k ↑ ↓ g G", "move; pgup pgdn page"),
    (
        "enter",
        "open a sample (on a check: list the samples that missed it)",
    ),
    (
        "f",
        "cycle the status shown: all, failed, errors, passed, pending",
    ),
    ("t", "cycle the check whose misses are listed"),
    (
        "d",
        "only samples that flipped against the parent iteration",
    ),
    ("/", "search ids; meta.K=V filters on a metadata field"),
    ("x", "clear the filters"),
    ("r", "mark or unmark for rerun (written beside the tree)"),
    (
        "E h",
        "write the handoff (summary, problems report, handoff)",
    ),
    (
        "1-4 ←→",
        "in a sample: its documents; n N the next and previous",
    ),
    (
        "↓ ↑ ~ ◆ *",
        "regressed, improved, a check flipped; marked; inherited",
    ),
    ("q", "quit (the eval itself goes on if it runs elsewhere)"),
];

fn draw_help(buf: &mut Buffer, area: Rect, theme: &Theme) {
    let h = (HELP.len() as u16 + 2).min(area.height);
    let w = 76u16.min(area.width);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, r, buf);
    paint(buf, r, theme.style_base());
    let inner = pane(buf, r, "Eval screen keys", true, theme);
    for (k, (key, what)) in HELP.iter().enumerate().take(usize::from(inner.height)) {
        put(
            buf,
            inner.x,
            inner.y + k as u16,
            inner.width,
            &format!("{} {what}", pad_or_truncate(key, 12)),
            theme.style_base(),
        );
    }
}
