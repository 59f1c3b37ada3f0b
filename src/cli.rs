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
    /// Browse the database in the terminal UI: the Runs screen, or RUN opened read-only
    /// at its end (following it live while another process is still writing it).
    Browse {
        /// Run id (or `latest`, or a prefix).
        run: Option<String>,
    },
    /// Replay a logged run in the terminal UI, offline: the same screens as live, with a
    /// transport (play, pause, step, jump to task starts and failures, speed, seek).
    /// Without RUN, pick one on the Runs screen.
    Replay {
        /// Run id (or `latest`, or a prefix).
        run: Option<String>,
        /// Where to start: `start`, `end`, or an event number.
        #[arg(long, default_value = "start")]
        at: String,
        /// Speed: a multiple of the run's own pace, from 0.25 to 64, or `max` (as fast as
        /// possible).
        #[arg(long, default_value = "1")]
        speed: String,
        /// Longest pause between two events while playing, in seconds (a run that
        /// waited long for a rate limit does not make its replay wait as long).
        #[arg(long, default_value_t = 2.0)]
        max_gap: f64,
        /// Open paused.
        #[arg(long)]
        paused: bool,
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
    /// Compare two runs task by task: exit 0 and `no differences` when they match, 1
    /// when they differ, 2 when they cannot be compared (like diff(1)).
    ///
    /// Tasks are aligned by task id. Compared exactly: the plan id, run status and set
    /// of tasks; per task its agent, status, attempts, deciding error code, accepted
    /// atoms, blocking upstream task, retries (attempt, error code, adjustment),
    /// context plan (each input's mode, trimming action, tokens before and after) and
    /// failed data references; per invocation (the task's Nth, in order) its status,
    /// error codes, prompt and output tokens and the grade of each graded atom; per
    /// accepted atom (aligned by asset id) its grade, score and content.
    ///
    /// Never compared: run and invocation ids, timestamps, retry delays, chunk counts,
    /// the plan text (only its id). Wall-clock times are shown; --timing compares them.
    Diff {
        /// Run A (a full id, `latest`, or a unique prefix).
        run_a: String,
        /// Run B.
        run_b: String,
        /// JSON output: both runs, the differences run-level and per task, the times.
        #[arg(long)]
        json: bool,
        /// Count wall-clock times as differences when they are further apart than 25%
        /// of the longer one and 100 ms.
        #[arg(long)]
        timing: bool,
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
    /// Run a recorded run again on the `replay` provider — every request is answered
    /// with the response recorded for the same task and attempt, no model is called —
    /// then compare the new run's events with the recording's, task by task (exit 5
    /// when an unchanged rerun differs).
    Rerun {
        /// The recorded run (or `latest`, or a prefix).
        run: String,
        /// Run this plan instead of the recorded one (divergence is then expected and
        /// reported as information).
        #[arg(long)]
        plan: Option<PathBuf>,
        /// A JSON object merged over the recorded run config, e.g.
        /// `{"engine": {"timeout_scale": 0.5}}` (`--config` is plexus.toml).
        #[arg(long)]
        run_config: Option<PathBuf>,
        /// The database holding the recorded run (default: --db, where the new run goes).
        #[arg(long)]
        from: Option<PathBuf>,
        /// Stream each recorded answer at once instead of with its recorded timing.
        #[arg(long)]
        instant: bool,
        /// Also print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// The review queue: tasks a hallucination (E007) stopped for a person's decision,
    /// with the evidence (invocation, references to assets that do not exist, atoms).
    /// With TASK alone, the task's whole evidence. With TASK and --accept [--note TEXT]
    /// or --reject --reason TEXT (and --by NAME), decide: an acceptance stores the atoms and
    /// lets the tasks it blocked run on `plexus resume`; a rejection keeps the task
    /// failed. A decision is final; it is refused (exit 4) while another live process
    /// executes the run.
    Review {
        /// Run id (or `latest`, or a prefix); without it, the queue of every run.
        run: Option<String>,
        /// The task to show whole or to decide on.
        task: Option<String>,
        /// Accept the task's atoms.
        #[arg(long, requires = "task", conflicts_with = "reject")]
        accept: bool,
        /// Reject the task's atoms (with --reason).
        #[arg(long, requires = "task")]
        reject: bool,
        /// Why the atoms are rejected (required with --reject).
        #[arg(long, value_name = "TEXT", requires = "reject")]
        reason: Option<String>,
        /// A note kept with an acceptance.
        #[arg(long, value_name = "TEXT", requires = "accept")]
        note: Option<String>,
        /// Who decides (default: $USER).
        #[arg(long = "by", visible_alias = "reviewer", value_name = "NAME")]
        by: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
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
    /// Failures: an Execute output tree or an ExecuteToInitContext file (a path that
    /// exists), or the failed, timed-out, partial and retried invocations of a run (an
    /// id, a prefix or `latest`) or of every run (no TARGET).
    Failures {
        /// A tree, a context file, or a run id.
        target: Option<String>,
        /// Print the list as JSON (for scripts) instead of opening the screen.
        #[arg(long)]
        json: bool,
        /// A tree: list every iteration, not only the newest.
        #[arg(long)]
        all_iterations: bool,
        /// A tree: the on-demand token budget the documents you open are counted
        /// against (the status line shows the running total).
        #[arg(long, default_value_t = 40_000, value_name = "TOKENS")]
        budget: u64,
    },
    /// Write a run's failed, timed-out, partial and retried invocations as a failure
    /// tree (samples, traces, evaluations, attributions, summary, problems report).
    ExportFailures {
        /// Run id (or `latest`, or a prefix).
        run: String,
        /// Directory to create (must not exist, or be empty).
        dir: PathBuf,
    },
    /// Write a generated failure tree (the seed's leave-application example) for trying
    /// the Failures screen, with a few documents damaged on purpose.
    GenFailures {
        /// Directory to create (must not exist, or be empty).
        dir: PathBuf,
        /// Samples (about two thirds fail).
        #[arg(long, default_value_t = 27)]
        samples: usize,
        /// Typical conversation turns per sample.
        #[arg(long, default_value_t = 12)]
        turns: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Documents damaged on purpose (truncated, not JSON, missing, lacking fields).
        #[arg(long, default_value_t = 3)]
        broken: usize,
    },
    /// Failure tree benchmark: a generated tree opened, filtered, sorted and a sample
    /// opened; peak memory against the tree's size; the database failures list.
    BenchFailures {
        /// Samples of the generated tree.
        #[arg(long, default_value_t = 100_000, value_parser = at_least_one())]
        samples: usize,
        /// Typical turns per sample.
        #[arg(long, default_value_t = 50, value_parser = at_least_one())]
        turns: usize,
        /// Repetitions of each measurement (medians are reported).
        #[arg(long, default_value_t = 5, value_parser = at_least_one())]
        runs: usize,
        /// Failed invocations in the benchmark database (0 skips it).
        #[arg(long, default_value_t = 100_000)]
        invocations: usize,
        /// Scratch directory.
        #[arg(long, default_value = "bench-out")]
        dir: PathBuf,
        /// Only measure the tree at this path (the benchmark's child process).
        #[arg(long, hide = true)]
        measure: Option<PathBuf>,
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
    /// Replay benchmark: a run of about a million events is generated, then replayed:
    /// time to the first frame, to index the log, median and p99 of 100 random seeks,
    /// peak memory.
    BenchReplay {
        /// Events of the generated run (about).
        #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        events: u64,
        /// Tasks of the generated run.
        #[arg(long, default_value_t = 5_000, value_parser = at_least_one())]
        tasks: usize,
        /// Seeks measured.
        #[arg(long, default_value_t = 100, value_parser = at_least_one())]
        seeks: usize,
        /// Scratch directory.
        #[arg(long, default_value = "bench-out")]
        dir: PathBuf,
        /// Only write the run into this database (the benchmark's child process).
        #[arg(long, hide = true)]
        generate: Option<PathBuf>,
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
