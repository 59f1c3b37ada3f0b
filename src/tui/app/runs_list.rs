//! The Runs screen's list: what each run adds to its summary (tasks by outcome, reviews
//! waiting) and the `/` filter over the rows.

pub use super::views::{RunFacts, RunFactsById};

use super::ui_state::RunsList;
use crate::data::store::RunSummary;

impl RunsList {
    /// The rows the filter lets through, as indices into `rows`, newest first.
    pub fn view(&self) -> Vec<usize> {
        let Some(rows) = &self.rows else {
            return Vec::new();
        };
        let needle = self.query.trim().to_lowercase();
        (0..rows.len())
            .filter(|&i| needle.is_empty() || self.matches(&rows[i], &needle))
            .collect()
    }

    /// The selected row (of the filtered view).
    pub fn selected_row(&self) -> Option<&RunSummary> {
        let rows = self.rows.as_ref()?;
        self.view().get(self.selected).and_then(|&i| rows.get(i))
    }

    /// Whether `row` contains `needle` (lower case) in its id, status, plan, start time,
    /// provider or the outcomes of its tasks (`failed`, `review`).
    fn matches(&self, row: &RunSummary, needle: &str) -> bool {
        let has = |s: &str| s.to_lowercase().contains(needle);
        let facts = self.facts.get(&row.run_id);
        has(&row.run_id)
            || has(&row.status)
            || has(&row.plan_id)
            || has(&row.plan_source)
            || has(&row.created_at)
            || has(&row.provider)
            || facts.is_some_and(|f| {
                f.outcomes.iter().any(|(s, n)| *n > 0 && has(s))
                    || (f.reviews_waiting > 0 && has("review"))
            })
    }
}

/// Tasks counted by status as the screen names them, most common first: `3 ok`,
/// `1 failed`, `1 blocked` (`ok` for success, `to go` for pending).
pub fn outcome_words(f: &RunFacts) -> Vec<String> {
    f.outcomes
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {}", word(s)))
        .collect()
}

/// The same counts with the DAG's glyphs: `✔3 ✘1 ⊘1`.
pub fn outcome_glyphs(f: &RunFacts) -> String {
    f.outcomes
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{}{n}", glyph(s)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn word(status: &str) -> &str {
    match status {
        "success" => "ok",
        "pending" => "to go",
        s => s,
    }
}

/// The DAG's glyph of a task status.
pub fn glyph(status: &str) -> &'static str {
    match status {
        "success" => "✔",
        "partial" => "◑",
        "failed" => "✘",
        "timeout" => "◷",
        "blocked" => "⊘",
        "cancelled" => "–",
        "running" => "▶",
        "ready" => "◇",
        _ => "○",
    }
}

/// Orders counted statuses for display: success first, then the rest by count.
pub fn sort_outcomes(v: &mut [(String, i64)]) {
    let rank = |s: &str| match s {
        "success" => 0,
        "partial" => 1,
        "failed" => 2,
        "timeout" => 3,
        "blocked" => 4,
        "cancelled" => 5,
        _ => 6,
    };
    v.sort_by(|a, b| rank(&a.0).cmp(&rank(&b.0)).then(a.0.cmp(&b.0)));
}
