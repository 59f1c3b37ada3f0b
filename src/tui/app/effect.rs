//! `Effect`: what `update` asks the driver to do (engine commands, store queries, quit),
//! as data.

use super::docs::DocKey;
use crate::run::engine::Control;

/// Something for the driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send a command to the engine.
    Engine(Control),
    /// Load a document from the store.
    LoadDoc(DocKey),
    /// Load the list of runs.
    LoadRuns,
    /// Load the failed invocations of a run (`None`: of every run).
    LoadFailures(Option<String>),
    /// Load the review queue (of the same scope as the failures).
    LoadReviews(Option<String>),
    /// Decide a review: accept or reject a task's atoms.
    Review {
        /// Run.
        run: String,
        /// Task.
        task: String,
        /// The decision.
        verdict: crate::run::review::Verdict,
    },
    /// Open a run read-only from its log.
    OpenRun(String),
    /// Open a run read-only at its end to find a failed attempt in it (the attempt is
    /// kept in the Failures list's `find`).
    FindInRun(String),
    /// Compare two runs (by id) and show the differences.
    Compare(String, String),
    /// Load a task's evicted output back from the log.
    LoadOutput(usize),
    /// Leave a run opened from the log and show the live run again.
    BackToLive,
    /// Replay: show the state after event `to` (the answer carrying `token` counts).
    ReplaySeek {
        /// Target event.
        to: u64,
        /// Names the seek.
        token: u64,
    },
    /// Replay: fold the next event.
    ReplayStep,
    /// Switch to a theme (a built-in name, a name in the config directory, or a file).
    SetTheme(String),
    /// Leave the program.
    Quit,
}
