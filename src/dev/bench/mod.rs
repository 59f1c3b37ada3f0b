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
    match cmd {
        BenchCommand::Engine {
            tasks,
            width,
            concurrency,
            chunks,
            bare_rows,
            chunk_flush_max,
            paced_tasks,
            dir,
            follow,
            rss_at,
            json,
        } => {
            let opts = engine::BenchOptions {
                tasks,
                width,
                concurrency,
                chunks,
                bare_rows,
                chunk_flush_max,
                paced_tasks,
                dir,
                follow,
                rss_at,
            };
            report(
                &engine::run_bench(&opts).await?,
                json,
                engine_report::print_report,
            )
        }
        BenchCommand::Tokens { bytes, json } => report(
            &tokens::run_token_bench(bytes),
            json,
            tokens::print_token_report,
        ),
        BenchCommand::Ui {
            tasks,
            lines,
            frames,
            events_per_s,
            reducer_events,
            json,
        } => {
            let opts = ui::UiBenchOptions {
                tasks,
                lines,
                frames,
                events_per_s,
                reducer_events,
                width: 200,
                height: 60,
            };
            report(&ui::run_ui_bench(&opts)?, json, ui::print_ui_report)
        }
        BenchCommand::Http {
            tasks,
            calls,
            stream_ms,
            chunks,
            api,
            dir,
            json,
        } => {
            let opts = http::HttpBenchOptions {
                tasks,
                calls,
                stream_ms,
                chunks,
                api,
                dir,
            };
            report(
                &http::run_http_bench(&opts).await?,
                json,
                http::print_http_report,
            )
        }
        BenchCommand::Replay {
            events,
            tasks,
            seeks,
            dir,
            generate,
            json,
        } => {
            if let Some(db) = generate {
                replay::generate_run(&db, events, tasks).await?;
                return Ok(ExitCode::SUCCESS);
            }
            let opts = replay::ReplayBenchOptions {
                events,
                tasks,
                seeks,
                dir,
            };
            report(
                &replay::run_replay_bench(&opts).await?,
                json,
                replay::print_replay_report,
            )
        }
        BenchCommand::Open {
            tasks,
            width,
            runs,
            dir,
            db,
            run,
            no_log,
            json,
        } => {
            let existing = match (db, run) {
                (Some(db), Some(run)) => Some((db, run)),
                (None, None) => None,
                _ => {
                    return Err(color_eyre::eyre::eyre!(
                        "--db-file and --run go together (an existing run to open)"
                    ))
                }
            };
            let opts = open::OpenBenchOptions {
                tasks,
                width,
                runs,
                dir,
                existing,
                size: (200, 60),
                from_log: !no_log,
            };
            report(
                &open::run_open_bench(&opts).await?,
                json,
                open::print_open_report,
            )
        }
        BenchCommand::React {
            tasks,
            runs,
            conversation_tokens,
            dir,
            json,
        } => {
            let opts = react::ReactBenchOptions {
                tasks,
                runs,
                conversation_tokens,
                dir,
            };
            report(
                &react::run_react_bench(&opts).await?,
                json,
                react::print_react_report,
            )
        }
        BenchCommand::Debate {
            positions,
            tokens,
            runs,
            json,
        } => report(
            &debate::run_debate_bench(&debate::DebateBenchOptions {
                positions,
                tokens,
                runs,
            })
            .await?,
            json,
            debate::print_debate_report,
        ),
        BenchCommand::Failures {
            samples,
            turns,
            runs,
            invocations,
            dir,
            measure,
            json,
        } => failures::main(
            &failures::Options {
                samples,
                turns,
                runs,
                invocations,
                dir,
                json,
            },
            measure.as_deref(),
        ),
        BenchCommand::Eval {
            samples,
            runs,
            concurrency,
            dir,
            reads_only,
            json,
        } => {
            let opts = eval::Options {
                samples,
                runs: if reads_only { 0 } else { runs },
                concurrency,
                dir,
            };
            let r = tokio::task::spawn_blocking(move || eval::run_bench(&opts))
                .await
                .map_err(|e| color_eyre::eyre::eyre!("bench eval: {e}"))??;
            report(&r, json, eval::print_report)
        }
    }
}
