//! `plexus failures [TARGET]` with a terminal: a failure tree or handoff file opens in
//! the tree browser; a run, or no target (every run), opens the Failures screen over
//! the database.

use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr};

use super::Target;
use crate::cli::launch::Globals;
use crate::cli::open::{browse_tui_on, ReplayOptions, UiSetup};
use crate::data::exit;
use crate::data::failures::{open_with, LoadOptions, Selection};
use crate::tui::tree_ui::{run::run, Browser};

/// Opens the screen for `target`; `budget` is the on-demand token budget of a tree.
pub async fn open(
    g: &Globals,
    target: Option<&str>,
    all_iterations: bool,
    budget: u64,
    setup: UiSetup,
) -> Result<ExitCode> {
    match Target::parse(target) {
        Target::Path(p) => {
            let selection = if all_iterations {
                Selection::All
            } else {
                Selection::Newest
            };
            let tree = open_with(&p, selection, LoadOptions::default())?;
            let mut b = Browser::new(tree, budget);
            if let Some(w) = setup.warning {
                b.flash = Some((w, true));
            }
            run(&mut b, &setup.theme, &setup.keys)
                .await
                .wrap_err("the terminal UI failed")?;
        }
        Target::Run(r) => {
            browse_tui_on(g, Some(&r), setup, ReplayOptions::browse(), true).await?;
        }
        Target::AllRuns => {
            browse_tui_on(g, None, setup, ReplayOptions::browse(), true).await?;
        }
    }
    Ok(ExitCode::from(exit::OK))
}
