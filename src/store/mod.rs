//! The one SQLite file: schema, the batching writer thread, and read queries.

pub mod schema;

/// Errors of the store layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The file was written by a newer plexus.
    #[error("database schema version {found} is newer than this plexus supports ({supported}); upgrade plexus")]
    TooNew {
        /// Version in the file.
        found: i64,
        /// Version this build knows.
        supported: i64,
    },
    /// Stored JSON did not decode.
    #[error("corrupt stored JSON in {what}: {source}")]
    Json {
        /// What was being decoded.
        what: String,
        /// Why.
        source: serde_json::Error,
    },
    /// The writer thread is gone.
    #[error("the database writer stopped: {0}")]
    WriterGone(String),
    /// A run id that is not in the database.
    #[error("no run `{0}` in this database")]
    NoSuchRun(String),
    /// A run logged more events than an event id can number.
    #[error("run `{run_id}` reached the log's limit of {limit} events")]
    LogFull {
        /// The run.
        run_id: String,
        /// Most events of one run.
        limit: u64,
    },
}

mod log_insert;
mod ops;
pub mod read;
pub mod writer;

use std::path::Path;

use rusqlite::Connection;

pub use read::{EventRow, InvocationRow, RunSummary, Store, TaskRow};
pub use writer::{
    spawn_writer, AtomRow, InvocationRecord, PaperRow, RunRow, WriteOp, Writer, WriterStats,
};

/// Opens (creating if needed) the database at `path` with plexus's settings — WAL,
/// `synchronous = FULL` (a committed batch survives power loss), foreign keys on — and
/// migrates it to the current schema.
pub fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                    Some(format!("cannot create {}: {e}", dir.display())),
                ))
            })?;
        }
    }
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // Larger pages waste less room around invocation rows (requests and responses are
    // a few KB each); only takes effect when the file is created.
    conn.pragma_update(None, "page_size", 16384)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    schema::migrate(&mut conn)?;
    Ok(conn)
}
