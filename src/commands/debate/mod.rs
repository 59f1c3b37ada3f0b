//! `plexus debate "QUESTION"`: a debate session on the terminal UI, or headless with its
//! progress on stderr and the report on stdout, or as the front end's event stream
//! (`--events sse`).

pub mod rerun;
pub mod serve;
pub mod start;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::launch::{Finished, Started};
use super::tui::UiSetup;
use super::Globals;
use crate::cli::{DebateArgs, DebateOpts, EventsFormat, SimOpts};
use crate::debate::embed_http::HttpEmbedder;
use crate::debate::similarity::PositionComparer;
use crate::debate::spec::{DebateSpec, EmbeddingSource, Thresholds};
use crate::engine::Control;
use crate::event::{EngineEvent, Envelope};
use crate::exit;
use crate::provider::{Provider, ProviderProfile, SimConfig};
use crate::state::debate::DebateState;

pub use start::{now_data, start_debate};

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

/// The comparer of a session's positions: the profile's embeddings endpoint when it
/// names an `embedding_model`, else the built-in embedding.
pub fn comparer_for(profile: &ProviderProfile) -> Result<(Arc<PositionComparer>, EmbeddingSource)> {
    match HttpEmbedder::for_profile(profile)
        .map_err(|e| eyre!("[providers.{}]: {e}", profile.name))?
    {
        Some(e) => {
            let source = EmbeddingSource::Endpoint {
                profile: profile.name.clone(),
                base_url: e.url().trim_end_matches("/embeddings").to_string(),
                model: profile.embedding_model.clone().unwrap_or_default(),
            };
            Ok((Arc::new(PositionComparer::new(Arc::new(e))), source))
        }
        None => Ok((
            Arc::new(PositionComparer::builtin()),
            EmbeddingSource::Builtin,
        )),
    }
}

/// The comparer a recorded session used, again (the profile of an endpoint must still
/// be configured).
pub fn comparer_again(g: &Globals, source: &EmbeddingSource) -> Result<Arc<PositionComparer>> {
    match source {
        EmbeddingSource::Builtin => Ok(Arc::new(PositionComparer::builtin())),
        EmbeddingSource::Endpoint {
            profile,
            base_url,
            model,
        } => {
            let p = super::providers::profile_named(g, profile).wrap_err_with(|| {
                format!(
                    "the session compared positions through the embeddings of profile `{profile}`"
                )
            })?;
            let (comparer, now) = comparer_for(&p)?;
            if now != *source {
                return Err(eyre!(
                    "the session compared positions with model `{model}` at {base_url} (profile `{profile}`), which the profile no longer names; a rerun would compare differently"
                ));
            }
            Ok(comparer)
        }
    }
}

/// The profile a session runs on (`simulated` when none is named) and its provider.
pub fn provider_for(
    g: &Globals,
    name: Option<&str>,
    sim: &SimOpts,
) -> Result<(ProviderProfile, Arc<dyn Provider>)> {
    let profile = super::providers::profile_named(g, name.unwrap_or("simulated"))?;
    let sim = SimConfig {
        chunk_ms: sim.chunk_ms,
        first_chunk_ms: sim.first_chunk_ms,
        min_chunks: 4,
        ..SimConfig::default()
    };
    let provider = crate::provider::build(&profile, &sim).map_err(|e| eyre!("{e}"))?;
    Ok((profile, provider))
}

/// Runs `plexus debate`.
pub async fn debate(g: &Globals, args: DebateArgs, tui: Option<UiSetup>) -> Result<ExitCode> {
    let mut spec = spec_of(&args.question, &args.debate)?;
    let (profile, provider) = provider_for(g, args.provider.as_deref(), &args.sim)?;
    let (comparer, embedding) = comparer_for(&profile)?;
    spec.embedding = embedding;
    let now = now_data(&spec.timezone).await?;
    let started = start_debate(&g.db, spec, provider, comparer, now)?;
    let sse = args.events == Some(EventsFormat::Sse);
    let finished = match tui.filter(|_| !sse) {
        Some(setup) => {
            let f = super::tui::run_debate_tui(g, started, setup).await?;
            crate::out::stdout_text(&f.summary);
            f
        }
        None => headless(g, started, sse).await?,
    };
    Ok(ExitCode::from(exit::for_status(finished.status)))
}

/// Prints the report of a finished session, and its status line.
pub fn report_text(state: &DebateState) -> String {
    let mut out = String::new();
    match &state.report {
        Some(r) if !r.content.is_empty() => {
            out.push_str(&r.content);
            out.push('\n');
        }
        // Why there is none: the session failed or was stopped.
        _ => match &state.finished {
            Some(f) => out.push_str(&format!("(no report: {})\n", f.reason)),
            None => out.push_str("(no report)\n"),
        },
    }
    let trend: Vec<String> = state
        .consensus_trend
        .iter()
        .map(|x| format!("{x:.2}"))
        .collect();
    out.push_str(&format!(
        "\nsession {}: {} after {} round(s); consensus {}\n",
        state.run_id,
        state
            .status
            .as_ref()
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|| "unknown".into()),
        state.current_round,
        if trend.is_empty() {
            "not measured".into()
        } else {
            trend.join(" → ")
        }
    ));
    out
}

/// Runs a started session without the UI: progress on stderr; on stdout the report, or
/// the event stream when `sse`.
pub async fn headless(g: &Globals, mut started: Started, sse: bool) -> Result<Finished> {
    let run_id = started.run_id.clone();
    crate::errln!("debate {run_id}: database {}", g.db.display());
    let mut events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let printer = tokio::spawn(async move {
        let mut state = DebateState::new();
        while let Some(batch) = events.recv().await {
            for env in batch {
                if sse {
                    for item in crate::debate::sse::items(&env) {
                        crate::out::stdout_raw(&crate::debate::sse::frame(&item));
                    }
                }
                if let Some(line) = crate::debate::progress::line(&env.event) {
                    crate::errln!("{line}");
                }
                state.apply(&env);
            }
        }
        state
    });
    let control = started.handle.control.clone();
    let ctrl_c = tokio::spawn(async move {
        let mut signals = crate::signals::stop_signals();
        if let Some(name) = signals.recv().await {
            crate::errln!("{name}: stopping the session");
            let _ = control.send(Control::Cancel(format!("{name} received")));
        }
        if let Some(name) = signals.recv().await {
            crate::errln!("{name}: exiting at once");
            std::process::exit(i32::from(exit::RUN_FAILED));
        }
    });
    let status = started
        .finish()
        .await
        .wrap_err_with(|| format!("debate {run_id} stopped before its end"))?;
    ctrl_c.abort();
    let state = printer
        .await
        .map_err(|e| eyre!("progress printer failed: {e}"))?;
    if sse {
        crate::out::stdout_raw(&crate::debate::sse::done());
    } else {
        crate::out::stdout_text(&report_text(&state));
    }
    Ok(Finished {
        run_id,
        status,
        summary: String::new(),
    })
}

/// The debate lines of `plexus show`: the question, how it ended, each round's
/// consensus and decision.
pub fn summary_lines(d: &DebateState) -> Vec<String> {
    let mut out = vec![
        format!(
            "question  {}",
            d.spec.as_ref().map(|s| s.question.as_str()).unwrap_or("?")
        ),
        format!(
            "session   {} after {} round(s)",
            d.status
                .as_ref()
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|| "unknown".into()),
            d.current_round
        ),
    ];
    if let Some(f) = &d.finished {
        out.push(format!("ended     {}", f.reason));
    }
    for r in &d.rounds {
        let consensus = r
            .comparison
            .as_ref()
            .map(|c| format!("{:.2} ({})", c.mean_similarity, c.method))
            .unwrap_or_else(|| "not compared".into());
        let decision = r
            .decision
            .as_ref()
            .map(|x| format!("{}: {}", x.action, x.reason))
            .unwrap_or_else(|| "no decision".into());
        out.push(format!("round {}   {consensus} → {decision}", r.round));
    }
    out
}

/// Each agent's model calls and the tokens of their replies, from a session's
/// `debate_reply` events (agents by name).
pub fn tokens_per_agent(events: &[Envelope]) -> BTreeMap<String, (u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for e in events {
        if let EngineEvent::DebateReply(r) = &e.event {
            let t = out.entry(r.agent.as_str().to_string()).or_default();
            t.0 += 1;
            t.1 += r.output_tokens;
        }
    }
    out
}

/// Whether a run is a debate session (its plan id).
pub fn is_debate(plan_id: &str) -> bool {
    plan_id == "debate"
}
