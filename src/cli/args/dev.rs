//! `plexus dev …`: generators and a mock server for trying plexus and for benchmarks.

use std::path::PathBuf;

use clap::Subcommand;

use super::help;
use super::options::at_least_one;

/// One developer tool.
#[derive(Subcommand, Debug)]
pub enum DevCommand {
    /// Write a generated plan (layers of fan-out and fan-in) to stdout
    #[command(after_long_help = help::GEN_PLAN)]
    GenPlan {
        /// Tasks.
        #[arg(long, default_value_t = 10_000, value_parser = at_least_one())]
        tasks: usize,
        /// Tasks per layer.
        #[arg(long, default_value_t = 500, value_parser = at_least_one())]
        width: usize,
        /// Most atoms per task.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        max_atoms: u32,
    },
    /// Write a generated failure tree, a few documents damaged
    ///
    /// A leave-application example in Chinese, for trying `plexus failures DIR`; a few
    /// documents are damaged on purpose (truncated, not JSON, missing, lacking fields).
    #[command(after_long_help = help::GEN_FAILURES)]
    GenFailures {
        /// Directory to create (must not exist, or be empty).
        dir: PathBuf,
        /// Samples (about two thirds fail).
        #[arg(long, default_value_t = 27, value_parser = at_least_one())]
        samples: usize,
        /// Typical conversation turns per sample.
        #[arg(long, default_value_t = 12, value_parser = at_least_one())]
        turns: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Documents damaged on purpose.
        #[arg(long, default_value_t = 3)]
        broken: usize,
    },
    /// Serve a local OpenAI- and Anthropic-compatible mock API
    ///
    /// On 127.0.0.1: valid answers from the simulated model, streamed over
    /// --stream-ms, for trying provider profiles offline and for `plexus bench http`.
    #[command(after_long_help = help::MOCK_SERVER)]
    MockServer {
        /// Port (0 = any free port; the address is printed).
        #[arg(long, default_value_t = 8089)]
        port: u16,
        /// Milliseconds over which each answer streams.
        #[arg(long, value_name = "MS", default_value_t = 1000)]
        stream_ms: u64,
        /// Text events per answer.
        #[arg(long, default_value_t = 20, value_parser = at_least_one())]
        chunks: usize,
        /// Accept only this key (Bearer or x-api-key) [default: any].
        #[arg(long, env = "PLEXUS_MOCK_KEY", value_name = "KEY")]
        require_key: Option<String>,
        /// Server threads.
        #[arg(long, default_value_t = 1, value_parser = at_least_one())]
        threads: usize,
        /// Answer every chat request from this script of model turns instead of the
        /// simulated model (JSON; see docs/providers.md, "A scripted model").
        #[arg(long, value_name = "FILE")]
        script: Option<PathBuf>,
    },
}
