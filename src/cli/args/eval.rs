//! `plexus eval`: run an eval spec over a dataset, and the commands on evals already
//! made (resume, rerun, rescore, compare, show, list, export-tree).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::options::{at_least_one, FaultMix, SimOpts};

/// `plexus eval FILE [OPTIONS]` or `plexus eval COMMAND`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct EvalArgs {
    /// A command on evals already made.
    #[command(subcommand)]
    pub command: Option<EvalCommand>,
    /// Running a spec.
    #[command(flatten)]
    pub run: EvalRunArgs,
}

/// Running an eval spec.
#[derive(Args, Debug, Clone)]
pub struct EvalRunArgs {
    /// The eval spec (JSON: name, plan, dataset, checks; see docs/eval.md).
    #[arg(value_name = "FILE", required = true)]
    pub spec: Option<PathBuf>,
    /// Further spec files (a shell pattern that matched several): refused with a
    /// message, as an eval takes one spec.
    #[arg(value_name = "MORE", hide = true)]
    pub more: Vec<PathBuf>,
    /// Read the samples from this file instead of the spec's dataset.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Only the first N samples, or samples A to B (from 1, after the other filters).
    #[arg(long, value_name = "N|A-B")]
    pub limit: Option<String>,
    /// Only this sample (repeat for several).
    #[arg(long = "sample-id", value_name = "ID")]
    pub sample_id: Vec<String>,
    /// Only samples whose metadata field K is V, e.g. `meta.level=hard` (repeat: all
    /// must hold).
    #[arg(long = "where", value_name = "meta.K=V")]
    pub filter: Vec<String>,
    /// Runs per sample [default: the spec's, else 1].
    #[arg(long, value_name = "K", value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=100))]
    pub epochs: Option<u32>,
    /// How a sample's epochs make one result: mean, majority, all, any, at_least:N
    /// [default: the spec's, else mean].
    #[arg(long, value_name = "REDUCER")]
    pub reducer: Option<String>,
    /// Where the failure tree is written [default: evals/NAME].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The iteration the tree is written as [default: the next one in --out].
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..))]
    pub iteration: Option<u32>,
    /// The least pass rate of a check, e.g. `exact=0.9` (repeat; added to the spec's).
    /// A gate missed ends with exit 8.
    #[arg(long = "fail-under", value_name = "CHECK=RATE")]
    pub fail_under: Vec<String>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// No Eval screen: progress on standard error (the default without a terminal).
    #[arg(long)]
    pub headless: bool,
    /// Print the tokens and cost the eval would use, counted from every prompt, and
    /// stop before anything runs.
    #[arg(long)]
    pub estimate: bool,
    /// Faults the simulated provider injects.
    #[arg(long, value_enum, default_value_t = FaultMix::None)]
    pub faults: FaultMix,
    /// Multiplier on every timeout (1.0 = as the plan says).
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = super::options::positive_number)]
    pub timeout_scale: f64,
    /// Divide every retry delay by this (1 = the protocol's 5 s, 15 s, 30 s…).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = super::options::divisor())]
    pub retry_delay_div: u64,
    /// Seed of the simulated provider (same seed, same answers).
    #[arg(long, default_value_t = 7, help_heading = "Session options")]
    pub seed: u64,
    /// Provider profile: `simulated` (built in, offline) or a `[providers.NAME]` of
    /// plexus.toml (see `plexus providers`).
    #[arg(
        long,
        env = "PLEXUS_PROVIDER",
        value_name = "NAME",
        help_heading = "Session options"
    )]
    pub provider: Option<String>,
    /// Most model calls in flight [default: 8].
    #[arg(long, value_name = "N", value_parser = at_least_one(), help_heading = "Session options")]
    pub concurrency: Option<usize>,
    /// Money budget in US dollars: once the calls cost this much, no new call starts and
    /// the eval stops, resumable (needs the model's price in the config).
    #[arg(long, value_name = "USD", value_parser = super::options::dollars, help_heading = "Session options")]
    pub max_cost: Option<f64>,
    #[command(flatten)]
    pub sim: SimOpts,
}

/// How a resumed or rerun eval runs, when not as it did.
#[derive(Args, Debug, Clone, Default)]
pub struct EvalSession {
    /// Most model calls in flight [default: the eval's own].
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub concurrency: Option<usize>,
    /// Provider profile [default: the eval's own].
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
}

/// Commands on evals already made.
#[derive(Subcommand, Debug, Clone)]
pub enum EvalCommand {
    /// Continue an interrupted or killed eval
    ///
    /// No sample and epoch that finished is run again; those in flight start over.
    /// Re-issuing the `plexus eval FILE` command that made it does the same.
    #[command(after_long_help = super::help::EVAL_RESUME)]
    Resume {
        /// Eval id (or `latest`, or a unique prefix).
        eval: String,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        session: EvalSession,
    },
    /// Run again the samples that failed or errored, as a child eval
    ///
    /// The child inherits the parent's other results, so its report is whole.
    #[command(after_long_help = super::help::EVAL_RERUN)]
    Rerun {
        /// The parent eval (or `latest`, or a unique prefix).
        eval: String,
        /// The samples that failed.
        #[arg(long)]
        failing: bool,
        /// The samples that could not be scored.
        #[arg(long)]
        errors: bool,
        /// The samples that failed this check (repeat).
        #[arg(long, value_name = "NAME")]
        check: Vec<String>,
        /// The samples listed in FILE, one id a line (the Eval screen's `r` marks).
        #[arg(long, value_name = "FILE")]
        samples: Option<PathBuf>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        session: EvalSession,
    },
    /// Score an eval's recorded outputs again with other checks (no model call)
    ///
    /// Makes a new eval on the same run with the checks of FILE (an eval spec, or a
    /// JSON array of checks); compare the two with `plexus eval compare`.
    #[command(after_long_help = super::help::EVAL_RESCORE)]
    Rescore {
        /// The eval (or `latest`, or a unique prefix).
        eval: String,
        /// The checks: an eval spec file or a JSON array of checks.
        #[arg(long, value_name = "FILE")]
        checks: PathBuf,
        /// Where the new eval's failure tree goes [default: the eval's, next iteration].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Compare two evals check by check
    ///
    /// Samples are aligned by id and content hash. Per check: both pass rates with
    /// 95% Wilson intervals, the paired difference with its interval, an exact McNemar
    /// p-value (Holm-adjusted across checks), and the samples that flipped each way.
    #[command(after_long_help = super::help::EVAL_COMPARE)]
    Compare {
        /// The first eval (the baseline).
        a: String,
        /// The second eval.
        b: String,
        /// Also compare within each value of a metadata field, e.g. `meta.level`.
        #[arg(long, value_name = "meta.K")]
        by: Option<String>,
        /// Exit 8 when this check regressed significantly (repeat).
        #[arg(long, value_name = "CHECK")]
        gate: Vec<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Show one eval: counts, pass rate per check, failing samples
    #[command(after_long_help = super::help::EVAL_SHOW)]
    Show {
        /// Eval id (or `latest`, or a unique prefix).
        eval: String,
        /// One sample's results, check by check, with expected and found.
        #[arg(long, value_name = "ID")]
        sample: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Open the Eval screen on an eval (it follows one that is running)
    ///
    /// Progress, rate, time left and spend; each check's pass rate with its 95%
    /// interval and its difference to the parent iteration; the samples, filtered by
    /// status, check, flips or metadata; a sample's expected and found side by side.
    #[command(after_long_help = super::help::EVAL_OPEN)]
    Open {
        /// Eval id (or `latest`, or a unique prefix).
        #[arg(default_value = "latest")]
        eval: String,
    },
    /// List the evals in the database
    #[command(after_long_help = super::help::EVAL_LIST)]
    List {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Write an eval's failure tree again from the database
    #[command(after_long_help = super::help::EVAL_EXPORT_TREE)]
    ExportTree {
        /// Eval id (or `latest`, or a unique prefix).
        eval: String,
        /// Directory to write into (its `execution_outputs/iteration_N` must not exist).
        dir: PathBuf,
    },
}
