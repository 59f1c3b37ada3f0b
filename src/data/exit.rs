//! Exit codes, one table for every command (`diff` alone exits like diff(1)), and how
//! an error is put into words (a database error always names the file). Which code a
//! failed command's error exits with is decided by the binary, which knows every layer's
//! errors.

use std::path::Path;

use crate::data::store::StoreError;
use crate::model::event::RunStatus;

/// The command did what was asked; a run succeeded or ended partial.
pub const OK: u8 = 0;
/// Any other error: database, configuration, provider setup, I/O.
pub const ERROR: u8 = 1;
/// Invalid input: a plan that does not validate (missing, not JSON, not UTF-8, too
/// deep, invalid content) or a command line clap refuses.
pub const INVALID: u8 = 2;
/// A run that did not succeed: failed, cancelled or interrupted (also by a signal).
pub const RUN_FAILED: u8 = 3;
/// A run that stopped with decisions waiting for a person and nothing else wrong:
/// each failed task waits for review (`plexus review RUN TASK --accept` or `--reject`,
/// then `plexus resume RUN`).
pub const REVIEW_WAITING: u8 = 6;
/// A run whose calls cost its whole money budget (`--max-cost`): no new call started and
/// the rest of the run waits; `plexus resume RUN --max-cost MORE` continues it.
pub const BUDGET_REACHED: u8 = 7;
/// Refused: another live process executes the run.
pub const OWNED: u8 = 4;
/// A crash (a bug): a panic, in the main thread or in a run's worker (the run is left
/// interrupted, resumable); the one line printed names the report.
pub const CRASH: u8 = 101;
/// A rerun of an unchanged plan and config differs from its recording (the report
/// names each task's first difference).
pub const DIVERGED: u8 = 5;

// `plexus diff` exits like diff(1), the one exception to the table above.

/// `diff`: the runs have no difference.
pub const SAME: u8 = 0;
/// `diff`: the runs differ.
pub const DIFFERENT: u8 = 1;
/// `diff`: the runs could not be compared (a missing run, a database error).
pub const DIFF_TROUBLE: u8 = 2;

/// The exit code of a run that ended with `status`.
pub fn for_status(status: RunStatus) -> u8 {
    if status == RunStatus::AwaitingReview {
        REVIEW_WAITING
    } else if status == RunStatus::BudgetReached {
        BUDGET_REACHED
    } else if status.is_failure() {
        RUN_FAILED
    } else {
        OK
    }
}

/// Options that do not make sense together or out of range, found after parsing (exit
/// [`INVALID`], like a command line clap refuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidOptions(pub String);

/// A command that acts on a run which has already ended (`resume` of a finished run):
/// it exits with the code of the run's own outcome, so a script that resumes until the
/// run is done reads the run's result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RunEnded {
    /// How the run ended.
    pub status: RunStatus,
    /// What to tell the person.
    pub message: String,
}

/// How an error is kept: its chain of causes and nothing more. Every error plexus
/// reports is put into words by [`describe`]; no backtrace is ever shown for one, so
/// none is captured (with `RUST_BACKTRACE` set, capturing and resolving one took about a
/// second per failed command in a debug build).
struct PlainErrors;

impl color_eyre::eyre::EyreHandler for PlainErrors {
    fn debug(
        &self,
        error: &(dyn std::error::Error + 'static),
        f: &mut std::fmt::Formatter<'_>,
    ) -> std::fmt::Result {
        write!(f, "{error}")?;
        let mut cause = error.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// Makes every error report plain (see [`PlainErrors`]); call once, first thing in
/// `main`. A second call changes nothing.
pub fn install_plain_errors() {
    let _ = color_eyre::eyre::set_hook(Box::new(|_| Box::new(PlainErrors)));
}

/// The error as one message; a database error names `db` when it does not already.
pub fn describe(e: &color_eyre::Report, db: &Path) -> String {
    // The chain of causes, each said once: a cause whose words are already there (a
    // store error quoting the SQLite error it wraps) is left out, and nothing below a
    // SQLite error (its code, in SQLite's own words again) is added.
    let mut text = String::new();
    for cause in e.chain() {
        let words = cause.to_string();
        if !text.contains(&words) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&words);
        }
        if cause.downcast_ref::<rusqlite::Error>().is_some() {
            break;
        }
    }
    let from_db = e.chain().any(|c| {
        c.downcast_ref::<StoreError>().is_some() || c.downcast_ref::<rusqlite::Error>().is_some()
    });
    let file = db.display().to_string();
    let io_failure = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::SystemIoFailure
        )
    });
    if io_failure && wal_replaced(db) {
        text.push_str(&format!(
            " ({file}-wal, the database's write-ahead log, is empty beside its index {file}-shm: it was deleted or replaced while a plexus process was writing the database; that process keeps writing the old one, and readers open the file again once it has ended)"
        ));
    }
    if from_db && !text.contains(&file) {
        format!("database {file}: {text}")
    } else {
        text
    }
}

/// Whether the write-ahead log of `db` looks deleted under a running writer: the log
/// empty (or gone) while its shared-memory index says otherwise.
fn wal_replaced(db: &Path) -> bool {
    let side = |ext: &str| {
        let mut p = db.as_os_str().to_owned();
        p.push(ext);
        std::fs::metadata(std::path::PathBuf::from(p)).ok()
    };
    let shm = side("-shm").is_some_and(|m| m.len() > 0);
    let wal_empty = side("-wal").is_none_or(|m| m.len() == 0);
    shm && wal_empty
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_error_report_is_its_chain_of_causes_without_a_backtrace() {
        use color_eyre::eyre::EyreHandler;
        #[derive(Debug, thiserror::Error)]
        #[error("reading plexus.toml")]
        struct Outer(#[source] std::io::Error);
        struct Shown<'e>(&'e (dyn std::error::Error + 'static));
        impl std::fmt::Debug for Shown<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                PlainErrors.debug(self.0, f)
            }
        }
        let e = Outer(std::io::Error::other("permission denied"));
        assert_eq!(
            format!("{:?}", Shown(&e)),
            "reading plexus.toml: permission denied"
        );
    }

    #[test]
    fn a_sqlite_error_is_said_once_with_the_file() {
        let sqlite = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(11),
            Some("malformed database schema (runs) - near \"+\": syntax error".into()),
        );
        let report = color_eyre::Report::new(StoreError::Sqlite(sqlite));
        let text = describe(&report, Path::new("data/x.db"));
        assert_eq!(
            text,
            "database data/x.db: database error: malformed database schema (runs) - near \"+\": syntax error"
        );
        assert_eq!(text.matches("malformed").count(), 1, "{text}");
    }

    #[test]
    fn causes_are_chained_once_each() {
        let report = color_eyre::Report::new(StoreError::WriterGone(
            "x.db: database error: disk I/O error".into(),
        ))
        .wrap_err("run R stopped before its end");
        assert_eq!(
            describe(&report, Path::new("x.db")),
            "run R stopped before its end: the database writer stopped: x.db: database error: disk I/O error"
        );
    }
}
