//! Opening the database file: read-write (created if missing, migrated in one write
//! transaction, safe when many processes open a new file at once) or read-only (never
//! creates or writes anything, works on a read-only file, directory or medium).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::schema::{self, SCHEMA_VERSION};
use super::StoreError;

/// How long a connection waits for another process's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) the database at `path` with plexus's settings — WAL,
/// `synchronous = FULL` (a committed batch survives power loss), foreign keys on — and
/// migrates it to the current schema. Any number of processes may do this at once on a
/// new or an old file: the version check and the migrations run in one `BEGIN IMMEDIATE`
/// transaction, so exactly one of them migrates and the others see the result.
pub fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
                path: dir.to_path_buf(),
                what: "cannot create the database's directory",
                source: e,
            })?;
        }
    }
    // SQLite would open a file it may not write read-only and fail at the first write,
    // after making the -wal and -shm files beside it.
    if path.is_file() {
        may_write(path).map_err(|source| StoreError::ReadOnly {
            path: path.to_path_buf(),
            source,
        })?;
    }
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Another program's SQLite file (a mistyped --db) is refused before anything of it
    // changes: switching it to WAL would rewrite its header.
    let (v, tables) = version_and_tables(&conn)?;
    schema::check_version(v)?;
    if v == 0 && tables > 0 {
        return Err(StoreError::NotPlexus {
            path: path.to_path_buf(),
            empty: false,
        });
    }
    // Larger pages waste less room around invocation rows (requests and responses are
    // a few KB each); only takes effect when the file is created.
    conn.pragma_update(None, "page_size", 16384)?;
    set_wal(&conn)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    schema::migrate(&mut conn)?;
    Ok(conn)
}

/// Switches a connection to WAL. Changing the journal mode of a new file needs a lock
/// the busy handler is not always asked about, so a busy answer is retried here within
/// the busy timeout.
fn set_wal(conn: &Connection) -> Result<(), StoreError> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether SQLite answered "busy" or "locked".
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Opens the database at `path` for reading only. Nothing is created: a missing file
/// is an error that says so. A WAL file on a read-only directory or medium (where
/// SQLite cannot create its shared-memory file) is opened as immutable, which is safe
/// there because no process can be writing to it. So is a file this process may not
/// write and that has no `-wal` file, so no process has it open to write (one that
/// starts meanwhile can at worst spoil this one read); opened the usual way, SQLite
/// would make `-wal` and `-shm` files beside it and leave them behind, owned by this
/// process, where the file's owner may not be able to use them. The schema must be
/// this build's: an older file is upgraded by any command that writes, a newer one by
/// a newer plexus.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    // A file another process is creating has no schema for a moment: wait for it.
    let deadline = std::time::Instant::now() + CREATING_WAIT;
    loop {
        match open_read_only_once(path) {
            Err(StoreError::NotPlexus { empty: true, .. })
                if std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// How long a reader waits for an empty database file to get its schema (another
/// process creating it sets the schema up in one transaction, within milliseconds).
pub const CREATING_WAIT: Duration = Duration::from_secs(2);

fn open_read_only_once(path: &Path) -> Result<Connection, StoreError> {
    if !path.is_file() {
        return Err(StoreError::Missing(path.to_path_buf()));
    }
    let as_it_stands = !wal_path(path).exists() && may_write(path).is_err();
    let conn =
        match open_ro(path, as_it_stands).and_then(|c| version_and_tables(&c).map(|v| (c, v))) {
            Ok((c, v)) => {
                check_readable(path, v)?;
                c
            }
            // Without a -wal file holding changes, the file alone is the database, and it
            // can be read as it stands; a -wal with data must not be ignored.
            Err(e) if cannot_share(&e) && wal_is_empty(path) => {
                let c = open_ro(path, true)?;
                let v = version_and_tables(&c)?;
                check_readable(path, v)?;
                c
            }
            Err(e) => return Err(e),
        };
    Ok(conn)
}

/// Whether the database at `path` has no `-wal` file, or an empty one.
fn wal_is_empty(path: &Path) -> bool {
    std::fs::metadata(wal_path(path)).map_or(true, |m| m.len() == 0)
}

/// The schema version and the number of tables, read in one statement so both come
/// from the same moment (another process may be creating the schema right now).
fn version_and_tables(conn: &Connection) -> Result<(i64, i64), StoreError> {
    Ok(conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version),
                (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table')",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// The `-wal` file of the database at `path`.
fn wal_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// Whether this process may write the existing file at `path`, asked without opening
/// it: closing a descriptor of a database file drops every POSIX lock this process's
/// SQLite connections hold on it.
fn may_write(path: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        nix::unistd::access(path, nix::unistd::AccessFlags::W_OK)
            .map_err(|e| std::io::Error::from_raw_os_error(e as i32))
    }
    #[cfg(not(target_os = "linux"))]
    {
        if std::fs::metadata(path)?.permissions().readonly() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "its permissions allow no writing",
            ));
        }
        Ok(())
    }
}

fn open_ro(path: &Path, immutable: bool) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(uri(path, immutable), flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// A `file:` URI for `path` (percent-encoding what URIs reserve).
fn uri(path: &Path, immutable: bool) -> String {
    let abs: PathBuf = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut s = String::from("file:");
    for c in abs.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => s.push_str(&format!("%{:02X}", c as u32)),
            _ => s.push(c),
        }
    }
    if immutable {
        s + "?immutable=1"
    } else {
        s
    }
}

/// Errors that mean SQLite could not set up sharing (no `-shm` file could be made).
fn cannot_share(e: &StoreError) -> bool {
    let StoreError::Sqlite(e) = e else {
        return false;
    };
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)
    )
}

/// Refuses a file this build cannot read as it is.
fn check_readable(path: &Path, (v, tables): (i64, i64)) -> Result<(), StoreError> {
    schema::check_version(v)?;
    if v == 0 {
        return Err(StoreError::NotPlexus {
            path: path.to_path_buf(),
            empty: tables == 0,
        });
    }
    if v < SCHEMA_VERSION {
        return Err(StoreError::TooOld {
            found: v,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}
