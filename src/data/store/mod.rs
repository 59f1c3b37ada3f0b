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
    /// The file was written by an older plexus and a read-only command cannot upgrade it.
    #[error("database schema version {found} is older than this plexus reads ({supported}); `plexus check --upgrade` (or any run) upgrades it")]
    TooOld {
        /// Version in the file.
        found: i64,
        /// Version this build reads.
        supported: i64,
    },
    /// A `user_version` no plexus writes.
    #[error("database schema version {0} is not one plexus knows; is this a plexus database?")]
    BadVersion(i64),
    /// The file exists but holds no plexus schema.
    #[error("{} {}", .path.display(), if *.empty { "has no plexus schema yet: it is empty (if another plexus is creating it, try again in a moment)" } else { "is not a plexus database: it has tables but no plexus schema version" })]
    NotPlexus {
        /// The file.
        path: std::path::PathBuf,
        /// Whether it has no tables at all.
        empty: bool,
    },
    /// A read-only command was pointed at a file that does not exist.
    #[error("no database at {} (plexus run or plexus demo creates one; --db or $PLEXUS_DB chooses the file)", .0.display())]
    Missing(std::path::PathBuf),
    /// A file-system operation around the database failed.
    #[error("{what} {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The database file exists but this process may not write it.
    #[error("database {} is read-only for this process; runs, show, log and check can still read it", .path.display())]
    ReadOnly {
        /// The file.
        path: std::path::PathBuf,
        /// Why it may not be written.
        source: std::io::Error,
    },
    /// Stored JSON did not decode.
    #[error("corrupt stored JSON in {what}: {source}")]
    Json {
        /// What was being decoded.
        what: String,
        /// Why.
        source: serde_json::Error,
    },
    /// A value written into its row in place could not be produced.
    #[error("cannot write {what}: {why}")]
    InPlace {
        /// What was being written.
        what: &'static str,
        /// Why.
        why: String,
    },
    /// The writer thread is gone.
    #[error("the database writer stopped: {0}")]
    WriterGone(String),
    /// A run id that is not in the database.
    #[error("no run `{0}` in this database")]
    NoSuchRun(String),
    /// Another live process executes the run.
    #[error(
        "run {run_id} is being executed by {owner}; it can be resumed once that process has ended"
    )]
    Owned {
        /// The run.
        run_id: String,
        /// Who holds it.
        owner: String,
    },
    /// This process's lease on the run was taken over (it was thought gone).
    #[error("run {run_id} was taken over by {by}; this process stopped writing to it")]
    LeaseLost {
        /// The run.
        run_id: String,
        /// Who holds it now.
        by: String,
    },
    /// A run-id prefix that matches more than one run.
    #[error("run id prefix `{prefix}` is ambiguous: it matches {}", .candidates.join(", "))]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// The runs it matches, newest first.
        candidates: Vec<String>,
    },
    /// A run logged more events than an event id can number.
    #[error("run `{run_id}` reached the log's limit of {limit} events")]
    LogFull {
        /// The run.
        run_id: String,
        /// Most events of one run.
        limit: u64,
    },
}

mod atom_write;
mod attempts;
mod failed;
mod gather;
pub mod ids;
pub(crate) mod in_place;
pub mod lease;
mod log_insert;
pub use log_insert::{is_clock_kind, note_clock_event};
pub mod open;
mod open_calls;
mod ops;
pub mod read;
pub mod review;
pub mod review_write;
mod row_write;
pub mod run_read;
pub mod snapshots;
pub mod wal;
pub mod writer;
mod writer_stats;

pub use open::{open_connection, open_read_only};

pub use attempts::MAX_STREAM_BYTES;
pub use failed::{FailedInvocation, InvocationMeta, MAX_FAILURE_ROWS};
pub use open_calls::OpenCall;
pub use read::{EventRow, InvocationRow, Store, TaskRow};
pub use review::{Decision, FabricatedRef, ReviewItem};
pub use run_read::RunSummary;
pub use writer::{
    spawn_writer, spawn_writer_with_cache, AtomRow, InvocationRecord, PaperRow, ReviewWrite,
    RowsWrite, RunRow, WriteOp, Writer, WriterStats,
};
