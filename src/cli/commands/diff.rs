//! `plexus diff RUN_A RUN_B [--json] [--timing]`: the differences between two runs of
//! the database, task by task (rules in [`crate::data::diff`]).
//!
//! Exit status like diff(1), the one exception to the table in [`crate::data::exit`]:
//! [`exit::SAME`] with the line `no differences`, [`exit::DIFFERENT`] when the runs
//! differ, [`exit::DIFF_TROUBLE`] when they cannot be compared (no database, a run
//! that is not there, a prefix that matches several runs, a database error).

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr};

use crate::data::diff::{compare, load, render, DiffOptions, TimingTolerance};
use crate::data::exit;
use crate::data::store::Store;

/// Compares runs `a` and `b` of the database at `db` and prints the result; trouble is
/// printed on standard error. Returns the exit status to end with.
pub fn run_diff(db: &Path, a: &str, b: &str, json: bool, timing: bool) -> ExitCode {
    match diff(db, a, b, json, timing) {
        Ok(same) => ExitCode::from(if same { exit::SAME } else { exit::DIFFERENT }),
        Err(e) => {
            crate::errln!("error: {}", exit::describe(&e, db));
            ExitCode::from(exit::DIFF_TROUBLE)
        }
    }
}

/// Loads, compares and prints; `Ok(true)` when the runs have no difference.
fn diff(db: &Path, a: &str, b: &str, json: bool, timing: bool) -> Result<bool> {
    let store = Store::open(db)?;
    let sa = store.run(a).wrap_err_with(|| format!("run A `{a}`"))?;
    let sb = store.run(b).wrap_err_with(|| format!("run B `{b}`"))?;
    match (
        crate::features::debate::is_debate(&sa.plan_id),
        crate::features::debate::is_debate(&sb.plan_id),
    ) {
        (true, true) => {
            let fold = |id: &str| -> Result<crate::model::state::debate::DebateState> {
                let events = crate::features::debate::replay::load_events(&store, id)?;
                Ok(crate::model::state::debate::DebateState::from_events(
                    &events,
                ))
            };
            let d = crate::features::debate::diff::compare(&fold(&sa.run_id)?, &fold(&sb.run_id)?);
            if json {
                crate::rawln!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                for line in crate::features::debate::diff::render(&d) {
                    crate::outln!("{line}");
                }
            }
            return Ok(d.same);
        }
        (false, false) => {}
        _ => {
            return Err(color_eyre::eyre::eyre!(
                "{} is a debate session and {} is not: a debate compares only with another debate",
                if crate::features::debate::is_debate(&sa.plan_id) {
                    &sa.run_id
                } else {
                    &sb.run_id
                },
                if crate::features::debate::is_debate(&sa.plan_id) {
                    &sb.run_id
                } else {
                    &sa.run_id
                },
            ))
        }
    }
    let run_a = load(&store, a).wrap_err_with(|| format!("run A `{a}`"))?;
    let run_b = load(&store, b).wrap_err_with(|| format!("run B `{b}`"))?;
    let options = DiffOptions {
        timing: timing.then(TimingTolerance::default),
    };
    let d = compare(&run_a, &run_b, &options);
    if json {
        crate::rawln!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        for line in render::render(&d) {
            crate::outln!("{line}");
        }
    }
    Ok(d.same)
}
