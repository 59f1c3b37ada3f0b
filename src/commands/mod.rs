//! The CLI's commands: run, demo, validate, runs, show, log, diff, resume, rerun,
//! review, export, import, failures, export-failures, providers, completions, man and
//! the developer tools (the benchmarks are in `crate::bench`).

pub mod check;
pub mod debate;
pub mod dev;
pub mod diff;
pub mod docs_gen;
pub mod failures;
pub mod failures_screen;
pub mod headless;
pub mod launch;
pub mod log;
pub mod portable;
pub mod providers;
pub mod rerun;
pub mod review;
pub mod show;
pub mod show_loops;
pub mod start;
pub mod table;
pub mod tui;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::engine::EngineConfig;
use crate::provider::SimConfig;

/// Everything stored with a run so it can be resumed the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Engine settings.
    pub engine: EngineConfig,
    /// Simulated provider settings.
    pub simulated: SimConfig,
    /// Provider profile name (`simulated`, or a `[providers.NAME]` of plexus.toml); the
    /// profile itself is read from the config when the run starts or resumes, so no
    /// header or key source is stored with the run.
    #[serde(default = "simulated_name")]
    pub provider: String,
    /// The recorded run a rerun answers from (its provider is then `replay`); `None`
    /// for every other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::provider::replay::ReplaySource>,
}

fn simulated_name() -> String {
    "simulated".into()
}

/// The command that resumes `run` in database `db`: `plexus resume RUN`, with
/// `--db PATH` when `db` is not the one plexus opens by default.
pub fn resume_command(db: &std::path::Path, run: &str) -> String {
    let default = std::env::var_os("PLEXUS_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".plexus/plexus.db"));
    if db == default {
        format!("plexus resume {run}")
    } else {
        let shown = db.display().to_string();
        let quoted = if shown
            .chars()
            .any(|c| c.is_whitespace() || "'\"$`\\".contains(c))
        {
            format!("'{}'", shown.replace('\'', "'\\''"))
        } else {
            shown
        };
        format!("plexus --db {quoted} resume {run}")
    }
}

/// Options shared by every command.
#[derive(Debug, Clone)]
pub struct Globals {
    /// Database file.
    pub db: PathBuf,
    /// Seed override.
    pub seed: Option<u64>,
    /// Concurrency override.
    pub concurrency: Option<usize>,
    /// Never open a TUI.
    pub headless: bool,
    /// `--provider`: the profile to run on (overrides the one stored with a resumed run).
    pub provider: Option<String>,
    /// `--config`: the config file given on the command line.
    pub config: Option<PathBuf>,
    /// The configuration, once loaded (commands that read it load it first, so a
    /// broken file stops them before anything starts); `None` loads it when needed.
    pub loaded: Option<std::sync::Arc<crate::config::Config>>,
}
