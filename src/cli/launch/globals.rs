//! The options every command shares (database, seed, concurrency, provider, config).

use std::path::PathBuf;

/// Options shared by every command.
#[derive(Debug, Clone)]
pub struct Globals {
    /// Database file.
    pub db: PathBuf,
    /// Seed override.
    pub seed: Option<u64>,
    /// Concurrency override.
    pub concurrency: Option<usize>,
    /// `--max-cost`: the run's money budget, US dollars (overrides a resumed run's).
    pub max_cost: Option<f64>,
    /// Never open a TUI.
    pub headless: bool,
    /// `--provider`: the profile to run on (overrides the one stored with a resumed run).
    pub provider: Option<String>,
    /// `--config`: the config file given on the command line.
    pub config: Option<PathBuf>,
    /// The configuration, once loaded (commands that read it load it first, so a
    /// broken file stops them before anything starts); `None` loads it when needed.
    pub loaded: Option<std::sync::Arc<crate::base::config::Config>>,
    /// Where the run's traces go (`--otlp`, the config, `OTEL_EXPORTER_OTLP_*`); `None`
    /// sends none.
    pub otlp: Option<crate::features::otel::OtlpSettings>,
}
