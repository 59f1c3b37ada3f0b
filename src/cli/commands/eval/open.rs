//! `plexus eval open [EVAL]`: the Eval screen over the database. Marks made with `r`
//! are written beside the failure tree; on quit their rerun command is printed.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result, WrapErr};

use crate::cli::open::UiSetup;
use crate::data::store::Store;
use crate::features::eval::read::find_eval;
use crate::tui::eval_ui::marks::marks_file;
use crate::tui::eval_ui::run::run;
use crate::tui::eval_ui::{EvalModel, EvalScreen};

/// Opens eval `eval` of database `db` on the Eval screen (`tui`: the terminal's theme
/// and keys; `None` without a terminal).
pub async fn open(db: &Path, eval: &str, tui: Option<UiSetup>) -> Result<ExitCode> {
    let Some(setup) = tui else {
        return Err(eyre!(
            "the Eval screen needs a terminal; `plexus eval show {eval} --json` prints the results"
        ));
    };
    let store = Store::open(db)?;
    let row = find_eval(store.conn(), eval)?;
    let model = EvalModel::load(store.conn(), row)?;
    let mut screen = EvalScreen::new(model);
    // The marks a past session left in the marks file are taken back.
    let marks = crate::features::eval::marks::read_marks(&marks_file(&screen.model));
    screen.restore_marks(marks);
    if let Some(w) = setup.warning {
        screen.flash = Some((w, true));
    }
    drop(store);
    run(&mut screen, db, &setup.theme, &setup.keys, &mut |_| true)
        .await
        .wrap_err("the terminal UI failed")?;
    if !screen.marked.is_empty() {
        crate::outln!(
            "{} sample(s) marked for rerun: plexus eval rerun {} --samples {}",
            screen.marked.len(),
            screen.model.row.eval_id,
            marks_file(&screen.model).display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
