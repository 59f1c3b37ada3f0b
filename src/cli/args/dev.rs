//! `plexus dev …`: generators and a mock server for trying plexus and for benchmarks.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::help;
use super::options::at_least_one;

/// One developer tool.
#[derive(Subcommand, Debug)]
pub enum DevCommand {
    /// Write a generated plan (layers of fan-out and fan-in) to stdout
    #[command(after_long_help = help::GEN_PLAN)]
    GenPlan(GenPlanSpec),
    /// Write a generated failure tree, a few documents damaged
    ///
    /// A leave-application example in Chinese, for trying `plexus failures DIR`; a few
    /// documents are damaged on purpose (truncated, not JSON, missing, lacking fields).
    #[command(after_long_help = help::GEN_FAILURES)]
    GenFailures {
        /// Directory to create (must not exist, or be empty).
        dir: PathBuf,
        #[command(flatten)]
        spec: GenFailuresSpec,
    },
    /// Serve a local OpenAI- and Anthropic-compatible mock API
    ///
    /// On 127.0.0.1: valid answers from the simulated model, streamed over
    /// --stream-ms, for trying provider profiles offline and for `plexus bench http`.
    #[command(after_long_help = help::MOCK_SERVER)]
    MockServer(MockServerArgs),
}

/// Shape of a generated plan (`plexus dev gen-plan`, and the plans of benchmarks and
/// tests).
#[derive(Args, Debug, Clone, Copy)]
pub struct GenPlanSpec {
    /// Tasks.
    #[arg(long, default_value_t = 10_000, value_parser = at_least_one())]
    pub tasks: usize,
    /// Tasks per layer.
    #[arg(long, default_value_t = 500, value_parser = at_least_one())]
    pub width: usize,
    /// Upstream tasks per task (fan-in), at most (not an option).
    #[arg(skip = 3usize)]
    pub fan_in: usize,
    /// Most atoms per task.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_atoms: u32,
}

impl Default for GenPlanSpec {
    fn default() -> Self {
        GenPlanSpec {
            tasks: 10_000,
            width: 500,
            fan_in: 3,
            max_atoms: 1,
        }
    }
}

/// What a generated failure tree holds (`plexus dev gen-failures`, and the trees of
/// benchmarks and tests).
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct GenFailuresSpec {
    /// Samples (about two thirds fail).
    #[arg(long, default_value_t = 27, value_parser = at_least_one())]
    pub samples: usize,
    /// Typical conversation turns per sample.
    #[arg(long, default_value_t = 12, value_parser = at_least_one())]
    pub turns: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Documents damaged on purpose.
    #[arg(long, default_value_t = 3)]
    pub broken: usize,
    /// The iteration's number (not an option).
    #[arg(skip = 12u32)]
    pub iteration: u32,
}

impl Default for GenFailuresSpec {
    fn default() -> Self {
        GenFailuresSpec {
            samples: 27,
            turns: 12,
            seed: 1,
            broken: 3,
            iteration: 12,
        }
    }
}

/// Options of `plexus dev mock-server`.
#[derive(Args, Debug, Clone)]
pub struct MockServerArgs {
    /// Port (0 = any free port; the address is printed).
    #[arg(long, default_value_t = 8089)]
    pub port: u16,
    /// Milliseconds over which each answer streams.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub stream_ms: u64,
    /// Text events per answer.
    #[arg(long, default_value_t = 20, value_parser = at_least_one())]
    pub chunks: usize,
    /// Accept only this key (Bearer or x-api-key) [default: any].
    #[arg(long, env = "PLEXUS_MOCK_KEY", value_name = "KEY")]
    pub require_key: Option<String>,
    /// Server threads.
    #[arg(long, default_value_t = 1, value_parser = at_least_one())]
    pub threads: usize,
    /// Answer every chat request from this script of model turns instead of the
    /// simulated model (JSON; see docs/providers.md, "A scripted model").
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}
