//! The `plexus` binary: CLI parsing, logging to a file, dispatch to commands.

use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result};

use plexus::base::config::Config;
use plexus::cli::commands as cmd;
use plexus::cli::commands::log::print_log_filtered;
use plexus::cli::commands::show::{print_run, print_runs_at};
use plexus::cli::launch::config::{engine_config, run_config, session_of, sim_config};
use plexus::cli::launch::{prepare_resume, run_headless, Finished, Globals, Resuming, RunConfig};
use plexus::cli::open::{
    browse_tui, replay_options, run_tui, ui_setup, want_tui, ReplayOptions, UiSetup,
};
use plexus::data::exit;
use plexus::data::provider::Fault;
use plexus::data::store::Store;
use plexus::model::plan::{load_plan_file, parse_plan};
use plexus::run::engine::retry::RetryPolicy;
use plexus::run::engine::EngineConfig;

use plexus::cli::args::{Cli, Command, FaultMix, RunArgs};

/// The demo task whose first answer (on the simulated provider, with faults) refers to
/// an asset that does not exist (E007): it stops for review, blocking the critic below.
const DEMO_HALLUCINATION: &str = "TASK_VALIDATOR_DIFF_01";

/// mimalloc: the engine allocates many small, short-lived strings and JSON values.
/// (The `system-alloc` feature leaves the system allocator, for heap profilers.)
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What `plexus browse` says without a terminal.
const BROWSE_NEEDS_A_TERMINAL: &str =
    "browse needs a terminal; use `plexus runs` or `plexus show RUN` instead";
/// What `plexus replay` says without a terminal.
const REPLAY_NEEDS_A_TERMINAL: &str =
    "replay needs a terminal; `plexus log RUN` prints the events, `plexus show RUN` the outcome";

const DEMO_PLAN: &str = include_str!("../fixtures/plans/avp_diffusion_planner.json");

fn main() -> ExitCode {
    plexus::data::exit::install_plain_errors();
    plexus::model::crash::install();
    let cli = plexus::cli::args::parse(std::env::args_os());
    // Lets the tests see what a bug looks like to a person (debug builds only).
    #[cfg(debug_assertions)]
    if std::env::var_os("PLEXUS_CRASH_TEST").is_some() {
        panic!("crash requested by PLEXUS_CRASH_TEST");
    }
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
            plexus::errln!("error: cannot start the runtime: {e}");
            return ExitCode::from(exit::ERROR);
        }
    };
    // A command that stops gracefully on a signal takes the signals over first, before
    // it opens the log or the database: one that arrives meanwhile is kept for it.
    if cli.command.stops_gracefully() {
        let _entered = rt.enter();
        plexus::base::signals::install();
    }
    let log = if cli.command.uses_database() {
        plexus::base::logging::init(&cli.db_path(), cli.command.writes_database())
    } else {
        None
    };
    let db = cli.db_path();
    let code = match rt.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            plexus::errln!("error: {}", exit::describe(&e, &db));
            ExitCode::from(exit_code_of(&e))
        }
    };
    if let Some(p) = log {
        tracing::info!("exit; log at {}", p.display());
    }
    // Worker threads may still hold a provider call that was cut off; do not wait.
    rt.shutdown_background();
    code
}

/// Runs with the TUI when `tui` is set, else headless.
async fn launch(
    g: &Globals,
    tui: Option<UiSetup>,
    plan: plexus::model::plan::Plan,
    config: RunConfig,
    resume: Option<Resuming>,
    demo_assets: bool,
) -> Result<Finished> {
    match tui {
        Some(setup) => run_tui(g, plan, config, resume, demo_assets, setup).await,
        None => run_headless(g, plan, config, resume, demo_assets).await,
    }
}

/// Runs the command the command line names.
async fn dispatch(cli: Cli) -> Result<ExitCode> {
    let (g, tui) = globals_of(&cli)?;
    match cli.command {
        Command::Demo { faults, sim, .. } => demo(&g, tui, faults, &sim).await,
        Command::Run(args) => run_plan(&g, tui, &args).await,
        Command::Resume { run, pace, .. } => resume(&g, tui, &run, &pace).await,
        Command::Browse { run, .. } => {
            let options = ReplayOptions::browse();
            browse(&g, tui, run.as_deref(), options, BROWSE_NEEDS_A_TERMINAL).await
        }
        Command::Replay {
            run,
            at,
            speed,
            max_gap,
            paused,
            ..
        } => {
            let options = replay_options(&at, &speed, max_gap, paused)?;
            browse(&g, tui, run.as_deref(), options, REPLAY_NEEDS_A_TERMINAL).await
        }
        Command::Debate(args) => cmd::debate::debate(&g, *args, tui).await,
        Command::Serve(args) => cmd::debate::serve::serve(&g, *args).await,
        Command::Rerun { args, .. } => cmd::rerun::rerun(&g, tui, args).await,
        Command::Failures {
            target,
            json,
            all_iterations,
            budget,
            ..
        } => failures(&g, tui, target.as_deref(), json, (all_iterations, budget)).await,
        Command::Eval(args) => cmd::eval::eval(&g, *args, tui).await,
        Command::Bench(bench) => plexus::dev::bench::run(bench).await,
        Command::Dev(dev) => plexus::dev::commands::run(dev),
        Command::Validate { plan } => cmd::check::validate(&plan),
        Command::Runs { json } => done(print_runs_at(&g.db, json)),
        Command::Show { run, json } => done(print_run(&Store::open(&g.db)?, &run, json)),
        Command::Log { run, filter } => done(print_log_filtered(&g.db, &run, &filter)),
        Command::Diff {
            run_a,
            run_b,
            json,
            timing,
        } => Ok(cmd::diff::run_diff(&g.db, &run_a, &run_b, json, timing)),
        Command::Review(args) => cmd::review::review(&g.db, args),
        Command::Export {
            run,
            otlp: Some(url),
            otlp_content,
            ..
        } => export_otlp(&g, &run, url, otlp_content).await,
        Command::Export { run, output, .. } => {
            cmd::portable::export(&g.db, &run, output.as_deref())
        }
        Command::Import {
            file,
            rename,
            rename_auto,
        } => cmd::portable::import(&g.db, &file, rename, rename_auto),
        Command::ExportFailures { run, dir } => cmd::failures::export(&g.db, &run, &dir),
        Command::InitContext(args) => cmd::failures::init_context(&args),
        Command::Providers { json } => done(cmd::providers::print_providers(&g, json)),
        Command::Ping { name, timeout } => ping(&g, &name, timeout).await,
        Command::Mcp(args) => Ok(exit_of(cmd::mcp::mcp(&g, args.command).await?)),
        Command::Check { upgrade } => cmd::check::check(&g.db, upgrade),
        Command::Schema { what, plan, task } => {
            done(cmd::schema::print(what, plan.as_deref(), task.as_deref()))
        }
        Command::Completions { shell } => done(cmd::docs_gen::completions(shell)),
        Command::Man => done(cmd::docs_gen::man()),
    }
}

/// A command that printed what it was asked: success, or its error.
fn done(printed: Result<()>) -> Result<ExitCode> {
    printed.map(|()| ExitCode::SUCCESS)
}

/// `plexus browse` and `plexus replay`: the terminal UI on the run, or `no_terminal` as
/// the error without a terminal.
async fn browse(
    g: &Globals,
    tui: Option<UiSetup>,
    run: Option<&str>,
    options: ReplayOptions,
    no_terminal: &str,
) -> Result<ExitCode> {
    let Some(setup) = tui else {
        return Err(eyre!("{no_terminal}"));
    };
    browse_tui(g, run, setup, options).await?;
    Ok(ExitCode::SUCCESS)
}

/// `plexus export RUN --otlp URL`: the run sent as traces to the collector at `url`.
async fn export_otlp(g: &Globals, run: &str, url: String, otlp_content: bool) -> Result<ExitCode> {
    let cfg = Config::load(g.config.as_deref()).map_err(|e| eyre!("{e}"))?;
    let opts = plexus::cli::args::OtlpOpts {
        otlp: Some(url),
        otlp_content,
    };
    let Some(settings) = otlp_settings(&opts, Some(&cfg))? else {
        return Err(eyre!("--otlp needs a URL"));
    };
    cmd::portable::export_otlp(&g.db, run, settings).await
}

/// `plexus ping NAME`: one tiny call through the profile (exit 1 when it fails).
async fn ping(g: &Globals, name: &str, timeout: f64) -> Result<ExitCode> {
    if !(timeout.is_finite() && (0.1..=86_400.0).contains(&timeout)) {
        return Err(exit::InvalidOptions(format!(
            "--timeout {timeout} is out of range (from 0.1 to 86400 seconds)"
        ))
        .into());
    }
    Ok(exit_of(cmd::providers::ping(g, name, timeout).await?))
}

/// Exit 0 when a command's check held, else 1.
fn exit_of(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What every command shares: the global options, the loaded config (for the commands
/// that read it; its errors stop them), and the terminal UI's setup when the command
/// opens one here.
fn globals_of(cli: &Cli) -> Result<(Globals, Option<UiSetup>)> {
    // Configuration errors stop every command that reads it, on a terminal or not.
    let cfg = if cli.command.reads_config() {
        Some(std::sync::Arc::new(
            Config::load(cli.config.as_deref()).map_err(|e| eyre!("{e}"))?,
        ))
    } else {
        None
    };
    if let Some(name) = cfg.as_ref().and_then(|c| c.reviewer.as_deref()) {
        plexus::run::review::set_configured_reviewer(name);
    }
    let (session, seed) = session_of(&cli.command);
    let otlp = match &cli.command {
        Command::Demo { .. }
        | Command::Run { .. }
        | Command::Resume { .. }
        | Command::Debate(..) => otlp_settings(&session.otlp, cfg.as_deref())?,
        _ => None,
    };
    let g = Globals {
        db: cli.db_path(),
        seed,
        concurrency: session.concurrency,
        max_cost: session.max_cost,
        headless: session.headless,
        provider: session.provider.clone(),
        config: cli.config.clone(),
        loaded: cfg.clone(),
        otlp,
    };
    let tui = match &cfg {
        Some(cfg) if cli.command.has_tui() && want_tui(&g) => {
            Some(ui_setup(session.theme.theme.as_deref(), cfg)?)
        }
        _ => None,
    };
    Ok((g, tui))
}

/// `plexus demo`: the bundled plan, on the simulated provider with its faults unless a
/// provider is named.
async fn demo(
    g: &Globals,
    tui: Option<UiSetup>,
    faults: FaultMix,
    sim: &plexus::cli::args::SimOpts,
) -> Result<ExitCode> {
    let plan = parse_plan(DEMO_PLAN, "bundled demo plan (avp_diffusion_planner.json)")?;
    // The simulated demo runs its timeouts and retry delays fast so its faults
    // show up in seconds; a real model keeps the real ones (a real call takes
    // longer than 3 s, and a 429 needs the real backoff).
    let profile = plexus::cli::launch::profile::profile_named(
        g,
        g.provider.as_deref().unwrap_or("simulated"),
    )?;
    let simulated = profile.kind == plexus::data::provider::profile::ProviderKind::Simulated;
    let engine = engine_config(
        g,
        EngineConfig {
            timeout_scale: if simulated { 0.005 } else { 1.0 },
            retry: if simulated {
                RetryPolicy::default().scaled(20)
            } else {
                RetryPolicy::default()
            },
            ..EngineConfig::default()
        },
    );
    let mut simulated = sim_config(engine.seed, sim, faults);
    if faults == FaultMix::Demo {
        simulated.script = [(DEMO_HALLUCINATION.to_string(), vec![Fault::Hallucination])].into();
    }
    let config = run_config(g, engine, simulated);
    finish(g, launch(g, tui, plan, config, None, true).await?)
}

/// `plexus run PLAN`: the plan file, with the engine's settings the command line gave.
async fn run_plan(g: &Globals, tui: Option<UiSetup>, args: &RunArgs) -> Result<ExitCode> {
    let engine = EngineConfig {
        timeout_scale: args.timeout_scale,
        retry: RetryPolicy::default().scaled(args.retry_delay_div),
        abstractive_summaries: args.abstractive_summaries,
        ..EngineConfig::default()
    };
    // Until the run has opened, memory freed is given back at once.
    plexus::base::allocator::opening();
    let plan_file = &args.plan;
    let plan = load_plan_file(plan_file)?;
    let mut engine = engine_config(g, engine);
    engine.skills_dir = plexus::run::engine::config::skills_dir_for(plan_file, &engine.workspace);
    let simulated = sim_config(engine.seed, &args.sim, args.faults);
    let config = run_config(g, engine, simulated);
    finish(g, launch(g, tui, plan, config, None, false).await?)
}

/// `plexus resume RUN`: the run's own plan and settings, at the pace and on the provider
/// the command line names, if it does.
async fn resume(
    g: &Globals,
    tui: Option<UiSetup>,
    run: &str,
    pace: &plexus::cli::args::ResumePaceOpts,
) -> Result<ExitCode> {
    let (plan, mut config, resuming) = prepare_resume(&g.db, run)?;
    config.engine = engine_config(g, config.engine);
    if let Some(ms) = pace.chunk_ms {
        config.simulated.chunk_ms = ms;
    }
    if let Some(ms) = pace.first_chunk_ms {
        config.simulated.first_chunk_ms = ms;
    }
    if let Some(p) = &g.provider {
        config.provider = p.clone();
    }
    finish(
        g,
        launch(g, tui, plan, config, Some(resuming), false).await?,
    )
}

/// `plexus failures [TARGET]`: the list as JSON, or the Failures screen on a terminal.
async fn failures(
    g: &Globals,
    tui: Option<UiSetup>,
    target: Option<&str>,
    json: bool,
    (all_iterations, budget): (bool, u64),
) -> Result<ExitCode> {
    if json {
        return plexus::cli::commands::failures::run(&g.db, target, true, all_iterations);
    }
    let Some(setup) = tui else {
        return Err(eyre!(
            "the Failures screen needs a terminal; `plexus failures [TARGET] --json` prints the list"
        ));
    };
    plexus::cli::commands::failures::screen::open(g, target, all_iterations, budget, setup).await
}

/// The end of a run: the summary and the final status on standard output (the result,
/// for a script or a file) with, for a run waiting for review, how to decide and go
/// on; how to resume an interrupted run on standard error.
fn finish(g: &Globals, f: Finished) -> Result<ExitCode> {
    plexus::base::out::stdout_text(&f.summary);
    plexus::outln!("\nrun {}: {}", f.run_id, f.status.as_str());
    if f.status == plexus::model::event::RunStatus::AwaitingReview {
        let waiting = plexus::data::store::Store::open(&g.db)
            .and_then(|s| plexus::cli::launch::next_steps::waiting_tasks(&s, &f.run_id))
            .unwrap_or_default();
        for line in plexus::cli::launch::next_steps::review_lines(&g.db, &f.run_id, &waiting) {
            plexus::outln!("{line}");
        }
    }
    if f.status == plexus::model::event::RunStatus::Interrupted {
        plexus::errln!(
            "resume with: {}",
            plexus::cli::launch::resume_command(&g.db, &f.run_id)
        );
    }
    if f.status == plexus::model::event::RunStatus::BudgetReached {
        plexus::errln!(
            "the run's money budget is spent; to go on, resume with a larger one: {} --max-cost USD",
            plexus::cli::launch::resume_command(&g.db, &f.run_id)
        );
    }
    Ok(ExitCode::from(exit::for_status(f.status)))
}

/// Where a run's traces go: `--otlp`, the config's `[otlp]` table, the
/// `OTEL_EXPORTER_OTLP_*` variables; `None` when nothing names a collector.
fn otlp_settings(
    opts: &plexus::cli::args::OtlpOpts,
    cfg: Option<&Config>,
) -> Result<Option<plexus::features::otel::OtlpSettings>> {
    let table = match cfg {
        Some(c) => plexus::features::otel::settings::ConfigOtlp::from_config(c)
            .map_err(|e| eyre!("{e}"))?,
        None => Default::default(),
    };
    let settings = plexus::features::otel::settings::resolve(
        opts.otlp.as_deref(),
        opts.otlp_content,
        &table,
        &|k| std::env::var(k).ok(),
    )
    .map_err(exit::InvalidOptions)?;
    if settings.is_none() && opts.otlp_content {
        return Err(exit::InvalidOptions(
            "--otlp-content needs a collector: --otlp URL, [otlp] endpoint in the config, or OTEL_EXPORTER_OTLP_ENDPOINT".into(),
        )
        .into());
    }
    Ok(settings)
}

/// The exit code of a command that failed with `e`: the first cause the table names.
fn exit_code_of(e: &color_eyre::Report) -> u8 {
    for cause in e.chain() {
        if let Some(r) = cause.downcast_ref::<plexus::run::review::ReviewError>() {
            return r.exit_code();
        }
        if let Some(e) = cause.downcast_ref::<exit::RunEnded>() {
            return exit::for_status(e.status);
        }
        if cause
            .downcast_ref::<plexus::model::plan::PlanErrors>()
            .is_some()
            || cause.downcast_ref::<exit::InvalidOptions>().is_some()
        {
            return exit::INVALID;
        }
        if let Some(plexus::data::store::StoreError::Owned { .. }) =
            cause.downcast_ref::<plexus::data::store::StoreError>()
        {
            return exit::OWNED;
        }
        if let Some(plexus::run::engine::EngineError::WorkerCrashed(_)) =
            cause.downcast_ref::<plexus::run::engine::EngineError>()
        {
            return exit::CRASH;
        }
        if cause
            .downcast_ref::<plexus::base::signals::StoppedBeforeStart>()
            .is_some()
        {
            return exit::RUN_FAILED;
        }
    }
    exit::ERROR
}
