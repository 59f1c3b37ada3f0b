//! The provider profile a run uses: `simulated` (built in) or a `[providers.NAME]` of
//! the configuration the command line names.

use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};

use super::globals::Globals;
use crate::config::Config;
use crate::provider::profile::{self, ProviderProfile};

/// The config `--config` names (or the usual places), loaded once.
pub fn config(globals: &Globals) -> Result<Arc<Config>> {
    match &globals.loaded {
        Some(c) => Ok(c.clone()),
        None => Config::load(globals.config.as_deref())
            .map(Arc::new)
            .map_err(|e| eyre!("{e}")),
    }
}

/// The profile called `name` (`simulated` is built in).
pub fn profile_named(globals: &Globals, name: &str) -> Result<ProviderProfile> {
    if name == "simulated" {
        return Ok(ProviderProfile::simulated());
    }
    profile::find(&*config(globals)?, name).map_err(|e| eyre!("{e}"))
}
