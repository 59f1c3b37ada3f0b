//! The views the screens' key handlers open and the state keeps: a loop's conversation
//! and one of its steps, the command line's completions, a failed attempt to find in its
//! run, the Runs screen's facts. They live here, below `ui_state`, so that the state and
//! the handlers both import them and neither imports the other's module back.

use std::collections::HashMap;
use std::sync::Arc;

/// The conversation view of one loop: a list of its messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationList {
    /// Task index.
    pub task: usize,
    /// The invocation whose loop it is.
    pub invocation: Arc<str>,
    /// Selected row.
    pub selected: usize,
    /// First row shown.
    pub top: usize,
}

/// One step of a loop, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepPopup {
    /// Task index.
    pub task: usize,
    /// The invocation whose loop it is.
    pub invocation: Arc<str>,
    /// Step number.
    pub step: u32,
    /// First line shown.
    pub top: usize,
    /// The conversation view it was opened from (Esc goes back to it).
    pub back: Option<ConversationList>,
}

/// What Tab offers: a title and the candidates (none: the title says why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    /// E.g. `Tab: 12 commands start with re`.
    pub title: String,
    /// The candidates, sorted.
    pub items: Vec<String>,
}

impl Completions {
    /// The candidates for `text` after Tab completed it as far as it could (`hits` from
    /// `command_line::complete`); `None` when there was one candidate (it was completed whole).
    pub fn of(text: &str, hits: Vec<String>) -> Option<Completions> {
        let last = text.split(' ').next_back().unwrap_or("");
        let what = if text.contains(' ') {
            "values"
        } else {
            "commands"
        };
        match hits.len() {
            1 => None,
            0 => Some(Completions {
                title: if last.is_empty() {
                    format!("no {what} to complete here")
                } else {
                    format!("no {what} start with `{last}`")
                },
                items: hits,
            }),
            n => Some(Completions {
                title: if last.is_empty() {
                    format!("Tab: {n} {what}")
                } else {
                    format!("Tab: {n} {what} start with `{last}`")
                },
                items: hits,
            }),
        }
    }
}

/// A failed attempt to show in its run once the run is on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Find {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt's invocation.
    pub invocation_id: String,
    /// The output view to show it in.
    pub view: OutputView,
}

/// What the Runs screen shows of a run beyond its summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// Tasks per status (`success`, `failed`, `blocked`, …), most common first.
    pub outcomes: Vec<(String, i64)>,
    /// Reviews waiting for a decision.
    pub reviews_waiting: usize,
}

/// The facts of every run, by run id.
pub type RunFactsById = HashMap<String, RunFacts>;

/// What the output pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputView {
    /// The raw stream of every attempt.
    Raw,
    /// The parsed atoms of the latest invocation.
    Atoms,
    /// The full request of the latest invocation.
    Request,
    /// Quality issues, errors and notes.
    Issues,
    /// The context plan: inputs, transfer modes, trimming (seed 000 §7.2).
    Context,
}

impl OutputView {
    /// Title in the pane border.
    pub fn title(self) -> &'static str {
        match self {
            OutputView::Raw => "raw stream",
            OutputView::Atoms => "parsed atoms",
            OutputView::Request => "request",
            OutputView::Issues => "issues",
            OutputView::Context => "context",
        }
    }
}
