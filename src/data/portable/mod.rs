//! Portable runs: one run of a database written out as a file of JSON lines (header,
//! then one record per row: the run and its plan, tasks, system prompts, invocations
//! with request and response, atoms, quality records, relations, the papers and library
//! assets they cite, and the event log), and loaded back into any database.
//!
//! [`format`] defines the file, [`export`] writes it from a consistent snapshot in
//! bounded memory, [`import`] loads it in one write transaction (all or nothing).

pub mod export;
pub mod format;
pub mod import;
mod lines;
pub mod records;

use crate::data::store::StoreError;

pub use export::export_run;
pub use format::{Counts, Header, FORMAT, VERSION};
pub use import::{import_run, ImportReport, Rename};
pub use lines::MAX_LINE;

/// Why an export or an import failed.
#[derive(Debug, thiserror::Error)]
pub enum PortableError {
    /// The database failed (or has no such run).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The export could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[source] std::io::Error),
    /// The file to import could not be read.
    #[error("{file}: cannot read it: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file to import is not a valid export: what is wrong, and where.
    #[error("{file}:{line}: {message}")]
    Input {
        /// The file.
        file: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The target database already has a run with the file's run id.
    #[error("the database already has a run `{run_id}`; import this one under another id with `--rename NEW_ID` (or `--rename-auto`)")]
    Duplicate {
        /// The id taken.
        run_id: String,
    },
    /// A run id given with `--rename` that cannot be used.
    #[error("--rename {id}: {why}")]
    BadRename {
        /// The id given.
        id: String,
        /// Why not.
        why: String,
    },
    /// The export's own reads disagreed (a bug: they share one snapshot).
    #[error("inconsistent read while exporting: {0}")]
    Snapshot(String),
}

impl From<rusqlite::Error> for PortableError {
    fn from(e: rusqlite::Error) -> PortableError {
        PortableError::Store(e.into())
    }
}

impl PortableError {
    /// Whether the error is about the input file rather than the database or the system.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, PortableError::Input { .. })
    }
}

/// Why `id` cannot name a run, if it cannot: it must be non-empty, at most 200
/// characters, not `latest` (which names the newest run), without spaces around it and
/// without control characters or bidi overrides.
pub fn check_run_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("a run id may not be empty".into());
    }
    if id.chars().count() > 200 {
        return Err("a run id has at most 200 characters".into());
    }
    if id == "latest" {
        return Err("`latest` names the newest run and cannot be a run id".into());
    }
    if id.trim() != id {
        return Err("a run id may not start or end with white space".into());
    }
    if let Some(bad) = crate::base::text::sanitize::invisible_in(id) {
        return Err(format!(
            "contains the invisible character U+{:04X}",
            bad as u32
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_checked() {
        assert!(check_run_id("R20261126-163548-81a8").is_ok());
        assert!(check_run_id("R-copy.2").is_ok());
        for bad in [
            "",
            "latest",
            " R",
            "R\u{1b}[2J",
            "R\u{202e}x",
            &"x".repeat(201),
        ] {
            assert!(check_run_id(bad).is_err(), "{bad:?}");
        }
    }
}
