//! The benchmarks behind `plexus bench …`: each measures one part of plexus beside a
//! baseline measured in the same run, and prints its figures (or JSON).

pub mod debate;
pub mod engine;
pub mod engine_report;
pub mod eval;
pub mod failures;
pub mod failures_db;
pub mod http;
pub mod open;
pub mod react;
pub mod replay;
pub mod tokens;
pub mod ui;
pub mod wal_watch;

use std::process::ExitCode;

use color_eyre::eyre::Result;
use serde::Serialize;

use crate::cli::args::BenchCommand;

/// Prints `report` as pretty JSON, or with `human`.
fn report<R: Serialize>(r: &R, json: bool, human: impl FnOnce(&R)) -> Result<ExitCode> {
    if json {
        crate::rawln!("{}", serde_json::to_string_pretty(r)?);
    } else {
        human(r);
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs one benchmark.
pub async fn run(cmd: BenchCommand) -> Result<ExitCode> {
    use BenchCommand as B;
    match cmd {
        B::Engine { opts, json } => report(
            &engine::run_bench(&opts).await?,
            json,
            engine_report::print_report,
        ),
        B::Tokens { bytes, json } => report(
            &tokens::run_token_bench(bytes),
            json,
            tokens::print_token_report,
        ),
        B::Ui { opts, json } => report(&ui::run_ui_bench(&opts)?, json, ui::print_ui_report),
        B::Http { opts, json } => report(
            &http::run_http_bench(&opts).await?,
            json,
            http::print_http_report,
        ),
        B::Replay { opts, json } => {
            if let Some(db) = &opts.generate {
                replay::generate_run(db, opts.events, opts.tasks).await?;
                return Ok(ExitCode::SUCCESS);
            }
            report(
                &replay::run_replay_bench(&opts).await?,
                json,
                replay::print_replay_report,
            )
        }
        B::Open { opts, json } => report(
            &open::run_open_bench(&opts).await?,
            json,
            open::print_open_report,
        ),
        B::React { opts, json } => report(
            &react::run_react_bench(&opts).await?,
            json,
            react::print_react_report,
        ),
        B::Debate { opts, json } => report(
            &debate::run_debate_bench(&opts).await?,
            json,
            debate::print_debate_report,
        ),
        B::Failures { opts, json } => failures::main(&opts, json),
        B::Eval { mut opts, json } => {
            // Only the readings: no pair of runs.
            if opts.reads_only {
                opts.runs = 0;
            }
            let r = tokio::task::spawn_blocking(move || eval::run_bench(&opts))
                .await
                .map_err(|e| color_eyre::eyre::eyre!("bench eval: {e}"))??;
            report(&r, json, eval::print_report)
        }
    }
}
