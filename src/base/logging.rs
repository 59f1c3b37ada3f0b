//! The log file: `plexus.log` beside the database, written by `tracing`, never the
//! terminal. Commands that write the database create it (and its directory); read-only
//! commands only append to one that already exists, so they create nothing. A log that
//! cannot be written (a full disk) is skipped silently rather than complaining on the
//! terminal.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use tracing_subscriber::fmt::MakeWriter;

/// The log file's name, in the database's directory.
pub const LOG_NAME: &str = "plexus.log";

/// Where the log of the database at `db` goes.
pub fn log_path(db: &Path) -> PathBuf {
    db.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
        .join(LOG_NAME)
}

/// Starts logging to the log of `db`. With `create`, the directory and file are made
/// if missing; without, only an existing, writable log is used. Returns the log's path
/// when logging is on.
pub fn init(db: &Path, create: bool) -> Option<PathBuf> {
    let path = log_path(db);
    let file = if create {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).ok()?;
        }
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .ok()?
    } else {
        OpenOptions::new().append(true).open(&path).ok()?
    };
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("PLEXUS_LOG").unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt()
        .with_writer(QuietLog(Mutex::new(file)))
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(path)
}

/// A log file whose write errors are swallowed: `tracing-subscriber` reports a failing
/// writer on standard error, which would put log trouble on the person's terminal.
struct QuietLog(Mutex<File>);

/// One write to a [`QuietLog`].
struct QuietWriter<'a>(Option<MutexGuard<'a, File>>);

impl<'a> MakeWriter<'a> for QuietLog {
    type Writer = QuietWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        QuietWriter(self.0.lock().ok())
    }
}

impl Write for QuietWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(f) = self.0.as_mut() {
            let _ = f.write_all(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(f) = self.0.as_mut() {
            let _ = f.flush();
        }
        Ok(())
    }
}
