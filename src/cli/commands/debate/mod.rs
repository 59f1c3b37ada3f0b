//! `plexus debate "QUESTION"`: a debate session on the terminal UI, or headless with its
//! progress on stderr and the report on stdout, or as the front end's event stream
//! (`--events sse`).

pub mod options;
pub mod serve;

use std::process::ExitCode;

use color_eyre::eyre::Result;

use self::options::{provider_for, spec_of};
use crate::cli::args::{DebateArgs, EventsFormat};
use crate::cli::launch::debate::{comparer_for, headless, moderator_for, now_data, start_debate};
use crate::cli::launch::Globals;
use crate::cli::open::{run_debate_tui, UiSetup};
use crate::data::exit;

/// Runs `plexus debate`.
pub async fn debate(g: &Globals, args: DebateArgs, tui: Option<UiSetup>) -> Result<ExitCode> {
    let (profile, provider) = provider_for(g, args.provider.as_deref(), &args.sim)?;
    let mut spec = spec_of(&args.question, &args.debate, Some(&profile))?;
    let (comparer, embedding) = comparer_for(&profile)?;
    spec.embedding = embedding;
    let moderator = moderator_for(&profile)?;
    spec.moderation = moderator.as_ref().map(|_| profile.name.clone());
    let now = now_data(&spec.timezone).await?;
    let started = start_debate(&g.db, spec, provider, comparer, moderator, now)?.with_otlp(g);
    let sse = args.events == Some(EventsFormat::Sse);
    let finished = match tui.filter(|_| !sse) {
        Some(setup) => {
            let f = run_debate_tui(g, started, setup).await?;
            crate::base::out::stdout_text(&f.summary);
            f
        }
        None => headless(g, started, sse).await?,
    };
    Ok(ExitCode::from(exit::for_status(finished.status)))
}
