//! Where configuration lives on disk: the per-user config directory.

use std::ffi::OsString;
use std::path::PathBuf;

/// The config file's name, in the working directory or the config directory.
pub const FILE_NAME: &str = "plexus.toml";

/// The per-user config directory: `$XDG_CONFIG_HOME/plexus`, else `~/.config/plexus`.
/// Themes are looked up in its `themes/` folder.
pub fn config_dir() -> Option<PathBuf> {
    config_dir_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")),
    )
}

pub(super) fn config_dir_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let xdg = xdg.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = xdg {
        return Some(xdg.join("plexus"));
    }
    home.filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".config").join("plexus"))
}
