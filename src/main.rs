//! The `plexus` binary: CLI parsing, logging to a file, dispatch to commands.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use color_eyre::eyre::{eyre, Result};

use plexus::commands::bench::{print_report, run_bench, BenchOptions};
use plexus::commands::launch::{load_resume, run_headless};
use plexus::commands::show::{print_log, print_run, print_runs};
use plexus::commands::tui::{browse_tui, run_tui, want_tui, UiSetup};
use plexus::commands::{Globals, RunConfig};
use plexus::config::keymap::Keymap;
use plexus::config::{config_dir, Config};
use plexus::engine::retry::RetryPolicy;
use plexus::engine::EngineConfig;
use plexus::plan::{load_plan_file, parse_plan};
use plexus::provider::{FaultRates, SimConfig};
use plexus::store::Store;
use plexus::ui::theme::load_or_fallback;

/// Seed of the demo: its run shows parse, validation and quality retries, then succeeds.
const DEMO_SEED: u64 = 2;

/// mimalloc: the engine allocates many small, short-lived strings and JSON values.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEMO_PLAN: &str = include_str!("../fixtures/plans/avp_diffusion_planner.json");

/// plexus — a terminal workbench for multi-agent LLM work.
///
/// Runs plans (DAGs of tasks handed to LLM agents), grades what the agents produce,
/// and stores every atom and every event in one local SQLite file. With no provider
/// configured it uses the built-in simulated provider, which works offline.
#[derive(Parser, Debug)]
#[command(name = "plexus", version, about, long_about)]
struct Cli {
    /// Database file (created if missing).
    #[arg(
        long,
        global = true,
        default_value = ".plexus/plexus.db",
        env = "PLEXUS_DB"
    )]
    db: PathBuf,
    /// Seed of the simulated provider (same seed, same answers).
    #[arg(long, global = true)]
    seed: Option<u64>,
    /// Most invocations in flight.
    #[arg(long, global = true)]
    concurrency: Option<usize>,
    /// No terminal UI: progress on stderr, summary at the end (also the mode whenever
    /// stdin or stdout is not a terminal).
    #[arg(long, global = true)]
    headless: bool,
    /// Colour theme: dark, light, high-contrast, a name in the config directory's
    /// themes/, or a .toml file. A broken theme falls back to dark with a warning.
    #[arg(long, global = true, env = "PLEXUS_THEME")]
    theme: Option<String>,
    /// Config file (default: ./plexus.toml, else ~/.config/plexus/plexus.toml).
    #[arg(long, global = true, env = "PLEXUS_CONFIG")]
    config: Option<PathBuf>,
    /// Provider profile to run on: `simulated` (built in, offline) or a
    /// `[providers.NAME]` table of plexus.toml (see `plexus providers`). A resumed run
    /// keeps the profile it started with unless this is given.
    #[arg(long, global = true, env = "PLEXUS_PROVIDER")]
    provider: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the bundled AVP Diffusion Planner plan on the simulated provider, with a few
    /// injected faults so that retries and grades show up.
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
    /// Resume a run that was interrupted or killed; finished tasks are not run again.
    Resume {
        /// Run id (or `latest`).
        run: String,
    },
    /// Check the database file (`PRAGMA integrity_check`).
    Check,
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
        #[arg(long, default_value_t = 10_000)]
        tasks: usize,
        /// Tasks per layer.
        #[arg(long, default_value_t = 500)]
        width: usize,
        /// Minimum streamed chunks per task.
        #[arg(long, default_value_t = 20)]
        chunks: usize,
        /// Rows of the bare insert loop.
        #[arg(long, default_value_t = 1_000_000)]
        bare_rows: usize,
        /// Most streamed chunks per logged chunk event (1 = one event per chunk).
        #[arg(long, default_value_t = 4)]
        chunk_flush_max: usize,
        /// Tasks of the paced run (a chunk every 10 ms) that measures durability latency.
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

fn init_logging(db: &Path) -> Option<PathBuf> {
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("plexus.log");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("PLEXUS_LOG").unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(path)
}

fn main() -> ExitCode {
    let _ = color_eyre::install();
    // Panics caught on purpose (a third-party parser on untrusted bytes) are not reported.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !plexus::panic_guard::in_guarded() {
            report(info);
        }
    }));
    let cli = Cli::parse();
    let log = init_logging(&cli.db);
    // The store's writer thread gets a core of its own: the runtime takes the others
    // (at least one). PLEXUS_WORKER_THREADS overrides.
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let workers = std::env::var("PLEXUS_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(cores.saturating_sub(1))
        .max(1);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(workers);
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(70);
        }
    };
    let code = match rt.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    };
    if let Some(p) = log {
        tracing::info!("exit; log at {}", p.display());
    }
    code
}

/// Loads the config file, theme and keymap for the UI. Config errors stop the program
/// (a typo in a key binding should not be silently ignored); a broken theme falls back.
fn ui_setup(cli_theme: Option<&str>, config: Option<&Path>) -> Result<UiSetup> {
    let cfg = Config::load(config).map_err(|e| eyre!("{e}"))?;
    let keys = Keymap::with_overrides(&cfg.keys).map_err(|e| eyre!("{e}"))?;
    let spec = cli_theme
        .map(str::to_string)
        .unwrap_or_else(|| cfg.ui.theme.clone());
    let (theme, warning) = load_or_fallback(&spec, config_dir().as_deref());
    if let Some(w) = &warning {
        tracing::warn!("{w}");
    }
    Ok(UiSetup {
        theme,
        keys,
        warning,
    })
}

/// Runs with the TUI when `tui` is set, else headless.
async fn launch(
    g: &Globals,
    tui: Option<UiSetup>,
    plan: plexus::plan::Plan,
    config: RunConfig,
    resume: Option<(String, plexus::engine::ResumeState)>,
    demo_assets: bool,
) -> Result<plexus::commands::launch::Finished> {
    match tui {
        Some(setup) => run_tui(g, plan, config, resume, demo_assets, setup).await,
        None => run_headless(g, plan, config, resume, demo_assets).await,
    }
}

/// A new run's config: engine and simulated settings, and the chosen provider profile.
fn run_config(g: &Globals, engine: EngineConfig, simulated: SimConfig) -> RunConfig {
    RunConfig {
        engine,
        simulated,
        provider: g.provider.clone().unwrap_or_else(|| "simulated".into()),
    }
}

fn engine_config(g: &Globals, base: EngineConfig) -> EngineConfig {
    let mut e = base;
    if let Some(c) = g.concurrency {
        e.concurrency = c.max(1);
    }
    if let Some(s) = g.seed {
        e.seed = s;
    }
    e
}

async fn dispatch(cli: Cli) -> Result<ExitCode> {
    let g = Globals {
        db: cli.db.clone(),
        seed: cli.seed,
        concurrency: cli.concurrency,
        headless: cli.headless,
        provider: cli.provider.clone(),
        config: cli.config.clone(),
    };
    let tui = if want_tui(&g) {
        Some(ui_setup(cli.theme.as_deref(), cli.config.as_deref())?)
    } else {
        None
    };
    match cli.command {
        Command::Demo {
            no_faults,
            chunk_ms,
        } => {
            let plan = parse_plan(DEMO_PLAN, "bundled demo plan (avp_diffusion_planner.json)")
                .map_err(|e| eyre!("{e}"))?;
            let engine = engine_config(
                &g,
                EngineConfig {
                    timeout_scale: 0.005,
                    retry: RetryPolicy::default().scaled(20),
                    seed: DEMO_SEED,
                    ..EngineConfig::default()
                },
            );
            let simulated = SimConfig {
                seed: engine.seed,
                chunk_ms,
                first_chunk_ms: 150,
                faults: if no_faults {
                    FaultRates::default()
                } else {
                    FaultRates::demo()
                },
                ..SimConfig::default()
            };
            finish(launch(&g, tui, plan, run_config(&g, engine, simulated), None, true).await?)
        }
        Command::Run {
            plan,
            faults,
            chunk_ms,
            first_chunk_ms,
            timeout_scale,
            retry_delay_div,
            abstractive_summaries,
        } => {
            let plan = load_plan_file(&plan).map_err(|e| eyre!("{e}"))?;
            let faults = match faults.as_str() {
                "none" => FaultRates::default(),
                "demo" => FaultRates::demo(),
                other => return Err(eyre!("unknown fault mix `{other}`; use `none` or `demo`")),
            };
            if !(timeout_scale > 0.0 && timeout_scale.is_finite()) {
                return Err(eyre!("--timeout-scale must be a positive number"));
            }
            let engine = engine_config(
                &g,
                EngineConfig {
                    timeout_scale,
                    retry: RetryPolicy::default().scaled(retry_delay_div),
                    abstractive_summaries,
                    ..EngineConfig::default()
                },
            );
            let simulated = SimConfig {
                seed: engine.seed,
                chunk_ms,
                first_chunk_ms,
                faults,
                ..SimConfig::default()
            };
            finish(
                launch(
                    &g,
                    tui,
                    plan,
                    run_config(&g, engine, simulated),
                    None,
                    false,
                )
                .await?,
            )
        }
        Command::Browse { run } => {
            let Some(setup) = tui else {
                return Err(eyre!(
                    "browse needs a terminal; use `plexus runs` or `plexus show RUN` instead"
                ));
            };
            browse_tui(&g, run.as_deref(), setup).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate { plan } => match load_plan_file(&plan) {
            Ok(p) => {
                let layers = p.layers();
                println!(
                    "{}: valid — plan {} ({}), {} tasks in {} layers, agents: {}",
                    plan.display(),
                    p.plan_id,
                    p.execution_mode.as_str(),
                    p.tasks.len(),
                    layers.len(),
                    p.agents.keys().cloned().collect::<Vec<_>>().join(", ")
                );
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprint!("{e}");
                Ok(ExitCode::from(2))
            }
        },
        Command::Runs { json } => {
            print_runs(&Store::open(&g.db)?, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Show { run, json } => {
            print_run(&Store::open(&g.db)?, &run, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Log { run } => {
            print_log(&Store::open(&g.db)?, &run)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Resume { run } => {
            let store = Store::open(&g.db)?;
            let id = store.run(&run)?.run_id;
            let (plan, config, state) = load_resume(&store, &id)?;
            drop(store);
            let mut config = config;
            config.engine = engine_config(&g, config.engine);
            if let Some(p) = &g.provider {
                config.provider = p.clone();
            }
            finish(launch(&g, tui, plan, config, Some((id, state)), false).await?)
        }
        Command::Providers { json } => {
            plexus::commands::providers::print_providers(&g, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Ping { name, timeout } => {
            if !(timeout.is_finite() && timeout > 0.0) {
                return Err(eyre!("--timeout must be a positive number of seconds"));
            }
            let ok = plexus::commands::providers::ping(&g, &name, timeout).await?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::MockServer {
            port,
            stream_ms,
            chunks,
            require_key,
            threads,
        } => {
            plexus::commands::bench_http::serve_mock(
                port,
                stream_ms,
                chunks,
                require_key,
                threads,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchHttp {
            tasks,
            calls,
            stream_ms,
            chunks,
            api,
            dir,
            json,
        } => {
            let r = plexus::commands::bench_http::run_http_bench(
                &plexus::commands::bench_http::HttpBenchOptions {
                    tasks: tasks.max(1),
                    calls: calls.max(1),
                    stream_ms,
                    chunks: chunks.max(1),
                    api,
                    dir,
                },
            )
            .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                plexus::commands::bench_http::print_http_report(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check => {
            let r = Store::open(&g.db)?.integrity_check()?;
            println!("{}: integrity_check {r}", g.db.display());
            Ok(if r == "ok" {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::GenPlan {
            tasks,
            width,
            max_atoms,
        } => {
            let v = plexus::plan::generate::generate(plexus::plan::generate::GenSpec {
                tasks,
                width,
                fan_in: 3,
                max_atoms,
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchTokens { bytes, json } => {
            let r = plexus::commands::bench_tokens::run_token_bench(bytes.max(1));
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                plexus::commands::bench_tokens::print_token_report(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchUi {
            tasks,
            lines,
            frames,
            events_per_s,
            reducer_events,
            json,
        } => {
            let r = plexus::commands::bench_ui::run_ui_bench(
                &plexus::commands::bench_ui::UiBenchOptions {
                    tasks: tasks.max(1),
                    lines,
                    frames: frames.max(1),
                    events_per_s,
                    reducer_events,
                    width: 200,
                    height: 60,
                },
            )?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                plexus::commands::bench_ui::print_ui_report(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            tasks,
            width,
            chunks,
            bare_rows,
            chunk_flush_max,
            paced_tasks,
            dir,
            json,
        } => {
            let opts = BenchOptions {
                tasks,
                width,
                concurrency: g.concurrency.unwrap_or(256),
                chunks,
                bare_rows,
                chunk_flush_max,
                paced_tasks,
                dir,
            };
            let r = run_bench(&opts).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print_report(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn finish(f: plexus::commands::launch::Finished) -> Result<ExitCode> {
    eprint!("{}", f.summary);
    if f.status == plexus::event::RunStatus::Interrupted {
        eprintln!("\nresume with: plexus resume {}", f.run_id);
    }
    eprintln!("\nrun {}: {}", f.run_id, f.status.as_str());
    Ok(if f.status.is_failure() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
