//! The command line, defined once with clap: parsed by the binary, and used by the
//! tests (every command shown in the docs parses), by `plexus completions` and by
//! `plexus man`.

mod bench;
mod debate;
mod dev;
mod eval;
mod handoff;
mod help;
mod mcp;
mod options;
mod review;
mod run;
mod what;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use bench::{
    BenchCommand, DebateBenchOpts, EngineBenchOpts, EvalBenchOpts, FailuresBenchOpts,
    HttpBenchOpts, OpenBenchOpts, ReactBenchOpts, ReplayBenchOpts, UiBenchOpts,
};
pub use debate::{DebateArgs, DebateOpts, EventsFormat, ServeArgs};
pub use dev::{DevCommand, GenFailuresSpec, GenPlanSpec, MockServerArgs};
pub use eval::{EvalArgs, EvalCommand, EvalRunArgs, EvalSession};
pub use handoff::InitContextArgs;
pub use help::{command, help_width, parse};
pub use mcp::{McpArgs, McpCommand};
pub use options::{
    at_least_one, FaultMix, OtlpOpts, ResumePaceOpts, SchemaKind, SessionOpts, SimOpts, ThemeOpt,
    CHUNK_MS, DEMO_SEED, FIRST_CHUNK_MS,
};
pub use review::{LogFilter, ReviewArgs};
pub use run::{RerunArgs, RunArgs};

/// The database file plexus opens when neither `--db` nor `PLEXUS_DB` says otherwise.
pub const DEFAULT_DB: &str = ".plexus/plexus.db";

/// plexus — a terminal workbench for multi-agent LLM work.
///
/// Runs plans (DAGs of tasks handed to LLM agents), grades what the agents produce,
/// and stores every atom and every event in one local SQLite file, where runs can be
/// browsed, replayed, compared and re-executed offline. With no provider configured it
/// uses the built-in simulated provider, which works offline.
#[derive(Parser, Debug)]
#[command(
    name = "plexus",
    version,
    about,
    long_about,
    after_long_help = help::MAIN_EXAMPLES,
    subcommand_help_heading = "Commands",
    disable_help_subcommand = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Database file [default: .plexus/plexus.db].
    #[arg(
        long,
        global = true,
        env = "PLEXUS_DB",
        value_name = "PATH",
        help_heading = "Global options"
    )]
    pub db: Option<PathBuf>,
    /// Config file [default: ./plexus.toml, else ~/.config/plexus/plexus.toml].
    #[arg(
        long,
        global = true,
        env = "PLEXUS_CONFIG",
        value_name = "FILE",
        help_heading = "Global options"
    )]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The database file: `--db`, else `PLEXUS_DB`, else [`DEFAULT_DB`].
    pub fn db_path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB))
    }
}

/// The commands a person uses; benchmarks and generators are under `bench` and `dev`.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the bundled demo plan (offline, with a few faults)
    ///
    /// The AVP Diffusion Planner plan on the built-in simulated provider, with a few
    /// injected faults so that retries, grades and a task waiting for review show up.
    /// With --provider NAME it runs on a real model instead.
    #[command(after_long_help = help::DEMO)]
    Demo {
        /// Faults the simulated provider injects.
        #[arg(long, value_enum, default_value_t = FaultMix::Demo)]
        faults: FaultMix,
        /// Seed of the simulated provider (same seed, same answers).
        #[arg(long, default_value_t = DEMO_SEED, help_heading = "Session options")]
        seed: u64,
        #[command(flatten)]
        session: SessionOpts,
        #[command(flatten)]
        sim: SimOpts,
    },
    /// Run a plan file
    ///
    /// Validates the plan, then runs its tasks in dependency order, each on its agent,
    /// with the retries, context budgets and quality gate the plan asks for. Every event
    /// goes to the database; an interrupted run can be resumed.
    #[command(after_long_help = help::RUN)]
    Run(RunArgs),
    /// Resume an interrupted or killed run
    ///
    /// Finished tasks are not run again; tasks that were in flight start over. A run
    /// that another live process is executing is refused (exit 4).
    #[command(after_long_help = help::RESUME)]
    Resume {
        /// Run id (or `latest`, or a unique prefix).
        run: String,
        /// Seed of the simulated provider [default: the run's own].
        #[arg(long, help_heading = "Session options")]
        seed: Option<u64>,
        #[command(flatten)]
        session: SessionOpts,
        #[command(flatten)]
        pace: ResumePaceOpts,
    },
    /// Check a plan without running it
    ///
    /// Every error is listed with where it is (exit 2 when the plan is invalid).
    #[command(after_long_help = help::VALIDATE)]
    Validate {
        /// Plan JSON file.
        plan: PathBuf,
    },
    /// List the runs in the database
    #[command(after_long_help = help::RUNS)]
    Runs {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Show one run: tasks, tokens per agent, events
    #[command(after_long_help = help::SHOW)]
    Show {
        /// Run id (or `latest`, or a unique prefix).
        run: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Print a run's event log as JSON lines
    ///
    /// One event envelope per line, in order. Filters combine: only events of the
    /// given kinds, of one task, from a point on. With --follow, keeps printing new
    /// events while another process writes the run, until it ends.
    #[command(after_long_help = help::LOG)]
    Log {
        /// Run id (or `latest`, or a unique prefix).
        run: String,
        #[command(flatten)]
        filter: LogFilter,
    },
    /// Debate a question between a planner and a critic
    ///
    /// A planner proposes a plan and a critic attacks it, round by round (the first in
    /// parallel). After each round the host compares their positions: above the
    /// converge threshold the reporter writes the final plan; in between another round
    /// follows on the open points; below it the critic turns devil's advocate. An agent
    /// that stops moving gets an update command; no change for two rounds ends early;
    /// the last round forces a summary of the disagreements. The session is a run in
    /// the database: it shows in `plexus runs`, replays, reruns and diffs.
    #[command(after_long_help = help::DEBATE)]
    Debate(Box<DebateArgs>),
    /// Serve debate sessions over HTTP to a front end
    ///
    /// `POST /api/chat` with `{"message": "...", "mode": "multi_agent", "userId": "...",
    /// "conversationId": "..."}` starts a session and answers with its event stream
    /// (server-sent events, `data: {json}` lines, ending with `data: [DONE]`). A client
    /// that disconnects stops its session. Sessions are stored like any run.
    #[command(after_long_help = help::SERVE)]
    Serve(Box<ServeArgs>),
    /// Browse runs in the terminal UI (read-only)
    ///
    /// Opens the Runs screen, or RUN at its end. A run another process is still
    /// writing is followed live.
    #[command(after_long_help = help::BROWSE)]
    Browse {
        /// Run id (or `latest`, or a unique prefix).
        run: Option<String>,
        #[command(flatten)]
        theme: ThemeOpt,
    },
    /// Replay a logged run in the terminal UI, offline
    ///
    /// The same screens as a live run, with a transport: play, pause, step, jump to
    /// task starts and failures, change speed, seek. Without RUN, pick one on the Runs
    /// screen.
    #[command(after_long_help = help::REPLAY)]
    Replay {
        /// Run id (or `latest`, or a unique prefix).
        run: Option<String>,
        /// Where to start: `start`, `end`, or an event number.
        #[arg(long, value_name = "WHERE", default_value = "start")]
        at: String,
        /// Speed: a multiple of the run's own pace from 0.25 to 64, or `max`.
        #[arg(long, value_name = "X", default_value = "1")]
        speed: String,
        /// Longest pause between two events while playing, in seconds (a run that
        /// waited long for a rate limit does not make its replay wait as long).
        #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
        max_gap: f64,
        /// Open paused.
        #[arg(long)]
        paused: bool,
        #[command(flatten)]
        theme: ThemeOpt,
    },
    /// Compare two runs task by task
    ///
    /// Exit 0 and `no differences` when they match, 1 when they differ, 2 when they
    /// cannot be compared (like diff(1)).
    ///
    /// Tasks are aligned by task id. Compared exactly: the plan id, run status and set
    /// of tasks; per task its agent, status, attempts, deciding error code, accepted
    /// atoms, blocking upstream task, retries (attempt, error code, adjustment), context
    /// plan (each input's mode, trimming action, tokens before and after) and failed
    /// data references; per invocation (the task's Nth, in order) its status, error
    /// codes, prompt and output tokens and the grade of each graded atom; per accepted
    /// atom (aligned by asset id) its grade, score and content.
    ///
    /// Never compared: run and invocation ids, timestamps, retry delays, chunk counts,
    /// the plan text (only its id). Wall-clock times are shown; --timing compares them.
    #[command(after_long_help = help::DIFF)]
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
    /// Re-execute a recorded run offline and compare
    ///
    /// Runs the recorded run again on the `replay` provider: every request is answered
    /// with the response recorded for the same task and attempt, no model is called.
    /// Then the new run's events are compared with the recording's, task by task (exit
    /// 5 when an unchanged rerun differs).
    #[command(after_long_help = help::RERUN)]
    Rerun {
        #[command(flatten)]
        args: RerunArgs,
        /// Seed [default: the recorded run's].
        #[arg(long, help_heading = "Session options")]
        seed: Option<u64>,
        /// Most model calls in flight [default: the recorded run's].
        #[arg(long, value_name = "N", value_parser = at_least_one(), help_heading = "Session options")]
        concurrency: Option<usize>,
        /// No terminal UI: progress on stderr, report on stdout.
        #[arg(long, help_heading = "Session options")]
        headless: bool,
        #[command(flatten)]
        theme: ThemeOpt,
    },
    /// Failed attempts of runs, or a failure tree on disk
    ///
    /// TARGET is an Execute output tree or an ExecuteToInitContext file (a path that
    /// exists), or a run (an id, a prefix or `latest`); without TARGET, the failed,
    /// timed-out, partial and retried invocations of every run. Opens the Failures
    /// screen, or prints the list with --json.
    #[command(after_long_help = help::FAILURES)]
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
        #[command(flatten)]
        theme: ThemeOpt,
    },
    /// Decide on tasks waiting for a person's review
    ///
    /// The review queue: tasks a hallucination (E007) stopped for a person's decision,
    /// with the evidence. With TASK alone, the task's whole evidence. With TASK and
    /// --accept [--note TEXT] or --reject --reason TEXT, decide: an acceptance stores
    /// the atoms and lets the tasks it blocked run on `plexus resume`; a rejection keeps
    /// the task failed. A decision is final; it is refused (exit 4) while another live
    /// process executes the run.
    #[command(after_long_help = help::REVIEW)]
    Review(ReviewArgs),
    /// Write a run to a portable file of JSON lines
    ///
    /// The plan, tasks, invocations with request and response, atoms, quality records,
    /// reviews and the event log. Read-only on the database, and a consistent snapshot
    /// even while the run goes on.
    #[command(after_long_help = help::EXPORT)]
    Export {
        /// Run id (or `latest`, or a unique prefix).
        run: String,
        /// Output file, written whole or not at all [default: standard output].
        #[arg(short = 'o', long, value_name = "FILE", conflicts_with = "otlp")]
        output: Option<PathBuf>,
        /// Send the run as OpenTelemetry traces to this OTLP/HTTP collector instead of
        /// writing a file, e.g. `http://localhost:4318`.
        #[arg(long, value_name = "URL")]
        otlp: Option<String>,
        /// With --otlp: send the prompts and answers too.
        #[arg(long, requires = "otlp")]
        otlp_content: bool,
    },
    /// Load a run written by `plexus export`
    ///
    /// Into the database (created if missing), in one transaction: all of it or, when
    /// the file is bad, nothing.
    #[command(after_long_help = help::IMPORT)]
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
    /// Write a run's failures as a failure tree on disk
    ///
    /// The failed, timed-out, partial and retried invocations as samples, traces,
    /// evaluations, attributions, a summary and a problems report: the layout
    /// `plexus failures DIR` opens.
    #[command(after_long_help = help::EXPORT_FAILURES)]
    ExportFailures {
        /// Run id (or `latest`, or a unique prefix).
        run: String,
        /// Directory to create (must not exist, or be empty).
        dir: PathBuf,
    },
    /// Write an Init→Execute handoff (requirement, design files)
    ///
    /// What an Init agent hands an Execute agent (the protocol's first handoff): the
    /// requirement as typed and the paths of the design files, each of which must
    /// exist, written relative to the file's folder; its size is checked against the
    /// 200–300 tokens the protocol expects. `plexus failures FILE` opens it.
    #[command(after_long_help = help::INIT_CONTEXT)]
    InitContext(Box<InitContextArgs>),
    /// List the provider profiles of plexus.toml
    ///
    /// Kind, model, endpoint and where the key comes from — never the key itself.
    #[command(after_long_help = help::PROVIDERS)]
    Providers {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// List and call the tools of MCP servers
    ///
    /// Model Context Protocol servers: each `[mcp.NAME]` table of plexus.toml names a server started as a child process; these
    /// commands start it, do what they are asked and stop it (see docs/mcp.md).
    #[command(after_long_help = help::MCP)]
    Mcp(McpArgs),
    /// Make one tiny call through a provider profile
    ///
    /// Reports latency, model and token usage; exit 1 when the call fails, with the
    /// error code it maps to.
    #[command(after_long_help = help::PING)]
    Ping {
        /// Profile name (`simulated` or a `[providers.NAME]`).
        name: String,
        /// Seconds to wait for the whole answer.
        #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
        timeout: f64,
    },
    /// Check the database file's integrity (read-only)
    ///
    /// Runs SQLite's integrity check; exit 1 when it reports a problem.
    #[command(after_long_help = help::CHECK)]
    Check {
        /// Upgrade a file written by an older plexus to this version's schema first
        /// (the one way to do so without starting a run).
        #[arg(long)]
        upgrade: bool,
    },
    /// Print the JSON Schema of plans, of plexus.toml, or of answers
    ///
    /// So that an editor completes and checks what you type: field names, types,
    /// required fields, allowed names and number ranges, with a description of each
    /// field. It is generated from the checks `plexus validate` and the config loader
    /// make, and refuses what they refuse where JSON Schema can say so; what it cannot
    /// say (cycles, unknown task ids, duplicate keys, …) only those checks find.
    ///
    /// Save it beside your files. For a plan in VS Code, add `"$schema":
    /// "./plan.schema.json"` at the top of the plan (plexus ignores that key), or map
    /// files to it with the `json.schemas` setting (`fileMatch` and `url`). For
    /// plexus.toml with Taplo or Even Better TOML, put `#:schema ./plexus.schema.json` on
    /// the first line of the file, or add a `[[rule]]` with `include = ["**/plexus.toml"]`
    /// and `schema.path` to `.taplo.toml`.
    ///
    /// `plexus schema response --task TASK PLAN` prints the schema that task's answer is
    /// held to when a server supports structured output: its atom types, fields, at most
    /// `max_atoms` atoms, `existing_assets` limited to the assets it knows.
    #[command(after_long_help = help::SCHEMA)]
    Schema {
        /// Which format: `plan`, `config`, or `response` (a task's answer).
        #[arg(value_enum)]
        what: SchemaKind,
        /// With `response`: the plan file whose task it is.
        #[arg(value_name = "PLAN")]
        plan: Option<PathBuf>,
        /// With `response`: the task whose answer's schema is printed.
        #[arg(long, value_name = "TASK")]
        task: Option<String>,
    },
    /// Print a shell completion script
    #[command(after_long_help = help::COMPLETIONS)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff)
    #[command(after_long_help = help::MAN)]
    Man,
    /// Run a plan over a dataset and score every sample
    ///
    /// Each sample of the dataset (JSON Lines, CSV or a JSON array) is placed into a
    /// copy of the spec's plan, and every copy runs in one run, so resume, replay and
    /// the Failures screen serve it as any run. As each sample finishes, the spec's
    /// checks score it; the results go to the database and the failure tree is written
    /// under --out as it goes. Exit 0 when every gate is met, 8 when one is missed, 2
    /// for a spec, dataset or plan that cannot be used, 3 when the eval stopped before
    /// its end (resume it).
    #[command(after_long_help = help::EVAL)]
    Eval(Box<EvalArgs>),
    /// Benchmarks: engine, tokens, ui, http, replay, react, …
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Developer tools: generators and a mock server
    #[command(subcommand)]
    Dev(DevCommand),
}
