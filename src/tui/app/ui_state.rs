//! `UiState`: what the person is looking at (screen, selection, scroll, overlays,
//! filters) and the documents loaded for it. Changed only by `update` and by messages.

use std::collections::HashMap;
use std::sync::Arc;

use super::action::Screen;
pub use super::docs::{Doc, DocKey};
pub use super::views::OutputView;
use super::views::{Completions, ConversationList, RunFactsById, StepPopup};
use crate::base::protocol::Grade;
use crate::data::store::RunSummary;

/// A pane of the Run screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The plan DAG.
    Dag,
    /// The selected task's output.
    Output,
    /// Token budgets.
    Budget,
    /// Grades.
    Quality,
}

impl Pane {
    /// Focus order.
    pub const ORDER: [Pane; 4] = [Pane::Dag, Pane::Output, Pane::Budget, Pane::Quality];
}

/// A scroll position in a list of lines: `top` is the first logical line shown; when
/// `follow` is set the view sticks to the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    /// First line shown.
    pub top: usize,
    /// Stick to the tail.
    pub follow: bool,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll {
            top: 0,
            follow: true,
        }
    }
}

/// A question waiting for y/n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// Quit while the run is live (it stays resumable).
    Quit,
    /// Quit while this many of the run's tasks wait for a person's review.
    QuitWithReviews(u32),
    /// Accept the atoms of the task in [`UiState::accept_pending`].
    Accept,
    /// Cancel the run.
    Cancel,
}

/// An overlay drawn over the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    /// Every key.
    Help {
        /// First line shown.
        top: usize,
    },
    /// A y/n question.
    Confirm(Question),
    /// The evidence of the review item selected in the queue: `Y` accepts, `X`
    /// rejects from inside it.
    Evidence {
        /// The lines.
        lines: Arc<Vec<String>>,
        /// First line shown.
        top: usize,
    },
    /// A text to read: a comparison of two runs.
    Text {
        /// Title.
        title: String,
        /// The lines.
        lines: Arc<Vec<String>>,
        /// First line shown.
        top: usize,
    },
    /// One attempt of a failure row: its stream, request, atoms or issues.
    Attempt(AttemptView),
    /// One step of a tool-using loop, whole.
    LoopStep(StepPopup),
    /// The conversation of a tool-using loop: every message with its role and tokens.
    Conversation(ConversationList),
    /// The whole atom at this index of `RunState::atoms`.
    AtomDetail {
        /// Atom index.
        atom: usize,
        /// First line shown.
        top: usize,
    },
}

/// The attempt overlay of the Failures screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptView {
    /// Invocation shown.
    pub invocation: Arc<str>,
    /// `run · task · attempt k/n · agent`.
    pub title: String,
    /// Which document.
    pub view: OutputView,
    /// First line shown.
    pub top: usize,
}

impl AttemptView {
    /// The document this view shows.
    pub fn doc(&self) -> DocKey {
        let inv = self.invocation.clone();
        match self.view {
            OutputView::Request => DocKey::Request(inv),
            OutputView::Atoms => DocKey::Atoms(inv),
            OutputView::Issues => DocKey::Issues(inv),
            OutputView::Raw | OutputView::Context => DocKey::Stream(inv),
        }
    }
}

/// Atoms table column to sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomSort {
    /// Graded order.
    Order,
    /// Asset id.
    Id,
    /// Atom type.
    Type,
    /// Agent.
    Agent,
    /// Grade.
    Grade,
    /// Score.
    Score,
    /// Confidence.
    Confidence,
}

impl AtomSort {
    /// Cycle order.
    pub const ALL: [AtomSort; 7] = [
        AtomSort::Order,
        AtomSort::Id,
        AtomSort::Type,
        AtomSort::Agent,
        AtomSort::Grade,
        AtomSort::Score,
        AtomSort::Confidence,
    ];

    /// Column name.
    pub fn name(self) -> &'static str {
        match self {
            AtomSort::Order => "order",
            AtomSort::Id => "id",
            AtomSort::Type => "type",
            AtomSort::Agent => "agent",
            AtomSort::Grade => "grade",
            AtomSort::Score => "score",
            AtomSort::Confidence => "confidence",
        }
    }
}

/// The Atoms screen's table state.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomsTable {
    /// Selected row (index into the filtered view).
    pub selected: usize,
    /// First row shown.
    pub top: usize,
    /// Sort column.
    pub sort: AtomSort,
    /// Descending.
    pub reverse: bool,
    /// Only this grade.
    pub grade: Option<Grade>,
    /// Only this agent (index into `RunState::agents`).
    pub agent: Option<usize>,
    /// Only this atom type.
    pub atom_type: Option<Arc<str>>,
    /// Search text (case-insensitive substring of id, type, agent, task).
    pub query: String,
}

impl Default for AtomsTable {
    fn default() -> Self {
        AtomsTable {
            selected: 0,
            top: 0,
            sort: AtomSort::Order,
            reverse: false,
            grade: None,
            agent: None,
            atom_type: None,
            query: String::new(),
        }
    }
}

/// The Runs screen's list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunsList {
    /// Runs, newest first; `None` until loaded.
    pub rows: Option<Vec<RunSummary>>,
    /// Selected row.
    pub selected: usize,
    /// First row shown.
    pub top: usize,
    /// Load error.
    pub error: Option<String>,
    /// A run marked to be compared with another.
    pub marked: Option<String>,
    /// Each run's tasks by outcome and reviews waiting, by run id.
    pub facts: RunFactsById,
    /// The `/` filter (case-insensitive, in id, status, plan, time, provider, outcomes).
    pub query: String,
}

/// A status-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// Text.
    pub text: String,
    /// Whether it is a warning.
    pub warn: bool,
    /// When it was shown, ms since the Unix epoch.
    pub at_ms: i64,
}

impl Flash {
    /// Whether it has been on screen long enough at `now_ms` to give the hints back
    /// ([`FLASH_MS`], twice as long for a warning); it stays in the message log.
    pub fn expired(&self, now_ms: i64) -> bool {
        now_ms - self.at_ms >= if self.warn { 2 * FLASH_MS } else { FLASH_MS }
    }
}

/// How long a status message shows before the hints come back, ms.
pub const FLASH_MS: i64 = 5_000;

/// Where things were drawn at the last frame, for the mouse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastLayout {
    /// The header's screen tabs: first column, one past the last, and the screen.
    pub tabs: Vec<(u16, u16, Screen)>,
    /// The header's row.
    pub header_y: u16,
    /// The Run screen's panes.
    pub panes: Vec<(ratatui::layout::Rect, Pane)>,
    /// The DAG's cells and their tasks.
    pub dag_cells: Vec<(ratatui::layout::Rect, usize)>,
    /// A list's rows: the area of its rows and the index of the first one shown.
    pub list: Option<(ratatui::layout::Rect, usize)>,
}

/// Most messages the message log keeps.
pub const MAX_MESSAGES: usize = 300;

/// Everything about what the person sees that is not the run itself.
#[derive(Debug, Clone)]
pub struct UiState {
    /// Current screen.
    pub screen: Screen,
    /// Focused pane of the Run screen.
    pub focus: Pane,
    /// Selected task index.
    pub task: usize,
    /// Folded steps of tool-using loops, by task index (`:fold N|all`, `:unfold`).
    pub folds: std::collections::HashMap<usize, super::folds::Folds>,
    /// Selected attempt of that task (index into its invocations; `None`: the latest).
    pub attempt: Option<usize>,
    /// Follow mode: the selection moves to where the work is.
    pub follow: bool,
    /// DAG cells per line at the last frame (for paging within a layer).
    pub dag_per_line: usize,
    /// First DAG line shown.
    pub dag_top: usize,
    /// Output view.
    pub view: OutputView,
    /// Output scroll.
    pub scroll: Scroll,
    /// Height of the output pane's text area at the last frame (for paging).
    pub output_rows: usize,
    /// Height of list areas at the last frame (for paging).
    pub list_rows: usize,
    /// Open overlay.
    pub overlay: Option<Overlay>,
    /// Search being typed (`/`), if any.
    pub input: Option<String>,
    /// Atoms table.
    pub atoms: AtomsTable,
    /// Runs list.
    pub runs: RunsList,
    /// Failures list.
    pub failures: super::failures_list::FailuresList,
    /// The run whose failures are listed when only one run's are.
    pub failures_run: Option<String>,
    /// Loaded documents per invocation.
    pub docs: HashMap<DocKey, Doc>,
    /// Tasks whose evicted text was asked for from the log.
    pub outputs_asked: std::collections::HashSet<usize>,
    /// Status-line message.
    pub flash: Option<Flash>,
    /// Every message shown, with its time (ms), newest last; at most [`MAX_MESSAGES`].
    pub messages: std::collections::VecDeque<(i64, Flash)>,
    /// The run shown is a finished run opened from the log (no controls).
    pub read_only: bool,
    /// Whether a live engine is attached.
    pub engine_attached: bool,
    /// Whether the live run is running (kept by the driver; differs from the shown run's
    /// state while a stored run is open).
    pub live_running: bool,
    /// Wall clock at the last frame (ms), set by the driver; used only for elapsed time.
    pub now_ms: i64,
    /// Frame counter for spinners.
    pub tick: u64,
    /// Set when the app should exit.
    pub quitting: bool,
    /// The transport of a replay (a run shown from its log).
    pub replay: Option<super::transport::Transport>,
    /// The text typed at the input line is a seek target (not a search).
    pub seek_prompt: bool,
    /// The text typed at the input line is a command (`:`).
    pub command_prompt: bool,
    /// The command line's candidates after Tab, shown above the status line.
    pub completions: Option<Completions>,
    /// Where things were drawn at the last frame.
    pub layout: LastLayout,
    /// How the run on screen is resumed (`plexus resume RUN`, with `--db` when needed),
    /// for the quit question.
    pub resume_hint: String,
    /// The text typed at the input line is the reason to reject this (run, task)'s atoms.
    pub reason_for: Option<(String, String)>,
    /// The review (run, task) a `Y` asked to accept, waiting for the confirmation.
    pub accept_pending: Option<(String, String)>,
    /// The Debate screen: round shown, tab, scroll.
    pub debate: super::debate::DebateView,
}

impl UiState {
    /// The run whose review queue is read: the one the Failures screen is scoped to,
    /// `None` for every run's.
    pub fn review_scope(&self) -> Option<String> {
        self.failures_run
            .clone()
            .filter(|_| self.failures.this_run_only)
    }

    /// Initial state on the Run screen.
    pub fn new(engine_attached: bool) -> UiState {
        UiState {
            screen: Screen::Run,
            focus: Pane::Dag,
            task: 0,
            folds: Default::default(),
            attempt: None,
            follow: engine_attached,
            dag_per_line: 1,
            dag_top: 0,
            view: OutputView::Raw,
            scroll: Scroll::default(),
            output_rows: 10,
            list_rows: 10,
            overlay: None,
            input: None,
            atoms: AtomsTable::default(),
            runs: RunsList::default(),
            failures: super::failures_list::FailuresList::new(true),
            failures_run: None,
            docs: HashMap::new(),
            outputs_asked: Default::default(),
            flash: None,
            messages: Default::default(),
            read_only: !engine_attached,
            engine_attached,
            live_running: false,
            now_ms: 0,
            tick: 0,
            quitting: false,
            replay: None,
            seek_prompt: false,
            command_prompt: false,
            completions: None,
            reason_for: None,
            accept_pending: None,
            resume_hint: "plexus resume".into(),
            layout: LastLayout::default(),
            debate: Default::default(),
        }
    }

    /// The invocation the output pane shows for `task`: the selected attempt's, or the
    /// latest; with its attempt number (from 1) and the number of attempts.
    pub fn shown_invocation(
        &self,
        task: &crate::model::state::TaskView,
    ) -> Option<(Arc<str>, usize, usize)> {
        let n = task.invocations.len();
        match self.attempt {
            Some(k) if k < n => Some((task.invocations[k].clone(), k + 1, n)),
            _ => task.invocation.clone().map(|inv| (inv, n.max(1), n.max(1))),
        }
    }

    /// Whether an earlier attempt (not the latest) is selected.
    pub fn earlier_attempt(&self, task: &crate::model::state::TaskView) -> bool {
        self.attempt.is_some_and(|k| k + 1 < task.invocations.len())
    }

    /// Shows a message in the status line and keeps it in the message log.
    pub fn flash(&mut self, text: impl Into<String>, warn: bool) {
        let f = Flash {
            text: text.into(),
            warn,
            at_ms: chrono::Utc::now().timestamp_millis(),
        };
        if self.messages.len() >= MAX_MESSAGES {
            self.messages.pop_front();
        }
        self.messages.push_back((f.at_ms, f.clone()));
        self.flash = Some(f);
    }

    /// The message log as lines, newest last: `14:03:21  text`.
    pub fn message_lines(&self) -> Vec<String> {
        if self.messages.is_empty() {
            return vec!["no messages yet".into()];
        }
        self.messages
            .iter()
            .map(|(t, f)| {
                let at = chrono::DateTime::from_timestamp_millis(*t)
                    .map(|d| d.format("%H:%M:%S").to_string())
                    .unwrap_or_default();
                format!("{at}  {}{}", if f.warn { "⚠ " } else { "" }, f.text)
            })
            .collect()
    }
}
