//! The provider profile a run uses: `simulated` (built in) or a `[providers.NAME]` of
//! the configuration the command line names.

use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};

use super::globals::Globals;
use crate::base::config::Config;
use crate::data::provider::profile::{self, ProviderProfile};

/// The config `--config` names (or the usual places), loaded once.
pub fn config(globals: &Globals) -> Result<Arc<Config>> {
    match &globals.loaded {
        Some(c) => Ok(c.clone()),
        None => Config::load(globals.config.as_deref())
            .map(Arc::new)
            .map_err(|e| eyre!("{e}")),
    }
}

/// The name a profile's model is priced under in `[prices."MODEL"]`: the model it
/// sends, or `simulated` for the built-in provider.
pub fn priced_model(profile: &ProviderProfile) -> &str {
    if profile.kind == crate::data::provider::profile::ProviderKind::Simulated {
        "simulated"
    } else {
        &profile.model
    }
}

/// The price of `profile`'s model in the config's price table, when it has one.
pub fn price_of(
    globals: &Globals,
    profile: &ProviderProfile,
) -> Result<Option<crate::base::cost::Price>> {
    let table =
        crate::base::cost::PriceTable::from_config(&*config(globals)?).map_err(|e| eyre!("{e}"))?;
    Ok(table.price(priced_model(profile)))
}

/// The profile called `name` (`simulated` is built in).
pub fn profile_named(globals: &Globals, name: &str) -> Result<ProviderProfile> {
    if name == "simulated" {
        return Ok(ProviderProfile::simulated());
    }
    profile::find(&*config(globals)?, name).map_err(|e| eyre!("{e}"))
}
