//! The CLI's commands: run, demo, validate, runs, show, resume, bench, gen-plan.

pub mod bench;
pub mod bench_tokens;
pub mod bench_ui;
pub mod headless;
pub mod launch;
pub mod show;
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
}
