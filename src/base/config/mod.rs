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
//! Every table and key the file may hold is declared once in [`schema`]; unknown keys
//! are errors. Top-level tables other than `[ui]`, `[keys]` and `[review]` (such as
//! `[providers.*]`) are kept in [`Config::other`] for the layers that read them.

mod check;
mod default_keys;
mod error;
mod json_schema;
pub mod key;
pub mod keys;
mod load;
mod numbers;
mod origin;
mod parse;
mod paths;
mod provider_check;
pub mod providers;
pub mod schema;
mod settings;

pub use key::Key;
pub use keys::{KeyOverride, KeymapOverrides};

pub use error::ConfigError;
pub use json_schema::config_schema;
pub use origin::Origin;
pub use paths::{config_dir, FILE_NAME};
pub use providers::{ProviderKind, ProviderSettings};
pub use settings::{Config, UiConfig};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod schema_tests;
