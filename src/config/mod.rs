//! Layered configuration (defaults → `plexus.toml` → flags) and the key overrides.
//!
//! ```toml
//! [ui]
//! theme = "dark"                # a built-in, a name in <config dir>/themes/, or a path
//!
//! [keys]                        # action = key or [keys]; replaces the action's defaults
//! quit = ["x", "ctrl-q"]
//! help = "f1"
//! ```
//!
//! Unknown keys inside `[ui]` and `[keys]` are errors; other top-level tables (such as
//! `[providers.*]`) are kept in [`Config::other`] for the layers that read them.

mod error;
pub mod key;
pub mod keys;
mod load;
mod numbers;
mod origin;
mod parse;
mod paths;
mod provider_check;
pub mod providers;
mod settings;

pub use key::Key;
pub use keys::{KeyOverride, KeymapOverrides};

pub use error::ConfigError;
pub use origin::Origin;
pub use paths::{config_dir, FILE_NAME};
pub use providers::{ProviderKind, ProviderSettings};
pub use settings::{Config, UiConfig};

#[cfg(test)]
mod tests;
