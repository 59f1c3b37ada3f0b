//! `Action`: what a person means by a key (select, scroll, pause, …). Keys map to actions
//! through the keymap; `app::update` turns actions into UI state changes and effects.

use serde::{Deserialize, Serialize};

/// A screen of the workbench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Screen {
    /// The live run: DAG, output, budgets, quality.
    Run,
    /// Every atom of the run.
    Atoms,
    /// Runs in the database.
    Runs,
    /// Failed, timed-out, partial and retried invocations, of this run or every run.
    Failures,
}

impl Screen {
    /// Every screen in tab order.
    pub const ALL: [Screen; 4] = [Screen::Run, Screen::Atoms, Screen::Runs, Screen::Failures];

    /// Title shown in the tab bar.
    pub fn title(self) -> &'static str {
        match self {
            Screen::Run => "Run",
            Screen::Atoms => "Atoms",
            Screen::Runs => "Runs",
            Screen::Failures => "Failures",
        }
    }
}

macro_rules! actions {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )*) => {
        /// A person's intent. Named in the config file's `[keys]` table by `name()`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $( $(#[$doc])* $variant, )*
        }

        impl Action {
            /// Every action.
            pub const ALL: &'static [Action] = &[$(Action::$variant),*];

            /// The name used in the config file.
            pub fn name(self) -> &'static str {
                match self { $( Action::$variant => $name, )* }
            }

            /// Parses a config-file name.
            pub fn from_name(name: &str) -> Option<Action> {
                match name { $( $name => Some(Action::$variant), )* _ => None }
            }
        }
    };
}

actions! {
    /// Quit (asks first while the run is live; the run stays resumable).
    Quit = "quit",
    /// Answer yes to an open question.
    Confirm = "confirm",
    /// Close the open overlay, question or search; leave the focused pane.
    Back = "back",
    /// Next screen.
    NextScreen = "next_screen",
    /// Previous screen.
    PrevScreen = "prev_screen",
    /// The Run screen.
    ScreenRun = "screen_run",
    /// The Atoms screen.
    ScreenAtoms = "screen_atoms",
    /// The Runs screen.
    ScreenRuns = "screen_runs",
    /// The Failures screen.
    ScreenFailures = "screen_failures",
    /// Move up.
    Up = "up",
    /// Move down.
    Down = "down",
    /// Move left.
    Left = "left",
    /// Move right.
    Right = "right",
    /// Up a page.
    PageUp = "page_up",
    /// Down a page.
    PageDown = "page_down",
    /// To the top.
    Top = "top",
    /// To the bottom (and follow the tail again).
    Bottom = "bottom",
    /// Open: focus the output of the selected task, an atom's detail, a run.
    Open = "open",
    /// Cycle pane focus on the Run screen.
    FocusNext = "focus_next",
    /// Output pane: the raw stream.
    ViewRaw = "view_raw",
    /// Output pane: the parsed atoms.
    ViewAtoms = "view_atoms",
    /// Output pane: the full request.
    ViewRequest = "view_request",
    /// Output pane: the quality issues.
    ViewIssues = "view_issues",
    /// Output pane: the context plan (inputs, modes, trimming).
    ViewContext = "view_context",
    /// The conversation of the selected task's tool-using loop: every message with its
    /// role and tokens (Enter opens a message's step).
    LoopConversation = "loop_conversation",
    /// Pause or resume dispatch.
    TogglePause = "toggle_pause",
    /// Cancel the run (asks first).
    Cancel = "cancel",
    /// Retry the selected failed task.
    Retry = "retry",
    /// Show every key.
    Help = "help",
    /// The command line: any action by name, `:goto TASK`, `:retry TASK`, `:theme NAME`…
    CommandLine = "command_line",
    /// The message log: the last few hundred status messages with their times.
    Messages = "messages",
    /// Start a search.
    Search = "search",
    /// Cycle the sort column.
    Sort = "sort",
    /// Reverse the sort.
    SortReverse = "sort_reverse",
    /// Cycle the grade filter.
    FilterGrade = "filter_grade",
    /// Cycle the agent filter.
    FilterAgent = "filter_agent",
    /// Cycle the atom type filter.
    FilterType = "filter_type",
    /// Failures: this run only, or every run in the database.
    FilterRun = "filter_run",
    /// Failures: the last hour, day, week, or any time.
    FilterTime = "filter_time",
    /// Clear filters and search.
    ClearFilters = "clear_filters",
    /// The selected task's previous attempt (its request, stream, atoms and issues).
    PrevAttempt = "prev_attempt",
    /// The selected task's next attempt.
    NextAttempt = "next_attempt",
    /// Follow the work: the DAG selection stays on the running task nearest the front,
    /// or on the latest failure (on by default in a live run; moving the selection stops it).
    Follow = "follow",
    /// The next running task.
    NextRunning = "next_running",
    /// The next blocked task.
    NextBlocked = "next_blocked",
    /// A page to the left within the selected task's layer.
    LayerPageLeft = "layer_page_left",
    /// A page to the right within the selected task's layer.
    LayerPageRight = "layer_page_right",
    /// The next failure: a failed, timed-out, partial or retried task or row.
    NextFailure = "next_failure",
    /// The previous failure.
    PrevFailure = "prev_failure",
    /// Failures: the review queue (tasks a hallucination stopped for a person) / the list.
    ReviewQueue = "review_queue",
    /// Review queue: accept the selected task's atoms (its dependents may run).
    ReviewAccept = "review_accept",
    /// Review queue: reject the selected task's atoms, with a reason.
    ReviewReject = "review_reject",
    /// Failure trees: write the handoff of the marked samples.
    ExportHandoff = "export_handoff",
    /// Failure trees: the problems report.
    ProblemsView = "problems_view",
    /// Failure trees: unfold every folded turn and JSON level (again: fold back).
    UnfoldAll = "unfold_all",
    /// Runs screen: mark a run, then compare it with another.
    Compare = "compare",
    /// Replay: one event back.
    ReplayStepBack = "replay_step_back",
    /// Replay: one event forward.
    ReplayStepForward = "replay_step_forward",
    /// Replay: the previous task start.
    ReplayPrevStart = "replay_prev_start",
    /// Replay: the next task start.
    ReplayNextStart = "replay_next_start",
    /// Replay: the previous failure.
    ReplayPrevFailure = "replay_prev_failure",
    /// Replay: the next failure.
    ReplayNextFailure = "replay_next_failure",
    /// Replay: play slower.
    ReplaySlower = "replay_slower",
    /// Replay: play faster (past ×64: as fast as possible).
    ReplayFaster = "replay_faster",
    /// Replay: to the first event.
    ReplayStart = "replay_start",
    /// Replay: to the last event (the live edge of a run still being written).
    ReplayEnd = "replay_end",
    /// Replay: seek to a percentage, an event or a time (typed).
    ReplaySeek = "replay_seek",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &a in Action::ALL {
            assert!(seen.insert(a.name()), "duplicate name {}", a.name());
            assert_eq!(Action::from_name(a.name()), Some(a));
        }
        assert_eq!(Action::from_name("nope"), None);
    }
}
