//! The session's status line (status, round N of max, errors, the question) and the
//! final report: the reporter's text wrapped (as it streams, while it writes), its
//! summary (without the points its text lists already) and final plan, then the errors
//! the session handled.

use ratatui::style::Modifier;

use super::labels::{spinner, status};
use super::lines::{Line, Lines};
use super::positions::elapsed;
use crate::base::protocol::debate::{AgentRole, AgentStatus, ReporterMetadata};
use crate::base::text::sanitize::sanitize;
use crate::model::state::debate::DebateState;
use crate::tui::ui::theme::Theme;

/// `[converged] round 3/5 · 1 error · Q: …`: the session in one line.
pub fn status_line(d: &DebateState, theme: &Theme) -> Line {
    let (word, badge) = status(d, theme);
    let max = d.spec.as_ref().map_or(0, |s| s.max_rounds);
    let mut l: Line = vec![
        (format!(" {word} "), badge),
        (
            format!(" round {}/{max}", d.current_round),
            theme.style_base(),
        ),
    ];
    let n = d.errors.len();
    l.push((
        format!(" · {n} error{}", if n == 1 { "" } else { "s" }),
        if n > 0 { theme.warn() } else { theme.muted() },
    ));
    let q = d.spec.as_ref().map(|s| s.question.as_str()).unwrap_or("");
    l.push((" · ".into(), theme.muted()));
    l.push((
        sanitize(&q.replace('\n', " ")),
        theme.style_base().add_modifier(Modifier::BOLD),
    ));
    l
}

/// Why the session ended, when it has.
pub fn ending(d: &DebateState) -> Option<String> {
    d.finished
        .as_ref()
        .map(|f| format!("ended after {} round(s): {}", f.rounds, f.reason))
}

/// The report's lines for a pane `width` wide.
pub fn lines(width: u16, d: &DebateState, tick: u64, now_ms: i64, theme: &Theme) -> Lines {
    let mut out = Lines::new(width);
    if let Some(e) = ending(d) {
        out.text(&e, 0, theme.muted());
        out.blank();
    }
    match &d.report {
        None => {
            let writing = d
                .agents
                .get(&AgentRole::Reporter)
                .filter(|a| !d.is_finished() && a.status == AgentStatus::Running);
            let text = if let Some(a) = writing {
                let mut l: Line = vec![(
                    format!("{} the reporter is writing", spinner(tick)),
                    theme.accent(),
                )];
                if let Some(t0) = a.started_ms {
                    l.push((format!(" · {}", elapsed(now_ms - t0)), theme.style_base()));
                }
                // A session whose text does not stream (a moderated one) shows its time alone.
                if a.stream_tokens > 0 {
                    l.push((format!(" · {} tokens", a.stream_tokens), theme.muted()));
                }
                out.push(l);
                for line in a.stream.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    out.text(line, 1, theme.muted());
                }
                return errors(out, d, theme);
            } else if d.is_finished() {
                "no report: the session ended without one".into()
            } else {
                "no report yet".into()
            };
            out.push(vec![(text, theme.muted())]);
        }
        Some(t) => {
            if t.content.trim().is_empty() {
                out.push(vec![("the report has no text".into(), theme.muted())]);
            } else {
                out.text(&t.content, 0, theme.style_base());
            }
            let meta = t
                .output
                .as_ref()
                .and_then(|o| o.get("metadata"))
                .cloned()
                .map(serde_json::from_value::<ReporterMetadata>);
            match meta {
                Some(Ok(m)) => summary(&mut out, &m, &t.content, theme),
                Some(Err(_)) | None => {
                    out.blank();
                    out.push(vec![("summary and plan unreadable".into(), theme.error())]);
                }
            }
        }
    }
    errors(out, d, theme)
}

/// The errors the session handled, after the report.
fn errors(mut out: Lines, d: &DebateState, theme: &Theme) -> Lines {
    if !d.errors.is_empty() {
        out.blank();
        out.push(vec![("Errors handled".into(), theme.title())]);
        for e in &d.errors {
            out.lead(
                &e.message,
                &format!("round {} {}: ", e.round, e.kind),
                1,
                theme.warn(),
                theme.style_base(),
            );
        }
    }
    out
}

/// The items of `items` that the report's `text` does not list already (each point
/// shows once).
pub fn not_in(items: &[String], text: &str) -> Vec<String> {
    items
        .iter()
        .filter(|i| {
            let i = i.trim();
            !i.is_empty()
                && !text
                    .lines()
                    .any(|l| l.trim_start_matches(['-', '*', '•', ' ']).trim() == i)
        })
        .cloned()
        .collect()
}

fn summary(out: &mut Lines, m: &ReporterMetadata, text: &str, theme: &Theme) {
    let s = &m.summary;
    out.blank();
    out.bullets(
        "Key agreements",
        &not_in(&s.key_agreements, text),
        theme.title(),
        theme.style_base(),
    );
    out.bullets(
        "Resolved concerns",
        &not_in(&s.resolved_concerns, text),
        theme.title(),
        theme.style_base(),
    );
    out.bullets(
        "Remaining uncertainties",
        &not_in(&s.remaining_uncertainties, text),
        theme.title(),
        theme.warn(),
    );
    let p = &m.final_plan;
    out.blank();
    out.lead(
        &p.title,
        "Final plan: ",
        0,
        theme.title(),
        theme.style_base().add_modifier(Modifier::BOLD),
    );
    out.lead(&p.goal, "goal ", 1, theme.muted(), theme.style_base());
    out.push(vec![(
        format!(
            " consensus {:?} · {} round(s) · {} h",
            p.consensus_level, p.rounds, p.plan.total_estimated_hours
        )
        .to_lowercase(),
        theme.muted(),
    )]);
    for ph in &p.plan.phases {
        out.lead(
            &format!("{} ({})", ph.phase_name, ph.duration),
            "▸ ",
            1,
            theme.accent(),
            theme.style_base(),
        );
        for task in &ph.tasks {
            let due = task
                .deadline
                .as_deref()
                .map(|d| format!(", by {d}"))
                .unwrap_or_default();
            out.lead(
                &format!("{} ({} h{due})", task.title, task.estimated_hours),
                "• ",
                3,
                theme.muted(),
                theme.style_base(),
            );
        }
    }
}
