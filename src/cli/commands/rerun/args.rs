//! What `plexus rerun` was asked, from the command line.

use std::path::PathBuf;

/// What `plexus rerun` was asked.
#[derive(Debug, Clone)]
pub struct RerunArgs {
    /// The recorded run (`latest`, an id or a unique prefix).
    pub run: String,
    /// A plan to run instead of the recorded one.
    pub plan: Option<PathBuf>,
    /// JSON merged over the recorded run config.
    pub run_config: Option<PathBuf>,
    /// The database holding the recorded run (default: the one the new run goes to).
    pub from: Option<PathBuf>,
    /// Stream answers at once instead of with the recorded timing.
    pub instant: bool,
    /// Print the report as JSON on stdout.
    pub json: bool,
}
