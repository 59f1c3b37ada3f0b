//! `plexus validate PLAN` and `plexus check [--upgrade]`: a plan file and a database
//! file checked without running anything.

use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::data::exit;
use crate::data::store::Store;
use crate::model::plan::load_plan_file;

/// `plexus validate PLAN`.
pub fn validate(plan: &std::path::Path) -> Result<ExitCode> {
    match load_plan_file(plan) {
        Ok(p) => {
            let layers = p.layers();
            crate::outln!(
                "{}: valid — plan {} ({}), {} tasks in {} layers, agents: {}",
                plan.display(),
                p.plan_id,
                p.execution_mode.as_str(),
                p.tasks.len(),
                layers.len(),
                p.agents.keys().cloned().collect::<Vec<_>>().join(", ")
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            crate::errprint!("{e}");
            Ok(ExitCode::from(exit::INVALID))
        }
    }
}

/// `plexus check [--upgrade]`.
pub fn check(db: &std::path::Path, upgrade: bool) -> Result<ExitCode> {
    if upgrade {
        if !db.is_file() {
            return Err(crate::data::store::StoreError::Missing(db.to_path_buf()).into());
        }
        drop(crate::data::store::open_connection(db)?);
    }
    let store = match Store::open(db) {
        Ok(s) => s,
        // An empty file (one being created, or never written) is not damage.
        Err(crate::data::store::StoreError::NotPlexus { empty: true, .. }) => {
            crate::outln!(
                "{}: empty, nothing to check (no plexus has written it yet, or one is creating it now)",
                db.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(e.into()),
    };
    let r = store.integrity_check()?;
    crate::outln!("{}: integrity_check {r}", db.display());
    Ok(if r == "ok" {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
