//! Starting runs: a new run from a plan, or a resumed one (see [`super::resume`]), on
//! the provider its config names; what comes back is the engine's handle and the
//! committed events.

use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};
use serde_json::Value;

use super::config::RunConfig;
use super::globals::Globals;
use super::replay::{known_assets_of, replay_provider, replay_source};
use super::resume::Resuming;
use crate::data::provider::Provider;
use crate::data::store::lease::HeldLease;
use crate::data::store::writer::spawn_writer_holding;
use crate::data::store::{PaperRow, RunRow, Store, WriteOp};
use crate::model::event::RunStatus;
use crate::model::plan::Plan;
use crate::run::engine::{start_run, RunSpec};

/// A new run id: `R{YYYYMMDD}-{HHMMSS}-{4 hex}`.
pub fn new_run_id() -> String {
    let now = chrono::Utc::now();
    format!("R{}-{:04x}", now.format("%Y%m%d-%H%M%S"), fastrand::u16(..))
}

/// Imports the bundled asset library (papers and atoms) so the demo's references exist.
pub fn import_demo_assets(writer: &crate::data::store::Writer) -> Result<()> {
    let lib: Value =
        serde_json::from_str(include_str!("../../../fixtures/assets/avp_library.json"))?;
    let papers = lib["papers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| PaperRow {
            paper_id: p["paper_id"].as_str().unwrap_or_default().to_string(),
            title: p["title"].as_str().unwrap_or_default().to_string(),
            authors: p["authors"].as_str().map(str::to_string),
            year: p["year"].as_i64(),
            domain: p["domain"].as_str().map(str::to_string),
            abstract_text: p["abstract"].as_str().map(str::to_string),
        })
        .collect();
    let assets = lib["assets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["atom_id"].as_str().unwrap_or_default().to_string(),
                a["atom_type"].as_str().unwrap_or_default().to_string(),
                a["domain"].as_str().map(str::to_string),
                a["paper_id"].as_str().map(str::to_string),
                a["content"].to_string(),
            )
        })
        .collect();
    writer.send(WriteOp::Import { papers, assets })?;
    Ok(())
}

/// How a launched run ended, for the exit code.
pub struct Finished {
    /// Run id.
    pub run_id: String,
    /// Status.
    pub status: RunStatus,
    /// Summary table to print at the end.
    pub summary: String,
}

/// A run started on the engine, its events flowing to `events`.
pub struct Started {
    /// Run id.
    pub run_id: String,
    /// Engine handle.
    pub handle: crate::run::engine::RunHandle,
    /// Writer handle (dropped at the end so the writer thread can finish).
    pub writer: crate::data::store::Writer,
    /// The writer thread.
    pub writer_thread: std::thread::JoinHandle<()>,
    /// The snapshot keeper's thread (ends after the writer's).
    pub keeper: std::thread::JoinHandle<()>,
    /// Committed events.
    pub events: tokio::sync::mpsc::UnboundedReceiver<Vec<Arc<crate::model::event::Envelope>>>,
    /// The live OTLP sender, when the run's traces are sent.
    pub otlp: Option<crate::features::otel::live::LiveExport>,
}

/// Opens the database, creates (or resumes) the run and starts the engine.
pub fn start(
    globals: &Globals,
    mut plan: Plan,
    config: RunConfig,
    resume: Option<Resuming>,
    demo_assets: bool,
) -> Result<Started> {
    config.engine.tokens.encoding.preload();
    let mut config = config;
    let provider = provider_for(globals, &mut config)?;
    // A rerun grades against the assets its recording was graded against.
    let replay_known = match replay_source(&config) {
        Some(source) => {
            let resumed = resume.as_ref().map(|r| r.run_id.as_str());
            Some(known_assets_of(source, &globals.db, resumed)?)
        }
        None => None,
    };
    if resume.is_none() {
        anchor_workspace(&mut config);
    }
    let (sub_tx, sub_rx) = tokio::sync::mpsc::unbounded_channel();
    // A stop signal before the run exists ends the command with nothing written (a held
    // resume lease is given back as `resume` is dropped).
    crate::base::signals::stop_if_signalled()?;
    let (run_id, lease, resume) = claim(globals, resume)?;
    let (writer, writer_thread) =
        spawn_writer_holding(&globals.db, Some(sub_tx), lease.lease().cloned())?;
    // Committed events pass through the snapshot keeper on their way to the consumer.
    let (keeper_tx, keeper_rx) = tokio::sync::mpsc::unbounded_channel();
    let keeper = super::keeper::spawn_keeper(globals.db.clone(), run_id.clone(), sub_rx, keeper_tx)
        .map_err(|e| eyre!("cannot start the snapshot keeper: {e}"))?;
    // From here the writer gives the lease back when it stops.
    drop(lease.handed_over());
    let new_run = resume.is_none();
    let begun = crate::base::signals::stop_if_signalled()
        .map_err(color_eyre::Report::from)
        .and_then(|()| {
            begin(
                globals,
                &mut plan,
                &config,
                &run_id,
                &provider,
                &writer,
                new_run,
                demo_assets,
            )
        });
    let known_assets = match begun {
        Ok(known_assets) => replay_known.unwrap_or(known_assets),
        Err(e) => {
            // Let the writer stop (and give the lease back) before the error ends the
            // process.
            drop(writer);
            let _ = writer_thread.join();
            return Err(e);
        }
    };
    let handle = start_run(RunSpec {
        db: Some(globals.db.clone()),
        run_id: run_id.clone(),
        plan: Arc::new(plan),
        provider,
        config: config.engine.clone(),
        writer: writer.clone(),
        known_assets,
        resume,
    });
    Ok(Started {
        run_id,
        handle,
        writer,
        writer_thread,
        keeper,
        events: keeper_rx,
        otlp: None,
    }
    .with_otlp(globals))
}

/// A new run's workspace made absolute: file references resolve against the directory
/// the run started in (stored with the run, so a resume reads the same files).
fn anchor_workspace(config: &mut RunConfig) {
    if config.engine.workspace.is_relative() {
        if let Ok(cwd) = std::env::current_dir() {
            config.engine.workspace = cwd.join(&config.engine.workspace);
        }
    }
}

/// The run's id, this process's lease on it, and the state a resume goes on from: the
/// resumed run's, or a new run's id with the lease just taken.
fn claim(
    globals: &Globals,
    resume: Option<Resuming>,
) -> Result<(String, HeldLease, Option<crate::run::engine::ResumeState>)> {
    Ok(match resume {
        Some(r) => (r.run_id, r.lease, Some(r.state)),
        None => {
            let id = new_run_id();
            let lease = HeldLease::acquire(&globals.db, &id)?;
            (id, lease, None)
        }
    })
}

/// The provider the run's calls go to, with the run's price set: a rerun's replay of
/// its recording (no price, no budget), else the profile its config names, whose model
/// must have a price when the run has a money budget.
fn provider_for(globals: &Globals, config: &mut RunConfig) -> Result<Arc<dyn Provider>> {
    if let Some(source) = replay_source(config) {
        // A rerun answers from its recording: its calls cost nothing, so it has no price
        // and no budget.
        let provider = replay_provider(source)?;
        config.engine.price = None;
        config.engine.max_cost_usd = None;
        return Ok(provider);
    }
    let profile = super::profile::profile_named(globals, &config.provider)?;
    config.engine.price = super::profile::price_of(globals, &profile)?;
    if let (Some(limit), None) = (config.engine.max_cost_usd, config.engine.price) {
        return Err(eyre!(
            "a money budget ({}) needs the price of the model `{}`: add a [prices.\"{}\"] table with `input` and `output` (US dollars per million tokens) to the config file ({}; see docs/providers.md)",
            crate::base::cost::usd(limit),
            super::profile::priced_model(&profile),
            super::profile::priced_model(&profile),
            match &super::profile::config(globals)?.path {
                Some(p) => p.display().to_string(),
                None => "none is read now: write plexus.toml".to_string(),
            },
        ));
    }
    crate::data::provider::build(&profile, &config.simulated).map_err(|e| eyre!("{e}"))
}

/// What a run needs written before its engine starts: the demo's assets, the run row of
/// a new run (which takes the plan's JSON text); returns the asset ids already in the
/// store.
#[allow(clippy::too_many_arguments)]
fn begin(
    globals: &Globals,
    plan: &mut Plan,
    config: &RunConfig,
    run_id: &str,
    provider: &Arc<dyn Provider>,
    writer: &crate::data::store::Writer,
    new_run: bool,
    demo_assets: bool,
) -> Result<crate::model::gate::known::AssetIds> {
    if demo_assets {
        import_demo_assets(writer)?;
    }
    if new_run {
        // The row takes the plan's text: nothing in the run reads it from memory again.
        let json = std::mem::take(&mut plan.json);
        let mut row = RunRow::for_plan(
            run_id,
            plan,
            &provider.name(),
            serde_json::to_string(config)?,
        );
        row.plan_json = json;
        writer.send(WriteOp::CreateRun(Box::new(row)))?;
    }
    writer.flush()?;
    Ok(Store::open(&globals.db)?.known_asset_ids()?)
}

impl Started {
    /// Sends the run's traces to the collector `globals` names (if any): the committed
    /// events pass through the live OTLP sender on their way to the consumer. A sender
    /// that cannot start is reported and the run goes on without it.
    pub fn with_otlp(mut self, globals: &Globals) -> Started {
        let Some(settings) = globals.otlp.clone() else {
            return self;
        };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let input = std::mem::replace(&mut self.events, rx);
        match crate::features::otel::live::spawn_live(
            globals.db.clone(),
            self.run_id.clone(),
            settings,
            input,
            tx,
        ) {
            Ok(live) => self.otlp = Some(live),
            Err(e) => crate::errln!("otlp: {e}; the run goes on without traces"),
        }
        self
    }

    /// [`Started::finish`], printing the OTLP sender's report on standard error.
    pub async fn finish(self) -> Result<RunStatus> {
        let (status, report) = self.finish_with_report().await;
        if let Some(r) = report {
            crate::errln!("{}", r.line());
        }
        status
    }

    /// Waits for the engine, then for the writer thread to drain (also when the engine
    /// failed: the writer gives the run's lease back as it stops), then for the OTLP
    /// sender's last spans (at most its flush wait); returns the sender's report
    /// instead of printing it (a screen may still be up).
    pub async fn finish_with_report(
        mut self,
    ) -> (
        Result<RunStatus>,
        Option<crate::features::otel::send::Report>,
    ) {
        let otlp = self.otlp.take();
        let status = self.finish_run().await;
        let report = match otlp {
            Some(live) => tokio::task::spawn_blocking(move || live.finish())
                .await
                .ok(),
            None => None,
        };
        (status, report)
    }

    async fn finish_run(self) -> Result<RunStatus> {
        let outcome = self.handle.join.await;
        drop(self.writer);
        // The writer thread ends when the last handle is gone (the engine's were dropped).
        let t = self.writer_thread;
        let _ = tokio::task::spawn_blocking(move || t.join()).await;
        // Then for the keeper to store the run's last state.
        let k = self.keeper;
        let _ = tokio::task::spawn_blocking(move || k.join()).await;
        Ok(outcome
            .map_err(|e| eyre!("the engine crashed: {e}"))??
            .status)
    }
}
