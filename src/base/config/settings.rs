//! The configuration's values: what `plexus.toml` says, as plain data.

use std::path::PathBuf;

use super::keys::KeymapOverrides;

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// `[ui]`.
    pub ui: UiConfig,
    /// `[keys]`, already checked: the keymap built from a loaded config cannot fail.
    pub keys: KeymapOverrides,
    /// `[review] reviewer`: the name review decisions are recorded under (else the
    /// login name).
    pub reviewer: Option<String>,
    /// The file it came from; `None` for the defaults.
    pub path: Option<PathBuf>,
    /// Top-level tables this module does not own (`[providers.*]`, …), verbatim.
    pub other: toml::Table,
}

impl Config {
    /// The file as errors name it: its path, or `the config` for the defaults.
    pub fn file_label(&self) -> String {
        self.path
            .as_ref()
            .map_or("the config".to_string(), |p| p.display().to_string())
    }
}

/// The `[ui]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiConfig {
    /// Theme: a built-in name, a name in `<config dir>/themes/`, or a path.
    pub theme: String,
}

/// The theme unless `[ui] theme` says otherwise.
pub(super) const DEFAULT_THEME: &str = "dark";

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            theme: DEFAULT_THEME.to_string(),
        }
    }
}
