//! The comparer of a session's positions: the built-in embedding, or a profile's
//! embeddings endpoint.

use crate::features::debate::moderation::HttpModerator;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result, WrapErr};

use crate::base::protocol::debate_spec::EmbeddingSource;
use crate::cli::launch::profile::profile_named;
use crate::cli::launch::Globals;
use crate::data::provider::ProviderProfile;
use crate::features::debate::embed_http::HttpEmbedder;
use crate::features::debate::similarity::PositionComparer;

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
            let p = profile_named(g, profile).wrap_err_with(|| {
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

/// The moderation endpoint of `profile` for the content check, when it names one.
pub fn moderator_for(profile: &ProviderProfile) -> Result<Option<Arc<HttpModerator>>> {
    HttpModerator::for_profile(profile)
        .map(|m| m.map(Arc::new))
        .map_err(|e| eyre!("[providers.{}]: {e}", profile.name))
}

/// The moderation endpoint a recorded session used, again (its profile must still be
/// configured); none when it used the built-in check alone.
pub fn moderator_again(g: &Globals, profile: Option<&str>) -> Result<Option<Arc<HttpModerator>>> {
    match profile {
        None => Ok(None),
        Some(name) => {
            let p = profile_named(g, name).wrap_err_with(|| {
                format!("the session checked its outputs with the moderation endpoint of [providers.{name}]")
            })?;
            moderator_for(&p)
        }
    }
}
