//! What a debate session runs with, from the command line: its settings (checked) and
//! the provider profile it runs on. Shared by `plexus debate` and `plexus serve`.

use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};

use crate::cli::{DebateOpts, SimOpts};
use crate::launch::profile::profile_named;
use crate::launch::Globals;
use crate::protocol::debate_spec::{DebateSpec, Thresholds};
use crate::provider::{Provider, ProviderProfile, SimConfig};

/// The session settings from the command line (checked).
pub fn spec_of(question: &str, o: &DebateOpts) -> Result<DebateSpec> {
    let mut spec = DebateSpec::new(question.trim());
    spec.max_rounds = o.max_rounds;
    spec.thresholds = Thresholds {
        converge_above: o.converge_above,
        continue_above: o.continue_above,
        stubborn_self_similarity: o.stubborn_above,
        ..Thresholds::default()
    };
    let invalid = |m: String| eyre!(crate::exit::InvalidOptions(m));
    if !(o.agent_timeout.is_finite() && o.agent_timeout > 0.0 && o.agent_timeout <= 3600.0) {
        return Err(invalid(format!(
            "--agent-timeout must be a number of seconds above 0 and at most 3600 (got {})",
            o.agent_timeout
        )));
    }
    spec.agent_timeout_ms = (o.agent_timeout * 1000.0).round().max(1.0) as u64;
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
    let provider = crate::provider::build(&profile, &sim).map_err(|e| eyre!("{e}"))?;
    Ok((profile, provider))
}
