//! `plexus bench …`: the benchmarks, each printing its figures (or JSON with --json).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::help;
use super::options::at_least_one;

/// One benchmark.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Engine: a generated plan on a zero-latency model, every event logged
    ///
    /// A generated plan of layered fan-out and fan-in on the simulated provider with
    /// zero latency, every event logged, beside a bare batched SQLite insert loop
    /// measured in the same process; then a paced run measuring how soon an event is
    /// durable.
    #[command(after_long_help = help::BENCH_ENGINE)]
    Engine {
        #[command(flatten)]
        opts: EngineBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Token counting speed and context planning time
    ///
    /// cl100k_base and o200k_base on a generated mix of English, Chinese, code and
    /// JSON, checked against tiktoken-rs; and the time to plan a task's context from
    /// 100 large inputs.
    #[command(after_long_help = help::BENCH_TOKENS)]
    Tokens {
        /// Bytes of generated text.
        #[arg(long, default_value_t = 5_000_000, value_parser = at_least_one())]
        bytes: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Terminal UI: frame time of a big Run screen under load
    ///
    /// The Run screen of a 1,000-task DAG with a 100,000-line output buffer drawn at
    /// 200x60 while 10,000 events/s are folded, beside a bare draw of the same cells;
    /// reducer throughput; memory under a long stream.
    #[command(after_long_help = help::BENCH_UI)]
    Ui {
        #[command(flatten)]
        opts: UiBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// HTTP providers against a local mock server
    ///
    /// A generated plan run through the HTTP provider against `plexus dev
    /// mock-server` in a child process that streams each answer over --stream-ms, with
    /// --calls in flight: wall time, CPU and peak memory of plexus itself.
    #[command(after_long_help = help::BENCH_HTTP)]
    Http {
        #[command(flatten)]
        opts: HttpBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replay: first frame, indexing and seeks on a million events
    ///
    /// A run of about a million events is generated, then replayed: the time to the
    /// first frame, to index the log, the median and p99 of random seeks, peak memory.
    #[command(after_long_help = help::BENCH_REPLAY)]
    Replay {
        #[command(flatten)]
        opts: ReplayBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Opening a big finished run: browse, replay at the end, the Failures screen
    ///
    /// A generated plan (100,000 tasks by default, about 1.5 million events) is run
    /// headless by this program in a child process; then the time to the first frame of
    /// `browse RUN` / `replay RUN --at end` and of the run's Failures screen, each read
    /// from the run's stored snapshot and, interleaved, from its log alone.
    #[command(after_long_help = help::BENCH_OPEN)]
    Open {
        #[command(flatten)]
        opts: OpenBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Tool-using loop: cost per step, and the conversation manager
    ///
    /// The same generated plan run as plain tasks and as tasks using five tools each,
    /// on a zero-latency model; the difference per tool step is the loop's own cost.
    /// Then counting and compressing a generated conversation.
    #[command(after_long_help = help::BENCH_REACT)]
    React {
        #[command(flatten)]
        opts: ReactBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Debate similarity: compare_positions cold and cached
    ///
    /// Four positions of 2,000 tokens compared with the built-in embedding, with a fresh
    /// cache (every text embedded) and again (every embedding cached), beside a pass
    /// over the texts' bytes measured in the same run.
    #[command(after_long_help = help::BENCH_DEBATE)]
    Debate {
        #[command(flatten)]
        opts: DebateBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Failure trees and the failures list on big inputs
    ///
    /// A generated tree opened, filtered, sorted and a sample opened; peak memory
    /// against the tree's size; the database's failures list and the Failures screen's
    /// first frame.
    #[command(after_long_help = help::BENCH_FAILURES)]
    Failures {
        #[command(flatten)]
        opts: FailuresBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Evals: a generated dataset through `plexus eval`, beside the bare run of its copies
    ///
    /// An eval of a one-task plan with five checks over SAMPLES generated samples on the
    /// simulated provider at zero latency, run by this binary as a child process and
    /// alternated with the bare run of the very same copies of the plan: wall and CPU
    /// time per sample and the overhead of scoring and the tree, peak memory, database
    /// bytes per sample; then `eval compare` of two evals of as many samples with ten
    /// checks.
    #[command(after_long_help = help::BENCH_EVAL)]
    Eval {
        #[command(flatten)]
        opts: EvalBenchOpts,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Options of `plexus bench engine`.
#[derive(Args, Debug, Clone)]
pub struct EngineBenchOpts {
    /// Tasks.
    #[arg(long, default_value_t = 10_000, value_parser = at_least_one())]
    pub tasks: usize,
    /// Tasks per layer.
    #[arg(long, default_value_t = 500, value_parser = at_least_one())]
    pub width: usize,
    /// Model calls in flight.
    #[arg(long, default_value_t = 256, value_parser = at_least_one())]
    pub concurrency: usize,
    /// Minimum streamed chunks per task.
    #[arg(long, default_value_t = 20, value_parser = at_least_one())]
    pub chunks: usize,
    /// Rows of the bare insert loop.
    #[arg(long, default_value_t = 1_000_000, value_parser = at_least_one())]
    pub bare_rows: usize,
    /// Most streamed chunks per logged chunk event (1 = one event per chunk).
    #[arg(long, default_value_t = 2, value_parser = at_least_one())]
    pub chunk_flush_max: usize,
    /// Tasks of the paced run (a chunk every 10 ms) that measures durability
    /// latency; 0 skips it.
    #[arg(long, default_value_t = 1000)]
    pub paced_tasks: usize,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
    /// Read the run's new events beside it, every 100 ms, as a follower does (the
    /// log must stay bounded with a reader there).
    #[arg(long)]
    pub follow: bool,
    /// Also measure resident memory when this many tasks have finished (beside the
    /// end of the run), to show whether memory grows with finished work.
    #[arg(long, value_name = "TASKS", default_value_t = 20_000)]
    pub rss_at: usize,
}

/// Options of `plexus bench ui`.
#[derive(Args, Debug, Clone)]
pub struct UiBenchOpts {
    /// Tasks in the DAG.
    #[arg(long, default_value_t = 1000, value_parser = at_least_one())]
    pub tasks: usize,
    /// Lines in the selected task's output.
    #[arg(long, default_value_t = 100_000)]
    pub lines: usize,
    /// Frames to draw.
    #[arg(long, default_value_t = 1000, value_parser = at_least_one())]
    pub frames: usize,
    /// Events per second fed while drawing.
    #[arg(long, default_value_t = 10_000)]
    pub events_per_s: usize,
    /// Events folded in the reducer throughput run.
    #[arg(long, default_value_t = 2_000_000)]
    pub reducer_events: usize,
    /// Terminal width of the frames drawn (not an option).
    #[arg(skip = 200u16)]
    pub width: u16,
    /// Terminal height of the frames drawn (not an option).
    #[arg(skip = 60u16)]
    pub height: u16,
}

/// Options of `plexus bench http`.
#[derive(Args, Debug, Clone)]
pub struct HttpBenchOpts {
    /// Tasks.
    #[arg(long, default_value_t = 5000, value_parser = at_least_one())]
    pub tasks: usize,
    /// Calls in flight.
    #[arg(long, default_value_t = 1000, value_parser = at_least_one())]
    pub calls: usize,
    /// Milliseconds each answer streams.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub stream_ms: u64,
    /// Text events per answer.
    #[arg(long, default_value_t = 20, value_parser = at_least_one())]
    pub chunks: usize,
    /// API the server speaks: openai or anthropic.
    #[arg(long, default_value = "openai", value_parser = ["openai", "anthropic"])]
    pub api: String,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
}

/// Options of `plexus bench replay`.
#[derive(Args, Debug, Clone)]
pub struct ReplayBenchOpts {
    /// Events of the generated run (about).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub events: u64,
    /// Tasks of the generated run.
    #[arg(long, default_value_t = 5_000, value_parser = at_least_one())]
    pub tasks: usize,
    /// Seeks measured.
    #[arg(long, default_value_t = 100, value_parser = at_least_one())]
    pub seeks: usize,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
    /// Only write the run into this database (the benchmark's child process).
    #[arg(long, hide = true)]
    pub generate: Option<PathBuf>,
}

/// Options of `plexus bench open`.
#[derive(Args, Debug, Clone)]
pub struct OpenBenchOpts {
    /// Tasks of the generated run.
    #[arg(long, default_value_t = 100_000, value_parser = at_least_one())]
    pub tasks: usize,
    /// Tasks per layer of the generated plan.
    #[arg(long, default_value_t = 1000, value_parser = at_least_one())]
    pub width: usize,
    /// Interleaved rounds (medians are reported).
    #[arg(long, default_value_t = 3, value_parser = at_least_one())]
    pub runs: usize,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
    /// Open this database's run instead of generating one (with --run).
    #[arg(long = "db-file", value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// The existing run to open (with --db-file).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Skip the openings from the log alone (about 10 s each on 1.5M events): only
    /// the snapshot's figures are measured.
    #[arg(long)]
    pub no_log: bool,
    /// Terminal size of the frames drawn (not an option).
    #[arg(skip = (200u16, 60u16))]
    pub size: (u16, u16),
}

/// Options of `plexus bench react`.
#[derive(Args, Debug, Clone)]
pub struct ReactBenchOpts {
    /// Tasks of the generated plan.
    #[arg(long, default_value_t = 200, value_parser = at_least_one())]
    pub tasks: usize,
    /// Interleaved pairs of runs (medians are reported).
    #[arg(long, default_value_t = 5, value_parser = at_least_one())]
    pub runs: usize,
    /// Tokens of the generated conversation.
    #[arg(long, default_value_t = 200_000, value_parser = at_least_one())]
    pub conversation_tokens: usize,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
}

/// Options of `plexus bench debate`.
#[derive(Args, Debug, Clone)]
pub struct DebateBenchOpts {
    /// Positions compared.
    #[arg(long, default_value_t = 4, value_parser = at_least_one())]
    pub positions: usize,
    /// Tokens of each position.
    #[arg(long, default_value_t = 2000, value_parser = at_least_one())]
    pub tokens: usize,
    /// Interleaved repetitions (medians are reported).
    #[arg(long, default_value_t = 51, value_parser = at_least_one())]
    pub runs: usize,
}

/// Options of `plexus bench failures`.
#[derive(Args, Debug, Clone)]
pub struct FailuresBenchOpts {
    /// Samples of the generated tree.
    #[arg(long, default_value_t = 100_000, value_parser = at_least_one())]
    pub samples: usize,
    /// Typical turns per sample.
    #[arg(long, default_value_t = 50, value_parser = at_least_one())]
    pub turns: usize,
    /// Repetitions of each measurement (medians are reported).
    #[arg(long, default_value_t = 5, value_parser = at_least_one())]
    pub runs: usize,
    /// Failed invocations in the benchmark database (0 skips it).
    #[arg(long, default_value_t = 100_000)]
    pub invocations: usize,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
    /// Only measure the tree at this path (the benchmark's child process).
    #[arg(long, hide = true)]
    pub measure: Option<PathBuf>,
}

/// Options of `plexus bench eval`.
#[derive(Args, Debug, Clone)]
pub struct EvalBenchOpts {
    /// Samples of the dataset.
    #[arg(long, default_value_t = 100_000, value_parser = at_least_one())]
    pub samples: usize,
    /// Alternated pairs of eval and bare run (medians are reported).
    #[arg(long, default_value_t = 1, value_parser = at_least_one())]
    pub runs: usize,
    /// Model calls in flight.
    #[arg(long, default_value_t = 64, value_parser = at_least_one())]
    pub concurrency: usize,
    /// Scratch directory.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub dir: PathBuf,
    /// Only the readings (compare, the Eval screen's opening and filters) of two
    /// evals written straight into a database: no eval is run.
    #[arg(long)]
    pub reads_only: bool,
}
