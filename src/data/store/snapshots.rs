//! The `run_snapshots` table: encoded snapshots of a run's folded state (see
//! `state::snapshot`), keyed by the last event they include. The table is created by
//! the first write, so a file without it (written by an older plexus) reads as a file
//! with no snapshots, and its schema version does not change.

use std::path::Path;

use rusqlite::{params, OptionalExtension};

use super::{open_connection, Store, StoreError};

/// Snapshots at multiples of this many events are kept; other ones (a run's end, a
/// rebuilt state) are replaced by the run's next.
pub const KEEP_EVERY: u64 = 1 << 18;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS run_snapshots (
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,      -- the last event the state includes
    created_at  TEXT NOT NULL,         -- RFC 3339
    data        BLOB NOT NULL,         -- state::snapshot's encoding
    PRIMARY KEY (run_id, seq)
)";

/// One stored snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSnapshot {
    /// The last event it includes.
    pub seq: u64,
    /// Its encoding.
    pub data: Vec<u8>,
}

fn missing_table(e: &rusqlite::Error) -> bool {
    e.to_string().contains("no such table")
}

impl Store {
    /// The newest snapshot of `run` that includes no event after `upto`, if any
    /// (`u64::MAX`: the newest of all).
    pub fn snapshot_before(
        &self,
        run: &str,
        upto: u64,
    ) -> Result<Option<StoredSnapshot>, StoreError> {
        let r = self
            .conn()
            .query_row(
                "SELECT seq, data FROM run_snapshots WHERE run_id = ?1 AND seq <= ?2
                 ORDER BY seq DESC LIMIT 1",
                params![run, upto.min(i64::MAX as u64) as i64],
                |r| {
                    Ok(StoredSnapshot {
                        seq: r.get::<_, i64>(0)? as u64,
                        data: r.get(1)?,
                    })
                },
            )
            .optional();
        match r {
            Ok(s) => Ok(s),
            Err(e) if missing_table(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The events of `run` at which snapshots are stored, ascending.
    pub fn snapshot_seqs(&self, run: &str) -> Result<Vec<u64>, StoreError> {
        let mut st = match self
            .conn()
            .prepare("SELECT seq FROM run_snapshots WHERE run_id = ?1 ORDER BY seq")
        {
            Ok(st) => st,
            Err(e) if missing_table(&e) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let rows = st.query_map([run], |r| r.get::<_, i64>(0))?;
        Ok(rows
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|s| s as u64)
            .collect())
    }
}

/// Stores a snapshot of `run` after event `seq` in the database at `db` (on a
/// connection of its own: snapshots are not part of the run's log, and a reader that
/// rebuilt a state may store it too). Earlier snapshots of the run that are not at a
/// multiple of [`KEEP_EVERY`] are removed.
///
/// The snapshot is `len` bytes, which `write` writes straight into its row, so no
/// buffer of the whole snapshot is held. Nothing is stored if `write` fails or writes
/// another number of bytes.
pub fn put_snapshot(
    db: &Path,
    run: &str,
    seq: u64,
    len: usize,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(), String>,
) -> Result<(), StoreError> {
    let mut conn = open_connection(db)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute(CREATE, [])?;
    // The row is made with a blob of zeros and the bytes written into it in place: bound
    // as a parameter, SQLite would copy a snapshot of tens of MB twice (the bound value,
    // then the row built from it) before writing a page.
    tx.execute(
        "INSERT OR REPLACE INTO run_snapshots (run_id, seq, created_at, data)
         VALUES (?1, ?2, ?3, zeroblob(?4))",
        params![
            run,
            seq as i64,
            crate::base::clock::now_rfc3339(),
            len as i64
        ],
    )?;
    super::in_place::write_with(
        &tx,
        "run_snapshots",
        "data",
        tx.last_insert_rowid(),
        len,
        write,
    )?;
    tx.execute(
        "DELETE FROM run_snapshots WHERE run_id = ?1 AND seq <> ?2 AND seq % ?3 <> 0",
        params![run, seq as i64, KEEP_EVERY as i64],
    )?;
    tx.commit()?;
    Ok(())
}

/// Removes every snapshot of `run` (tests and `check` use it to show that a run opens
/// without them).
pub fn delete_snapshots(db: &Path, run: &str) -> Result<usize, StoreError> {
    let conn = open_connection(db)?;
    match conn.execute("DELETE FROM run_snapshots WHERE run_id = ?1", [run]) {
        Ok(n) => Ok(n),
        Err(e) if missing_table(&e) => Ok(0),
        Err(e) => Err(e.into()),
    }
}
