//! The look and keys the terminal UI opens with, and whether to open it at all.

use color_eyre::eyre::{eyre, Result};

use crate::base::config::{config_dir, Config};
use crate::cli::launch::Globals;
use crate::tui::app::keymap::Keymap;
use crate::tui::ui::theme::{load_or_fallback, Theme};

/// Look and keys of the UI.
pub struct UiSetup {
    /// Colours.
    pub theme: Theme,
    /// Keys.
    pub keys: Keymap,
    /// A warning to show at start (theme fell back, …).
    pub warning: Option<String>,
}

/// Whether to open the TUI: not asked to stay headless and both stdin and stdout are
/// terminals.
pub fn want_tui(globals: &Globals) -> bool {
    use std::io::IsTerminal;
    !globals.headless && std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

/// The theme and keymap for the UI from the loaded config; a broken theme falls back.
pub fn ui_setup(cli_theme: Option<&str>, cfg: &Config) -> Result<UiSetup> {
    let keys = Keymap::with_overrides(&cfg.keys).map_err(|e| eyre!("{e}"))?;
    let spec = cli_theme
        .map(str::to_string)
        .unwrap_or_else(|| cfg.ui.theme.clone());
    let (theme, warning) = load_or_fallback(&spec, config_dir().as_deref());
    if let Some(w) = &warning {
        tracing::warn!("{w}");
    }
    Ok(UiSetup {
        theme,
        keys,
        warning,
    })
}
