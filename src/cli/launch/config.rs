//! What a new run starts with, from the command line: the session options a command
//! carries, the engine and simulated-provider settings, the run config stored with it.

use serde::{Deserialize, Serialize};

use super::globals::Globals;
use crate::cli::args::{Command, FaultMix, SessionOpts, SimOpts};
use crate::data::provider::{FaultRates, SimConfig};
use crate::run::engine::EngineConfig;

/// Everything stored with a run so it can be resumed the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Engine settings.
    pub engine: EngineConfig,
    /// Simulated provider settings.
    pub simulated: SimConfig,
    /// Provider profile name (`simulated`, or a `[providers.NAME]` of plexus.toml); the
    /// profile itself is read from the config when the run starts or resumes, so no
    /// header or key source is stored with the run.
    #[serde(default = "simulated_name")]
    pub provider: String,
    /// The recorded run a rerun answers from (its provider is then `replay`); `None`
    /// for every other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::data::provider::replay::ReplaySource>,
}

fn simulated_name() -> String {
    "simulated".into()
}

/// A new run's config: engine and simulated settings, and the chosen provider profile.
pub fn run_config(g: &Globals, engine: EngineConfig, simulated: SimConfig) -> RunConfig {
    RunConfig {
        engine,
        simulated,
        provider: g.provider.clone().unwrap_or_else(|| "simulated".into()),
        replay: None,
    }
}

/// The engine settings `base` with the session's concurrency and seed over them.
pub fn engine_config(g: &Globals, base: EngineConfig) -> EngineConfig {
    let mut e = base;
    if let Some(c) = g.concurrency {
        e.concurrency = c.max(1);
    }
    if let Some(s) = g.seed {
        e.seed = s;
    }
    if g.max_cost.is_some() {
        e.max_cost_usd = g.max_cost;
    }
    e
}

/// The session options of `command` (provider, concurrency, UI), its seed and theme.
pub fn session_of(command: &Command) -> (SessionOpts, Option<u64>) {
    match command {
        Command::Demo { session, seed, .. } => (session.clone(), Some(*seed)),
        Command::Run(a) => (a.session.clone(), Some(a.seed)),
        Command::Resume { session, seed, .. } => (session.clone(), *seed),
        Command::Rerun {
            seed,
            concurrency,
            headless,
            theme,
            ..
        } => (
            SessionOpts {
                provider: None,
                concurrency: *concurrency,
                headless: *headless,
                theme: theme.clone(),
                ..SessionOpts::default()
            },
            *seed,
        ),
        Command::Browse { theme, .. }
        | Command::Replay { theme, .. }
        | Command::Failures { theme, .. } => (
            SessionOpts {
                theme: theme.clone(),
                ..SessionOpts::default()
            },
            None,
        ),
        Command::Debate(a) => (
            SessionOpts {
                provider: a.provider.clone(),
                headless: a.headless,
                theme: a.theme.clone(),
                otlp: a.otlp.clone(),
                ..SessionOpts::default()
            },
            None,
        ),
        Command::Serve(a) => (
            SessionOpts {
                provider: a.provider.clone(),
                headless: true,
                ..SessionOpts::default()
            },
            None,
        ),
        Command::Eval(a) => match &a.command {
            None => (
                SessionOpts {
                    provider: a.run.provider.clone(),
                    concurrency: a.run.concurrency,
                    max_cost: a.run.max_cost,
                    // On a terminal the eval runs under the Eval screen unless asked not to.
                    headless: a.run.headless || a.run.json || a.run.estimate,
                    ..SessionOpts::default()
                },
                Some(a.run.seed),
            ),
            Some(crate::cli::args::EvalCommand::Resume { session, .. })
            | Some(crate::cli::args::EvalCommand::Rerun { session, .. }) => (
                SessionOpts {
                    provider: session.provider.clone(),
                    concurrency: session.concurrency,
                    headless: true,
                    ..SessionOpts::default()
                },
                None,
            ),
            Some(_) => (SessionOpts::default(), None),
        },
        _ => (SessionOpts::default(), None),
    }
}

/// The simulated provider's settings from the command line.
pub fn sim_config(seed: u64, sim: &SimOpts, faults: FaultMix) -> SimConfig {
    SimConfig {
        seed,
        chunk_ms: sim.chunk_ms,
        first_chunk_ms: sim.first_chunk_ms,
        faults: match faults {
            FaultMix::None => FaultRates::default(),
            FaultMix::Demo => FaultRates::demo(),
        },
        ..SimConfig::default()
    }
}
