//! Launching runs, below the commands and above the engine: the options every command
//! shares, the run configuration, starting and resuming a run, the headless progress
//! printer and status line, the provider profile a run uses, and debate sessions.

pub mod config;
pub mod debate;
pub mod globals;
pub mod headless;
pub mod keeper;
pub mod next_steps;
pub mod profile;
pub mod progress;
pub mod replay;
pub mod resume;
pub mod start;
pub mod status;

pub use self::config::RunConfig;
pub use self::globals::Globals;
pub use self::headless::run_headless;
pub use self::next_steps::plexus_command;
pub use self::resume::{prepare_resume, resume_command, Resuming};
pub use self::start::{start, Finished, Started};
