//! What a tool call may use: the workspace, the database, the run's data folder, a
//! clock, the output-level inputs and a cancel flag.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::base::protocol::messages::OutputLevel;
use crate::base::tokens::TokenCounter;

/// The clock tools read: the real one, or a fixed instant (tests and offline replays,
/// which must see the time the recorded run saw).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolClock {
    /// `Utc::now()`.
    #[default]
    System,
    /// Always this instant.
    Fixed(DateTime<Utc>),
}

impl ToolClock {
    /// The current instant by this clock.
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            ToolClock::System => Utc::now(),
            ToolClock::Fixed(t) => *t,
        }
    }
}

/// Set when the executor gave up on an attempt (it timed out); tools that loop (walking
/// a directory, reading rows) check it and stop early, so a timed-out blocking tool does
/// not keep a thread busy.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// Asks the tool to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the tool was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Everything a tool call may use. Cheap to clone (blocking tools take a copy to their
/// thread).
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Root of the workspace: file tools never read outside it.
    pub workspace_root: PathBuf,
    /// The plexus database `atom_query` reads (read-only); `None` → a `NO_DATABASE` error.
    pub db_path: Option<PathBuf>,
    /// The run's data folder, where large or `full` results are written (see
    /// [`ToolContext::run_data_dir`]); `None` → they are summarised, not stored.
    pub data_dir: Option<PathBuf>,
    /// The clock of `get_now` and `calculate_date`.
    pub clock: ToolClock,
    /// Output level when neither the call nor the tool names one (seed 003: standard).
    pub global_default_level: OutputLevel,
    /// How full the agent's context window is, 0.0–1.0; above 0.8 results are brief.
    pub context_usage: f64,
    /// Counts the tokens of arguments and observations for the metrics.
    pub token_counter: TokenCounter,
    /// Cancel flag of the current attempt (the executor sets a fresh one per attempt).
    pub cancel: CancelFlag,
}

impl ToolContext {
    /// A context on `workspace_root` with no database or data folder, the real clock,
    /// level standard, an empty context window and gpt-4o token counts.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        ToolContext {
            workspace_root: workspace_root.into(),
            db_path: None,
            data_dir: None,
            clock: ToolClock::System,
            global_default_level: OutputLevel::Standard,
            context_usage: 0.0,
            token_counter: TokenCounter::for_model("gpt-4o"),
            cancel: CancelFlag::default(),
        }
    }

    /// The context of a run: the database at `db_path` and the data folder
    /// `<db dir>/tool_data/<run_id>`.
    pub fn for_run(workspace_root: impl Into<PathBuf>, db_path: &Path, run_id: &str) -> Self {
        Self::new(workspace_root)
            .with_db(db_path)
            .with_data_dir(Self::run_data_dir(db_path, run_id))
    }

    /// `<db dir>/tool_data/<run_id>`, the run id reduced to file-name-safe characters.
    pub fn run_data_dir(db_path: &Path, run_id: &str) -> PathBuf {
        let dir = db_path.parent().unwrap_or(Path::new("."));
        dir.join("tool_data").join(safe_file_part(run_id))
    }

    /// With the database at `path`.
    pub fn with_db(mut self, path: impl Into<PathBuf>) -> Self {
        self.db_path = Some(path.into());
        self
    }

    /// With results stored in `dir`.
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// With `clock`.
    pub fn with_clock(mut self, clock: ToolClock) -> Self {
        self.clock = clock;
        self
    }

    /// With the context window `usage` full (0.0–1.0).
    pub fn with_context_usage(mut self, usage: f64) -> Self {
        self.context_usage = usage;
        self
    }
}

/// `s` with every character but ASCII letters, digits, `-` and `_` replaced by `_`, at
/// most 64 characters, never empty: safe as (part of) a file name whatever the model or
/// the plan wrote.
pub fn safe_file_part(s: &str) -> String {
    let out: String = s
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        "_".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_data_dir_is_beside_the_database_and_safe() {
        let d = ToolContext::run_data_dir(Path::new("/data/plexus.db"), "run-1/../x");
        assert_eq!(d, Path::new("/data/tool_data/run-1____x"));
        let c = ToolContext::for_run("/ws", Path::new("db.sqlite"), "r");
        assert_eq!(c.data_dir.as_deref(), Some(Path::new("tool_data/r")));
        assert_eq!(c.db_path.as_deref(), Some(Path::new("db.sqlite")));
        assert_eq!(safe_file_part(""), "_");
        assert_eq!(safe_file_part(&"a".repeat(100)).len(), 64);
    }

    #[test]
    fn a_fixed_clock_stands_still() {
        let t: DateTime<Utc> = "2024-03-10T07:00:00Z".parse().expect("instant");
        assert_eq!(ToolClock::Fixed(t).now(), t);
        assert!(ToolClock::System.now() > t);
    }
}
