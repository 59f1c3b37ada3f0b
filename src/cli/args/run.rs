//! Options of `plexus run` and of `plexus rerun`.

use std::path::PathBuf;

use clap::Args;

use super::options::{divisor, positive_number, FaultMix, SessionOpts, SimOpts};

/// Options of `plexus run PLAN`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Plan JSON file.
    pub plan: PathBuf,
    /// Faults the simulated provider injects.
    #[arg(long, value_enum, default_value_t = FaultMix::None)]
    pub faults: FaultMix,
    /// Multiplier on every timeout (1.0 = as the plan says).
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = positive_number)]
    pub timeout_scale: f64,
    /// Divide every retry delay by this (1 = the protocol's 5 s, 15 s, 30 s…).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = divisor())]
    pub retry_delay_div: u64,
    /// Have the provider write summaries of large inputs (abstractive) instead
    /// of extracting key sentences.
    #[arg(long)]
    pub abstractive_summaries: bool,
    /// Seed of the simulated provider (same seed, same answers).
    #[arg(long, default_value_t = 7, help_heading = "Session options")]
    pub seed: u64,
    #[command(flatten)]
    pub session: SessionOpts,
    #[command(flatten)]
    pub sim: SimOpts,
}

/// What `plexus rerun` was asked (beside its session options).
#[derive(Args, Debug, Clone)]
pub struct RerunArgs {
    /// The recorded run (or `latest`, or a unique prefix).
    pub run: String,
    /// Run this plan instead of the recorded one (divergence is then expected and
    /// reported as information).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// A JSON object merged over the recorded run config, e.g.
    /// `{"engine": {"timeout_scale": 0.5}}`.
    #[arg(long, value_name = "FILE")]
    pub run_config: Option<PathBuf>,
    /// The database holding the recorded run [default: --db, where the new run goes].
    #[arg(long, value_name = "PATH")]
    pub from: Option<PathBuf>,
    /// Stream each recorded answer at once instead of with its recorded timing.
    #[arg(long)]
    pub instant: bool,
    /// Also print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}
