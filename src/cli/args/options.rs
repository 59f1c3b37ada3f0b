//! Option groups that several commands share: how a session runs (provider, seed,
//! concurrency, terminal UI), the simulated provider's pace and faults, the UI theme.

use clap::{Args, ValueEnum};

/// Default `--chunk-ms` of the simulated provider (`demo` and `run` alike).
pub const CHUNK_MS: u64 = 15;
/// Seed of the demo: its run shows parse, validation and quality retries; with its
/// scripted hallucination it ends failed with one task waiting for a person's review,
/// whose acceptance lets the last task run.
pub const DEMO_SEED: u64 = 2;
/// Default `--first-chunk-ms` of the simulated provider.
pub const FIRST_CHUNK_MS: u64 = 120;

/// How a run is executed: on which provider, how many calls at once, with or without
/// the terminal UI.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Session options")]
pub struct SessionOpts {
    /// Provider profile: `simulated` (built in, offline) or a `[providers.NAME]` of
    /// plexus.toml (see `plexus providers`).
    #[arg(long, env = "PLEXUS_PROVIDER", value_name = "NAME")]
    pub provider: Option<String>,
    /// Most model calls in flight [default: 8; a resumed run keeps its own].
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub concurrency: Option<usize>,
    /// No terminal UI: progress on stderr, summary on stdout (also the mode whenever
    /// stdin or stdout is not a terminal).
    #[arg(long)]
    pub headless: bool,
    /// Money budget in US dollars: once the run's calls cost this much, no new call
    /// starts, the calls in flight finish, and the run ends `budget_reached` (exit 7);
    /// `plexus resume RUN --max-cost MORE` continues it. Needs the model's price in the
    /// config's `[prices."MODEL"]` [default: none; a resumed run keeps its own].
    #[arg(long, value_name = "USD", value_parser = dollars)]
    pub max_cost: Option<f64>,
    #[command(flatten)]
    pub theme: ThemeOpt,
    #[command(flatten)]
    pub otlp: OtlpOpts,
}

/// Sending a run as OpenTelemetry traces.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Tracing")]
pub struct OtlpOpts {
    /// Send the run as OpenTelemetry traces to this OTLP/HTTP collector, e.g.
    /// `http://localhost:4318` [default: the config's `[otlp] endpoint`, else
    /// $OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// Send the prompts and answers with the traces (they are left out otherwise).
    #[arg(long)]
    pub otlp_content: bool,
}

/// The colour theme of the terminal UI.
#[derive(Args, Debug, Clone, Default)]
pub struct ThemeOpt {
    /// Colour theme: dark, light, high-contrast, a name in the config directory's
    /// themes/, or a .toml file [default: the config's, else dark].
    #[arg(long, env = "PLEXUS_THEME", value_name = "THEME")]
    pub theme: Option<String>,
}

/// Which file format `plexus schema` describes.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    /// Plan files (JSON), as `plexus validate` checks them.
    Plan,
    /// The configuration file, plexus.toml.
    Config,
    /// The answer a plan's task asks its model for (`--task TASK PLAN`), as the server
    /// is asked to hold it.
    Response,
}

/// Which faults the simulated provider injects.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMix {
    /// No faults: every answer is valid.
    None,
    /// A few of each kind (bad JSON, invalid fields, low quality, timeouts, rate
    /// limits), so retries and grades show up.
    Demo,
}

/// The simulated provider's pace (no effect on a real model).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Simulated provider")]
pub struct SimOpts {
    /// Delay between streamed chunks, in ms.
    #[arg(long, value_name = "MS", default_value_t = CHUNK_MS)]
    pub chunk_ms: u64,
    /// Delay before the first chunk, in ms.
    #[arg(long, value_name = "MS", default_value_t = FIRST_CHUNK_MS)]
    pub first_chunk_ms: u64,
}

/// The simulated provider's pace while this resume runs; each left out keeps the
/// run's own (a later resume starts from the run's own again).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Simulated provider")]
pub struct ResumePaceOpts {
    /// Delay between streamed chunks, in ms [default: the run's own].
    #[arg(long, value_name = "MS")]
    pub chunk_ms: Option<u64>,
    /// Delay before the first chunk, in ms [default: the run's own].
    #[arg(long, value_name = "MS")]
    pub first_chunk_ms: Option<u64>,
}

/// An amount of US dollars above 0 (`2.50`, or `$2.50`).
pub fn dollars(s: &str) -> Result<f64, String> {
    let r = &crate::base::ranges::MAX_COST;
    let n: f64 = s
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("`{s}` is not an amount of US dollars (such as 2.50)"))?;
    if !(n > 0.0 && n <= r.max) {
        return Err(format!(
            "the budget must be above 0 and at most {} US dollars",
            r.max
        ));
    }
    Ok(n)
}

/// A count of at least 1.
pub fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// A whole number from 1, as `u64` (a divisor).
pub fn divisor() -> clap::builder::RangedU64ValueParser<u64> {
    clap::builder::RangedU64ValueParser::<u64>::new().range(1..)
}

/// A finite number above 0 (a scale).
pub fn positive_number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{s} is not a number above 0")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}
