//! `plexus rerun RUN`: a new run of a recorded run's plan (or another plan) on the
//! `replay` provider, which answers every request with the recorded response of the
//! same task and attempt; then the new run's events are compared with the recording's,
//! task by task, and the first difference of each task is reported the way a workflow
//! engine reports nondeterminism: which event, which field, the recorded and the new
//! value.
//!
//! Exit code: 0 when the rerun matches its recording (whatever the recorded run's
//! outcome); [`exit::DIVERGED`] when a rerun of the unchanged plan and config differs;
//! with a changed plan or config divergence is expected, reported as information, and
//! the code is the run's own (0, or 3 when it failed); 3 when the rerun was interrupted
//! or cancelled (it resumes with `plexus resume`).

pub mod args;
pub mod compare;
pub mod debate;
pub mod report;

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result, WrapErr};
use serde_json::Value;

pub use self::args::RerunArgs;
use self::compare::{compare_runs, CompareOptions};
use self::report::{replay_problems, Report};
use crate::cli::launch::replay::replay_source;
use crate::cli::launch::{resume_command, run_headless, Finished, Globals, RunConfig};
use crate::cli::open::{run_tui, UiSetup};
use crate::data::exit;
use crate::data::provider::replay::ReplaySource;
use crate::data::store::{Store, StoreError};
use crate::model::event::RunStatus;
use crate::model::plan::{load_plan_file, parse_plan};

/// How the bundled demo plan's source reads (its runs import the demo's assets).
const DEMO_SOURCE: &str = "bundled demo plan";

/// `base` with `over` merged into it: objects key by key, anything else replaced.
fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o,
    }
}

/// The recorded run config with `--run-config` merged over it and the global overrides
/// (`--seed`, `--concurrency`), the recorded config, and whether the two differ in more
/// than their concurrency.
fn config_for(
    g: &Globals,
    stored: &str,
    over: Option<&Path>,
) -> Result<(RunConfig, RunConfig, bool)> {
    let recorded_json: Value =
        serde_json::from_str(stored).wrap_err("the recorded run config does not decode")?;
    let recorded: RunConfig = serde_json::from_value(recorded_json.clone())
        .wrap_err("the recorded run config does not decode")?;
    let mut merged = recorded_json;
    if let Some(path) = over {
        let text = crate::base::text::utf8::read_text(path)
            .wrap_err_with(|| format!("the run config {}", path.display()))?;
        let v: Value = serde_json::from_str(&text)
            .wrap_err_with(|| format!("the run config {} is not JSON", path.display()))?;
        if !v.is_object() {
            return Err(eyre!(
                "the run config {} must be a JSON object (e.g. {{\"engine\": {{\"timeout_scale\": 0.5}}}})",
                path.display()
            ));
        }
        merge(&mut merged, v);
    }
    let mut config: RunConfig = serde_json::from_value(merged)
        .wrap_err("the run config does not decode (see `plexus show RUN --json` for its shape)")?;
    if let Some(c) = g.concurrency {
        config.engine.concurrency = c.max(1);
    }
    if let Some(s) = g.seed {
        config.engine.seed = s;
    }
    let mut same = config.clone();
    same.engine.concurrency = recorded.engine.concurrency;
    let changed = same != recorded;
    Ok((config, recorded, changed))
}

/// Runs `plexus rerun` and reports how the new run compares with its recording.
pub async fn rerun(g: &Globals, tui: Option<UiSetup>, args: RerunArgs) -> Result<ExitCode> {
    let from = args.from.clone().unwrap_or_else(|| g.db.clone());
    if !from.is_file() {
        return Err(StoreError::Missing(from).into());
    }
    let from = std::path::absolute(&from).unwrap_or(from);
    let store = Store::open(&from)?;
    let source = store.run(&args.run)?;
    if crate::features::debate::is_debate(&source.plan_id) {
        drop(store);
        let _ = tui; // a debate rerun runs headless
        return debate::rerun_debate(g, &args, &from, &source.run_id).await;
    }
    let (plan_source, plan_json, config_json) = store.run_plan(&source.run_id)?;
    drop(store);
    let plan = match &args.plan {
        Some(path) => load_plan_file(path)?,
        None => parse_plan(&plan_json, &plan_source).map_err(|e| {
            eyre!(
                "the plan of run {} no longer validates:\n{e}",
                source.run_id
            )
        })?,
    };
    let as_json = |t: &str| serde_json::from_str::<Value>(t).ok();
    let plan_changed = args.plan.is_some() && as_json(&plan.json) != as_json(&plan_json);
    let (mut config, recorded, config_changed) =
        config_for(g, &config_json, args.run_config.as_deref())?;
    // Whether the answers were the simulated provider's, through any number of reruns.
    let simulated = match replay_source(&recorded) {
        Some(r) => r.simulated,
        None => source.provider == "simulated",
    };
    if g.provider.is_some() {
        tracing::info!("rerun: --provider is not used; the answers come from the recording");
    }
    config.provider = "replay".into();
    config.replay = Some(ReplaySource {
        db: from.clone(),
        run_id: source.run_id.clone(),
        instant: args.instant,
        simulated,
    });
    let demo_assets = plan_source.starts_with(DEMO_SOURCE);
    crate::errln!(
        "rerun of {} ({}) on its recording, {}",
        source.run_id,
        source.status,
        if args.instant {
            "each answer at once"
        } else {
            "with the recorded timing"
        }
    );
    let finished: Finished = match tui {
        Some(setup) => run_tui(g, plan, config, None, demo_assets, setup).await?,
        None => run_headless(g, plan, config, None, demo_assets).await?,
    };
    let rerun = Rerun {
        from,
        source_run_id: source.run_id,
        plan_changed,
        config_changed,
        simulated,
    };
    rerun.conclude(g, &args, &finished)
}

/// A rerun that has run: what its comparison with the recording needs.
struct Rerun {
    /// The database of the recording.
    from: std::path::PathBuf,
    /// The recorded run.
    source_run_id: String,
    /// Whether the rerun's plan differs from the recorded one.
    plan_changed: bool,
    /// Whether its config differs in more than its concurrency.
    config_changed: bool,
    /// Whether the recorded answers were the simulated provider's.
    simulated: bool,
}

impl Rerun {
    /// The end of a rerun: its result, then (when it ran to its end) its comparison with
    /// the recording, reported; the exit code.
    fn conclude(&self, g: &Globals, args: &RerunArgs, finished: &Finished) -> Result<ExitCode> {
        // The result goes to standard output, unless that is kept for the JSON report.
        let result = |text: &str| {
            if args.json {
                crate::base::out::stderr_text(text)
            } else {
                crate::base::out::stdout_text(text)
            }
        };
        result(&finished.summary);
        result(&format!(
            "\nrun {}: {}\n",
            finished.run_id,
            finished.status.as_str()
        ));
        if matches!(
            finished.status,
            RunStatus::Interrupted | RunStatus::Cancelled
        ) {
            if finished.status == RunStatus::Interrupted {
                crate::errln!("resume with: {}", resume_command(&g.db, &finished.run_id));
            }
            crate::errln!("the rerun did not run to its end; it was not compared");
            return Ok(ExitCode::from(exit::RUN_FAILED));
        }
        let old = Store::open(&self.from)?;
        let new = Store::open(&g.db)?;
        let options = CompareOptions {
            random_jitter: !self.simulated,
        };
        let source = &self.source_run_id;
        let comparison = compare_runs(&old, source, &new, &finished.run_id, options)?;
        let problems = replay_problems(&old, source, &new, &finished.run_id)?;
        let report = Report {
            run_id: &finished.run_id,
            source_run_id: source,
            status: finished.status.as_str(),
            plan_changed: self.plan_changed,
            config_changed: self.config_changed,
            instant: args.instant,
            problems: &problems,
            comparison: &comparison,
        };
        result(&report.to_text());
        if args.json {
            crate::rawln!("{}", serde_json::to_string_pretty(&report.to_json())?);
        }
        Ok(ExitCode::from(if report.changed() {
            exit::for_status(finished.status)
        } else if report.diverged() {
            exit::DIVERGED
        } else {
            exit::OK
        }))
    }
}
