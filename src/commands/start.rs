//! What a new run starts with, from the command line: the session options a command
//! carries, the engine and simulated-provider settings, the run config stored with it.

use crate::cli::{Command, FaultMix, SessionOpts, SimOpts};
use crate::engine::EngineConfig;
use crate::provider::{FaultRates, SimConfig};

use super::{Globals, RunConfig};

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
    e
}

/// The session options of `command` (provider, concurrency, UI), its seed and theme.
pub fn session_of(command: &Command) -> (SessionOpts, Option<u64>) {
    match command {
        Command::Demo { session, seed, .. } | Command::Run { session, seed, .. } => {
            (session.clone(), Some(*seed))
        }
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
