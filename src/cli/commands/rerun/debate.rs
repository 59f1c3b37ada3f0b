//! `plexus rerun RUN` of a debate session: the same session again, every model call
//! answered from the recording, then the two logs compared event by event.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};

use super::args::RerunArgs;
use super::compare::{compare_runs, CompareOptions};
use super::report::Report;
use crate::cli::launch::debate::{comparer_again, headless, moderator_again, start_debate};
use crate::cli::launch::Globals;
use crate::data::exit;
use crate::data::store::Store;
use crate::features::debate::replay::{load_events, DebateReplayProvider};
use crate::model::event::RunStatus;

/// Reruns the recorded session `source_run` of the database `from` into `g.db`.
pub async fn rerun_debate(
    g: &Globals,
    args: &RerunArgs,
    from: &Path,
    source_run: &str,
) -> Result<ExitCode> {
    if args.plan.is_some() || args.run_config.is_some() {
        return Err(eyre!(
            "run {source_run} is a debate session: --plan and --run-config do not apply to it"
        ));
    }
    let store = Store::open(from)?;
    let recorded = store.run(source_run)?;
    if matches!(
        recorded.status.as_str(),
        "cancelled" | "running" | "interrupted"
    ) {
        return Err(eyre!(
            "debate {source_run} is {}: its recording stops before the end, so a rerun would have nothing to answer the rest from",
            recorded.status
        ));
    }
    let events = load_events(&store, source_run)?;
    let started = DebateReplayProvider::started(&events).ok_or_else(|| {
        eyre!("run {source_run} has no debate_started event in its log: it cannot be rerun")
    })?;
    let provider = Arc::new(DebateReplayProvider::new(&events, source_run, args.instant));
    let comparer = comparer_again(g, &started.spec.embedding)?;
    crate::errln!(
        "rerun of debate {source_run} on its recording, {}",
        if args.instant {
            "each answer at once"
        } else {
            "with the recorded timing"
        }
    );
    let moderator = moderator_again(g, started.spec.moderation.as_deref())?;
    let session = start_debate(
        &g.db,
        started.spec,
        provider,
        comparer,
        moderator,
        started.now,
    )?;
    let finished = headless(g, session, false).await?;
    if finished.status == RunStatus::Cancelled {
        crate::errln!("the rerun did not run to its end; it was not compared");
        return Ok(ExitCode::from(exit::RUN_FAILED));
    }
    let old = Store::open(from)?;
    let new = Store::open(&g.db)?;
    let comparison = compare_runs(
        &old,
        source_run,
        &new,
        &finished.run_id,
        CompareOptions {
            random_jitter: false,
        },
    )?;
    let report = Report {
        run_id: &finished.run_id,
        source_run_id: source_run,
        status: finished.status.as_str(),
        plan_changed: false,
        config_changed: false,
        instant: args.instant,
        problems: &[],
        comparison: &comparison,
    };
    let text = report.to_text();
    if args.json {
        crate::base::out::stderr_text(&text);
        crate::rawln!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        crate::base::out::stdout_text(&text);
    }
    Ok(ExitCode::from(if report.diverged() {
        exit::DIVERGED
    } else {
        exit::OK
    }))
}
