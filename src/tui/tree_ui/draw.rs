//! Drawing the tree browser: a header, the view (sample list, problems report or a
//! sample's documents), and a status line with marks and the token budget.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::{Clear, Widget};

use super::state::{Browser, Prompt, View};
use crate::base::text::sanitize::sanitize;
use crate::base::text::wrap::{pad_or_truncate, wrap_ranges};
use crate::data::failures::{BudgetLevel, DocKind};
use crate::tui::app::keymap::Keymap;
use crate::tui::ui::text::{fill, keep_visible, paint, put};
use crate::tui::ui::theme::Theme;

/// Draws the browser into `buf`.
pub fn draw(buf: &mut Buffer, area: Rect, b: &mut Browser, theme: &Theme, keys: &Keymap) {
    paint(buf, area, theme.style_base());
    if area.height < 5 || area.width < 30 {
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
    let (header, body, status) = crate::tui::ui::screen::frame_rows(area);
    let it = b
        .tree
        .current()
        .map(|i| format!(" · iteration {}", i.number))
        .unwrap_or_default();
    let head = format!(" plexus failures · {}{it}", b.tree.root.display());
    fill(buf, header.x, header.y, header.width, theme.style_base());
    put(
        buf,
        header.x,
        header.y,
        header.width,
        &head,
        theme.accent().add_modifier(Modifier::BOLD),
    );
    b.page = usize::from(body.height.saturating_sub(4)).max(1);
    match b.view {
        View::List => draw_list(buf, body, b, theme),
        View::Problems => draw_problems(buf, body, b, theme),
        View::Detail => draw_detail(buf, body, b, theme),
        View::Design => super::draw_design::draw_design(buf, body, b, theme),
    }
    draw_status(buf, status, b, theme);
    if b.help {
        draw_help(buf, area, theme, keys);
    }
}

fn pane(buf: &mut Buffer, r: Rect, title: &str, theme: &Theme) -> Rect {
    crate::tui::ui::text::pane(buf, r, title, true, theme)
}

fn priority_name(p: Option<crate::base::protocol::handoff::FailurePriority>) -> &'static str {
    use crate::base::protocol::handoff::FailurePriority as P;
    match p {
        Some(P::High) => "high",
        Some(P::Medium) => "medium",
        Some(P::Low) => "low",
        None => "—",
    }
}

fn draw_list(buf: &mut Buffer, body: Rect, b: &mut Browser, theme: &Theme) {
    let total = b.tree.samples.len();
    let mut title = if b.rows.len() == total {
        format!("Failure samples · {total}")
    } else {
        format!("Failure samples · {} of {total}", b.rows.len())
    };
    let facets = b.tree.facets();
    let mut types = facets.failure_types.clone();
    types.sort_by_key(|t| std::cmp::Reverse(t.1));
    for (k, (t, n)) in types.iter().take(4).enumerate() {
        let name = if t.is_empty() { "unattributed" } else { t };
        title.push_str(&format!("{}{name} {n}", if k == 0 { " · " } else { ", " }));
    }
    let inner = pane(buf, body, &title, theme);
    if inner.height < 3 {
        return;
    }
    let mut y = inner.y;
    let f = &b.filter;
    let mut parts = Vec::new();
    if let Some(t) = &f.failure_type {
        parts.push(format!("type {t}"));
    }
    if let Some(c) = &f.checker {
        parts.push(format!("checker {c}"));
    }
    if f.priority.is_some() {
        parts.push(format!("priority {}", priority_name(f.priority)));
    }
    if !f.search.is_empty() {
        parts.push(format!("search “{}”", f.search));
    }
    let warn = if b.tree.warnings.is_empty() {
        String::new()
    } else {
        format!("⚠ {} · ", b.tree.warnings[0])
    };
    let line = format!(
        "{warn}{} · sort {}{}   (enter open · m mark · E handoff · P problems · f type · A checker · t priority · s S sort · / search · x clear)",
        if parts.is_empty() { "no filter".to_string() } else { parts.join(" · ") },
        format!("{:?}", b.sort.key).to_lowercase(),
        if b.sort.descending { " ↓" } else { "" }
    );
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &line,
        if warn.is_empty() {
            theme.muted()
        } else {
            theme.warn()
        },
    );
    y += 1;
    let w = usize::from(inner.width);
    let idw = 16usize.max(w / 6).min(28);
    let typew = 26usize.min(w.saturating_sub(idw + 16) / 2);
    let header = format!(
        "  {}{}{}{:>6}  checkers failed",
        pad_or_truncate("sample", idw),
        pad_or_truncate("priority", 9),
        pad_or_truncate("failure type", typew),
        "turns"
    );
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &header,
        theme.title().add_modifier(Modifier::BOLD),
    );
    y += 1;
    let rows_h = usize::from(inner.bottom().saturating_sub(y));
    b.page = rows_h.max(1);
    if b.rows.is_empty() {
        let msg = if total == 0 {
            "no samples in this tree"
        } else {
            "no sample matches (x clears)"
        };
        put(buf, inner.x, y, inner.width, msg, theme.muted());
        return;
    }
    b.selected = b.selected.min(b.rows.len() - 1);
    b.top = keep_visible(b.selected, b.top, rows_h);
    for (k, &r) in b.rows.iter().enumerate().skip(b.top).take(rows_h) {
        let s = &b.tree.samples[r as usize];
        let style = if k == b.selected {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, style);
        let mark = if b.marked.contains(&r) { "◆ " } else { "  " };
        let checkers: Vec<&str> = s.checkers_failed.iter().map(|c| &**c).collect();
        let text = format!(
            "{mark}{}{}{}{:>6}  {}",
            pad_or_truncate(&sanitize(&s.id), idw),
            pad_or_truncate(priority_name(s.priority), 9),
            pad_or_truncate(&sanitize(s.failure_type.as_deref().unwrap_or("—")), typew),
            s.conversation_turns.map_or("—".into(), |t| t.to_string()),
            checkers.join(", ")
        );
        put(buf, inner.x, y, inner.width, &text, style);
        y += 1;
    }
}

fn draw_problems(buf: &mut Buffer, body: Rect, b: &mut Browser, theme: &Theme) {
    let Some(report) = &b.report else {
        let inner = pane(buf, body, "Problems report", theme);
        put(
            buf,
            inner.x,
            inner.y,
            inner.width,
            "no problems report in this tree",
            theme.muted(),
        );
        return;
    };
    let problems = report.by_severity();
    // The samples are the failed ones; the total counts what was evaluated (for a run
    // of plexus, its invocations), not samples in this tree.
    let it = b.tree.current().map(|i| i.number);
    let in_tree = b
        .tree
        .samples
        .iter()
        .filter(|s| Some(s.iteration) == it)
        .count();
    let title = format!(
        "Problems report · {} problems · {} failed samples ({} evaluated){}",
        problems.len(),
        report.failed_samples.map_or(in_tree, |n| n as usize),
        report.total_samples.map_or("?".into(), |n| n.to_string()),
        if report.readable() {
            String::new()
        } else {
            format!(" · {}", report.doc.status.describe())
        }
    );
    let top_h = (body.height / 2).max(4).min(body.height);
    let list = Rect {
        height: top_h,
        ..body
    };
    let rest = Rect {
        y: body.y + top_h,
        height: body.height - top_h,
        ..body
    };
    let inner = pane(buf, list, &title, theme);
    b.problem = b.problem.min(problems.len().saturating_sub(1));
    let rows_h = usize::from(inner.height);
    let top = keep_visible(b.problem, 0, rows_h);
    for (y, (k, p)) in (inner.y..).zip(problems.iter().enumerate().skip(top).take(rows_h)) {
        let style = if k == b.problem {
            theme.selected()
        } else {
            theme.style_base()
        };
        fill(buf, inner.x, y, inner.width, style);
        let sev_style = match p.severity_text.to_lowercase().as_str() {
            "critical" | "high" if k != b.problem => theme.error(),
            "medium" if k != b.problem => theme.warn(),
            _ => style,
        };
        let x = inner.x
            + put(
                buf,
                inner.x,
                y,
                10,
                &pad_or_truncate(&p.severity_text, 9),
                sev_style,
            )
            + 1;
        let text = format!(
            "{} {} · {} sample(s) · {}",
            p.problem_id, p.problem_type, p.affected_count, p.title
        );
        put(buf, x, y, inner.right().saturating_sub(x), &text, style);
    }
    if rest.height < 3 {
        return;
    }
    let inner = pane(
        buf,
        rest,
        "Selected problem · modification priority (enter opens the typical case)",
        theme,
    );
    let mut lines: Vec<String> = Vec::new();
    if let Some(p) = problems.get(b.problem) {
        lines.push(format!("{} · {}", p.problem_id, p.title));
        lines.push(format!("description: {}", p.description));
        lines.push(format!("evidence: {}", p.evidence_summary));
        lines.push(format!("affected: {}", p.affected_samples.join(", ")));
        lines.push(format!(
            "typical case: {}",
            p.typical_case_id.as_deref().unwrap_or("—")
        ));
        if let Some(fix) = &p.suggested_fix {
            lines.push(format!(
                "suggested fix: {}",
                serde_json::to_string(fix).unwrap_or_default()
            ));
        }
        if !p.missing.is_empty() {
            lines.push(format!("(the report lacks: {})", p.missing.join(", ")));
        }
    }
    lines.push(String::new());
    lines.push("modification priority:".into());
    for it in &report.modification_priority {
        lines.push(format!(
            "  {}. {} — {} ({})",
            it.priority, it.problem_id, it.impact, it.estimated_improvement
        ));
    }
    let mut y = inner.y;
    for l in lines {
        for r in wrap_ranges(&sanitize(&l), inner.width) {
            if y >= inner.bottom() {
                return;
            }
            put(
                buf,
                inner.x,
                y,
                inner.width,
                &sanitize(&l)[r],
                theme.style_base(),
            );
            y += 1;
        }
    }
}

fn draw_detail(buf: &mut Buffer, body: Rect, b: &mut Browser, theme: &Theme) {
    let marked = b
        .detail
        .as_ref()
        .is_some_and(|d| b.marked.contains(&d.sample));
    let Some(d) = b.detail.as_mut() else { return };
    let title = format!(
        "{}{} · tab/1–4 documents · enter unfolds · z all · m mark · n N samples · esc back",
        if marked { "◆ " } else { "" },
        d.id
    );
    let inner = pane(buf, body, &title, theme);
    if inner.height < 3 {
        return;
    }
    // Tabs: each document's status and tokens.
    let mut x = inner.x;
    for (i, kind) in DocKind::ALL.iter().enumerate() {
        let doc = &d.docs[i];
        let label = format!(
            " {} {} {} · {} tok ",
            i + 1,
            kind.as_str(),
            doc.status.label(),
            doc.tokens
        );
        let style = if i == d.tab {
            theme.selected().add_modifier(Modifier::BOLD)
        } else if matches!(doc.status, crate::data::failures::DocStatus::Ok) {
            theme.muted()
        } else {
            theme.warn()
        };
        x += put(
            buf,
            x,
            inner.y,
            inner.right().saturating_sub(x),
            &label,
            style,
        ) + 1;
    }
    let area = Rect {
        y: inner.y + 1,
        height: inner.height - 1,
        ..inner
    };
    let lines = d.lines();
    // Wrap each logical line; keep the cursor's line in view.
    let width = area.width.max(1);
    let mut visual: Vec<(usize, String)> = Vec::new();
    for (k, (l, _)) in lines.iter().enumerate() {
        let clean = sanitize(l);
        let ranges = wrap_ranges(&clean, width);
        if ranges.is_empty() {
            visual.push((k, String::new()));
        }
        for r in ranges {
            visual.push((k, clean[r].to_string()));
        }
    }
    d.cursor = d.cursor.min(lines.len().saturating_sub(1));
    let first = visual.iter().position(|(k, _)| *k == d.cursor).unwrap_or(0);
    let h = usize::from(area.height);
    d.top = keep_visible(first, d.top, h);
    for (row, (k, text)) in visual.iter().enumerate().skip(d.top).take(h) {
        let y = area.y + (row - d.top) as u16;
        let folded = lines.get(*k).is_some_and(|(_, f)| f.is_some());
        let style = if *k == d.cursor {
            theme.selected()
        } else if folded {
            theme.accent()
        } else if text.starts_with('#') {
            theme.title()
        } else {
            theme.style_base()
        };
        put(buf, area.x, y, area.width, text, style);
    }
}

fn draw_status(buf: &mut Buffer, r: Rect, b: &Browser, theme: &Theme) {
    let bar = theme.selected();
    fill(buf, r.x, r.y, r.width, bar);
    let budget = format!(
        " {} marked · opened {}/{} tokens ",
        b.marked.len(),
        b.budget.total(),
        b.budget.limit
    );
    let bstyle = match b.budget.level() {
        BudgetLevel::Under => bar,
        BudgetLevel::Near => theme.badge(theme.warn),
        BudgetLevel::Over => theme.badge(theme.error),
    };
    if let Some((what, typed)) = &b.input {
        // The input line has the row to itself: what is typed stays in view.
        put(
            buf,
            r.x,
            r.y,
            r.width,
            &input_line(*what, typed, r.width),
            bar,
        );
        return;
    }
    let w = crate::base::text::sanitize::display_width(&budget) as u16;
    let left_w = r.width.saturating_sub(w);
    let (text, style) = match &b.flash {
        Some((t, warn)) => (
            format!(" {t}"),
            if *warn { theme.badge(theme.warn) } else { bar },
        ),
        None if b.tree.init.is_some() => (" ? help · enter open · esc close · q quit".into(), bar),
        None => (
            " ? help · enter open · m mark · E handoff · P problems · q quit".into(),
            bar,
        ),
    };
    put(buf, r.x, r.y, left_w, &text, style);
    if r.width > w {
        put(
            buf,
            r.x + left_w,
            r.y,
            w,
            &budget,
            bstyle.add_modifier(Modifier::BOLD),
        );
    }
}

/// The input line at `width` columns: the prompt's label (a shorter one when the row is
/// narrow) and the end of what is typed, with the cursor.
fn input_line(what: Prompt, typed: &str, width: u16) -> String {
    use crate::base::text::sanitize::display_width;
    let labels: &[&str] = match what {
        Prompt::Search => &[" /"],
        Prompt::ExportPath => &[" write the handoff to: ", " handoff to: "],
        Prompt::ExportReason => &[
            " why hand back (trigger_reason, Enter writes, Esc cancels): ",
            " why hand back (trigger_reason): ",
            " why: ",
        ],
    };
    let width = usize::from(width);
    let typed_w = display_width(typed);
    // The longest label that leaves the text whole (at least 20 columns of it).
    let label = labels
        .iter()
        .find(|l| display_width(l) + typed_w.max(20) < width)
        .or(labels.last())
        .copied()
        .unwrap_or_default();
    let room = width.saturating_sub(display_width(label) + 1);
    format!("{label}{}▏", crate::tui::ui::fit::tail(typed, room))
}

fn draw_help(buf: &mut Buffer, area: Rect, theme: &Theme, keys: &Keymap) {
    use crate::tui::app::Action as A;
    let entries: [(A, &str); 20] = [
        (A::Up, "up"),
        (A::Down, "down"),
        (A::PageDown, "page down"),
        (
            A::Open,
            "open the sample / unfold a folded run of turns / open a problem's typical case",
        ),
        (A::Back, "back to the list (in the list: clear the marks)"),
        (A::ViewContext, "mark or unmark the sample for the handoff"),
        (
            A::ExportHandoff,
            "write the handoff (ExecuteToInitContext) of the marked samples",
        ),
        (A::ProblemsView, "the problems report, by severity"),
        (
            A::UnfoldAll,
            "unfold every folded turn and JSON level / fold back",
        ),
        (A::NextScreen, "next document tab (1–4 pick one)"),
        (A::NextFailure, "next sample"),
        (A::PrevFailure, "previous sample"),
        (A::FilterGrade, "filter by failure type"),
        (A::FilterAgent, "filter by failed checker"),
        (A::FilterType, "filter by priority"),
        (A::Sort, "next sort key"),
        (A::SortReverse, "reverse the sort"),
        (A::Search, "search ids, failure types and checkers"),
        (A::ClearFilters, "clear filters and search"),
        (A::Quit, "quit"),
    ];
    let lines: Vec<String> = entries
        .iter()
        .map(|(a, d)| format!("{:>14}  {d}", keys.keys_for(*a).join(" ")))
        .collect();
    let w = area.width.saturating_sub(4).min(100);
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = crate::tui::ui::overlay::centered(area, w, h);
    Clear.render(r, buf);
    crate::tui::ui::text::fill_rect(buf, r, theme.style_base());
    let inner = pane(buf, r, "Keys (Esc or ? closes)", theme);
    for (k, l) in lines.iter().enumerate().take(usize::from(inner.height)) {
        put(
            buf,
            inner.x + 1,
            inner.y + k as u16,
            inner.width.saturating_sub(1),
            l,
            theme.style_base(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_line_keeps_what_is_typed_in_view_at_every_width() {
        let typed = "critical problems in 2 of 12 samples, both from the same prompt";
        for width in [80u16, 120, 200] {
            let line = input_line(Prompt::ExportReason, typed, width);
            let w = crate::base::text::sanitize::display_width(&line);
            assert!(w <= usize::from(width), "{width}: {line}");
            assert!(line.ends_with("same prompt▏"), "{width}: {line}");
            assert!(line.contains("why"), "{width}: {line}");
        }
        // Wide enough, the whole label and the whole text.
        let wide = input_line(Prompt::ExportReason, "short", 200);
        assert!(wide.contains("Enter writes, Esc cancels"), "{wide}");
        // Narrow, a shorter label and the text's end.
        let narrow = input_line(Prompt::ExportReason, typed, 40);
        assert!(narrow.starts_with(" why: …"), "{narrow}");
    }
}
