//! The command line: global options and subcommands (parsed by clap; run by `main.rs`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// plexus — a terminal workbench for multi-agent LLM work.
///
/// Runs plans (DAGs of tasks handed to LLM agents), grades what the agents produce,
/// and stores every atom and every event in one local SQLite file. With no provider
/// configured it uses the built-in simulated provider, which works offline.
#[derive(Parser, Debug)]
#[command(name = "plexus", version, about, long_about)]
pub struct Cli {
    /// Database file (created if missing).
    #[arg(
        long,
        global = true,
        default_value = ".plexus/plexus.db",
        env = "PLEXUS_DB"
    )]
    pub db: PathBuf,
    /// Seed of the simulated provider (same seed, same answers).
    #[arg(long, global = true)]
    pub seed: Option<u64>,
    /// Most invocations in flight.
    #[arg(long, global = true)]
    pub concurrency: Option<usize>,
    /// No terminal UI: progress on stderr, summary at the end (also the mode whenever
    /// stdin or stdout is not a terminal).
    #[arg(long, global = true)]
    pub headless: bool,
    /// Colour theme: dark, light, high-contrast, a name in the config directory's
    /// themes/, or a .toml file. A broken theme falls back to dark with a warning.
    #[arg(long, global = true, env = "PLEXUS_THEME")]
    pub theme: Option<String>,
    /// Config file (default: ./plexus.toml, else ~/.config/plexus/plexus.toml).
    #[arg(long, global = true, env = "PLEXUS_CONFIG")]
    pub config: Option<PathBuf>,
    /// Provider profile to run on: `simulated` (built in, offline) or a
    /// `[providers.NAME]` table of plexus.toml (see `plexus providers`). A resumed run
    /// keeps the profile it started with unless this is given.
    #[arg(long, global = true, env = "PLEXUS_PROVIDER")]
    pub provider: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the bundled AVP Diffusion Planner plan on the simulated provider, with a few
    /// injected faults so that retries and grades show up (or on a real model with
    /// `--provider NAME`).
    Demo {
        /// Disable fault injection.
        #[arg(long)]
        no_faults: bool,
        /// Delay between streamed chunks, ms.
        #[arg(long, default_value_t = 15)]
        chunk_ms: u64,
    },
    /// Run a plan file.
    Run {
        /// Plan JSON file.
        plan: PathBuf,
        /// Fault mix of the simulated provider: `none` or `demo`.
        #[arg(long, default_value = "none")]
        faults: String,
        /// Delay between streamed chunks, ms.
        #[arg(long, default_value_t = 25)]
        chunk_ms: u64,
        /// Delay before the first chunk, ms.
        #[arg(long, default_value_t = 120)]
        first_chunk_ms: u64,
        /// Multiplier on every timeout (1.0 = as the plan says).
        #[arg(long, default_value_t = 1.0)]
        timeout_scale: f64,
        /// Divide every retry delay by this (1 = seed 001 delays: 5 s, 15 s, 30 s…).
        #[arg(long, default_value_t = 1)]
        retry_delay_div: u64,
        /// Have the provider write summaries of large inputs (abstractive) instead of
        /// extracting key sentences.
        #[arg(long)]
        abstractive_summaries: bool,
    },
    /// Browse the database in the terminal UI: the Runs screen, or RUN opened read-only.
    Browse {
        /// Run id (or `latest`, or a prefix).
        run: Option<String>,
    },
    /// Validate a plan without running it; every error is listed.
    Validate {
        /// Plan JSON file.
        plan: PathBuf,
    },
    /// List the runs in the database.
    Runs {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Show one run: tasks, tokens per agent, events (RUN may be `latest` or a prefix).
    Show {
        /// Run id.
        run: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Print a run's event log as JSON lines (one envelope per line).
    Log {
        /// Run id (or `latest`, or a prefix).
        run: String,
    },
    /// Write a run to a file of JSON lines: the plan, tasks, invocations with request
    /// and response, atoms, quality records and the event log (read-only on the
    /// database; a consistent snapshot even while the run goes on).
    Export {
        /// Run id (or `latest`, or a prefix).
        run: String,
        /// Output file, written whole or not at all (`-` or none: standard output).
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
    /// Load a run written by `plexus export` into the database (created if missing), in
    /// one transaction: all of it or, when the file is bad, nothing.
    Import {
        /// The exported file (`-`: standard input).
        file: PathBuf,
        /// Import the run under this id (needed when the database already has its id).
        #[arg(long, value_name = "NEW_ID", conflicts_with = "rename_auto")]
        rename: Option<String>,
        /// When the database already has the run's id, import it as ID-2 (or ID-3, …).
        #[arg(long)]
        rename_auto: bool,
    },
    /// Resume a run that was interrupted or killed; finished tasks are not run again.
    Resume {
        /// Run id (or `latest`).
        run: String,
    },
    /// Check the database file (`PRAGMA integrity_check`), read-only.
    Check {
        /// Upgrade a file written by an older plexus to this version's schema first (the
        /// one way to do so without starting a run).
        #[arg(long)]
        upgrade: bool,
    },
    /// List the provider profiles of plexus.toml (kind, model, endpoint, where the key
    /// comes from — never the key itself).
    Providers {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Make one tiny call through a provider profile and report latency, model and token
    /// usage (exit 1 when it fails, with the error code it maps to).
    Ping {
        /// Profile name (`simulated` or a `[providers.NAME]`).
        name: String,
        /// Seconds to wait for the whole answer.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
    },
    /// Serve a local OpenAI- and Anthropic-compatible mock API on 127.0.0.1 (valid
    /// answers from the simulated model, streamed over --stream-ms) for trying profiles
    /// offline and for `bench-http`.
    MockServer {
        /// Port (0 = any free port; the address is printed).
        #[arg(long, default_value_t = 8089)]
        port: u16,
        /// Milliseconds over which each answer streams.
        #[arg(long, default_value_t = 1000)]
        stream_ms: u64,
        /// Text events per answer.
        #[arg(long, default_value_t = 20)]
        chunks: usize,
        /// Accept only this key (Bearer or x-api-key); default: any.
        #[arg(long, env = "PLEXUS_MOCK_KEY")]
        require_key: Option<String>,
        /// Server threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// HTTP provider benchmark: a generated plan run against a mock server in a child
    /// process that streams each answer for --stream-ms, with --concurrency calls in
    /// flight; wall time, CPU and peak memory of plexus itself.
    BenchHttp {
        /// Tasks.
        #[arg(long, default_value_t = 5000)]
        tasks: usize,
        /// Calls in flight.
        #[arg(long, default_value_t = 1000)]
        calls: usize,
        /// Milliseconds each answer streams.
        #[arg(long, default_value_t = 1000)]
        stream_ms: u64,
        /// Text events per answer.
        #[arg(long, default_value_t = 20)]
        chunks: usize,
        /// API: openai or anthropic.
        #[arg(long, default_value = "openai")]
        api: String,
        /// Scratch directory.
        #[arg(long, default_value = "bench-out")]
        dir: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a generated plan (layers of fan-out and fan-in) to stdout.
    GenPlan {
        /// Tasks.
        #[arg(long, default_value_t = 10_000)]
        tasks: usize,
        /// Tasks per layer.
        #[arg(long, default_value_t = 500)]
        width: usize,
        /// Max atoms per task.
        #[arg(long, default_value_t = 1)]
        max_atoms: u32,
    },
    /// Token counting speed (cl100k_base, o200k_base) on 5 MB of mixed text, checked
    /// against tiktoken-rs, and the time to plan a task's context from 100 large inputs.
    BenchTokens {
        /// Bytes of generated text.
        #[arg(long, default_value_t = 5_000_000)]
        bytes: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// TUI benchmark: the Run screen of a 1,000-task DAG with a 100,000-line output
    /// buffer rendered at 200x60 while 10,000 events/s are folded; reducer throughput;
    /// memory under a long stream.
    BenchUi {
        /// Tasks in the DAG.
        #[arg(long, default_value_t = 1000)]
        tasks: usize,
        /// Lines in the selected task's output.
        #[arg(long, default_value_t = 100_000)]
        lines: usize,
        /// Frames to render.
        #[arg(long, default_value_t = 1000)]
        frames: usize,
        /// Events per second fed while rendering.
        #[arg(long, default_value_t = 10_000)]
        events_per_s: usize,
        /// Events folded in the reducer throughput run.
        #[arg(long, default_value_t = 2_000_000)]
        reducer_events: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Engine benchmark: a generated plan on the simulated provider with zero latency,
    /// every event logged, beside a bare batched SQLite insert loop.
    Bench {
        /// Tasks.
        #[arg(long, default_value_t = 10_000, value_parser = at_least_one())]
        tasks: usize,
        /// Tasks per layer.
        #[arg(long, default_value_t = 500, value_parser = at_least_one())]
        width: usize,
        /// Minimum streamed chunks per task.
        #[arg(long, default_value_t = 20, value_parser = at_least_one())]
        chunks: usize,
        /// Rows of the bare insert loop.
        #[arg(long, default_value_t = 1_000_000, value_parser = at_least_one())]
        bare_rows: usize,
        /// Most streamed chunks per logged chunk event (1 = one event per chunk).
        #[arg(long, default_value_t = 2, value_parser = at_least_one())]
        chunk_flush_max: usize,
        /// Tasks of the paced run (a chunk every 10 ms) that measures durability latency;
        /// 0 skips it.
        #[arg(long, default_value_t = 1000)]
        paced_tasks: usize,
        /// Scratch directory.
        #[arg(long, default_value = "bench-out")]
        dir: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A count of at least 1.
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}
