//! What a debate session runs with, from the command line: its settings (checked) and
//! the provider profile it runs on. Shared by `plexus debate` and `plexus serve`.

use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};

use crate::base::protocol::debate_spec::{DebateSpec, Thresholds};
use crate::cli::args::{DebateOpts, SimOpts};
use crate::cli::launch::profile::profile_named;
use crate::cli::launch::Globals;
use crate::data::provider::{Provider, ProviderProfile, SimConfig};

/// Seconds an agent has for one answer when neither the command line nor the profile
/// says (a local model on a CPU needs minutes, not the 60 s a hosted one does).
pub const DEFAULT_AGENT_TIMEOUT_S: f64 = 300.0;

/// The session settings from the command line (checked), on `profile` (whose `timeout_s`
/// is an agent's time when the command line gives none).
pub fn spec_of(
    question: &str,
    o: &DebateOpts,
    profile: Option<&ProviderProfile>,
) -> Result<DebateSpec> {
    let mut spec = DebateSpec::new(question.trim());
    spec.max_rounds = o.max_rounds;
    spec.thresholds = Thresholds {
        converge_above: o.converge_above,
        continue_above: o.continue_above,
        stubborn_self_similarity: o.stubborn_above,
        ..Thresholds::default()
    };
    let invalid = |m: String| eyre!(crate::data::exit::InvalidOptions(m));
    let timeout = o
        .agent_timeout
        .or_else(|| profile.and_then(|p| p.timeout_s))
        .unwrap_or(DEFAULT_AGENT_TIMEOUT_S);
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
        return Err(invalid(format!(
            "--agent-timeout must be a number of seconds above 0 and at most 86400 (got {timeout})"
        )));
    }
    spec.agent_timeout_ms = (timeout * 1000.0).round().max(1.0) as u64;
    spec.retry_delay_div = o.retry_delay_div;
    spec.timezone = o.timezone.clone();
    spec.validate().map_err(|e| {
        // The settings' names as the command line spells them.
        let mut m = e;
        for (field, flag) in [
            ("converge_above", "--converge-above"),
            ("continue_above", "--continue-above"),
            ("stubborn_self_similarity", "--stubborn-above"),
            ("max rounds", "--max-rounds"),
            ("agent timeout", "--agent-timeout"),
        ] {
            m = m.replace(field, flag);
        }
        if m.contains("IANA time zone") {
            m = format!("--timezone: {m}");
        }
        invalid(m)
    })?;
    Ok(spec)
}

/// The profile a session runs on (`simulated` when none is named) and its provider.
pub fn provider_for(
    g: &Globals,
    name: Option<&str>,
    sim: &SimOpts,
) -> Result<(ProviderProfile, Arc<dyn Provider>)> {
    let profile = profile_named(g, name.unwrap_or("simulated"))?;
    let sim = SimConfig {
        chunk_ms: sim.chunk_ms,
        first_chunk_ms: sim.first_chunk_ms,
        min_chunks: 4,
        ..SimConfig::default()
    };
    let provider = crate::data::provider::build(&profile, &sim).map_err(|e| eyre!("{e}"))?;
    Ok((profile, provider))
}
