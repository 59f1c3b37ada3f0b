//! Writing a large value into its row in place: the row is made with a blob of zeros of
//! the value's length and the bytes are written into it through incremental blob I/O.
//! Bound as a parameter, SQLite would copy a value of tens of MB twice (the bound copy,
//! then the record built from it) before writing a page.

use rusqlite::Connection;

use super::StoreError;

/// Pieces the bytes are written in.
const PIECE: usize = 1 << 20;

/// Writes `data` into `table.column` of row `rowid`, which holds `zeroblob(data.len())`.
pub(crate) fn write(
    conn: &Connection,
    table: &str,
    column: &str,
    rowid: i64,
    data: &[u8],
) -> rusqlite::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let mut blob = conn.blob_open(rusqlite::MAIN_DB, table, column, rowid, false)?;
    for (i, piece) in data.chunks(PIECE).enumerate() {
        blob.write_at(piece, i * PIECE)?;
    }
    blob.close()
}

/// Writes a value of `len` bytes, produced by `write`, into `table.column` of row
/// `rowid`, which holds `zeroblob(len)`. An error of `write`, or a value of another
/// length, is an error (and the caller's transaction, rolled back, stores nothing).
pub(crate) fn write_with(
    conn: &Connection,
    table: &str,
    column: &str,
    rowid: i64,
    len: usize,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(), String>,
) -> Result<(), StoreError> {
    let what = "a value in place";
    let mut blob = conn.blob_open(rusqlite::MAIN_DB, table, column, rowid, false)?;
    let mut out = Counted {
        blob: &mut blob,
        at: 0,
    };
    write(&mut out).map_err(|why| StoreError::InPlace { what, why })?;
    if out.at != len {
        return Err(StoreError::InPlace {
            what,
            why: format!("{} bytes were written into a place of {len}", out.at),
        });
    }
    blob.close()?;
    Ok(())
}

/// A blob written from its start, refusing to write past its end (where a blob's own
/// writer would silently write less).
struct Counted<'b, 'c> {
    blob: &'b mut rusqlite::blob::Blob<'c>,
    at: usize,
}

impl std::io::Write for Counted<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.at + buf.len() > self.blob.len() {
            return Err(std::io::Error::other("more bytes than the place holds"));
        }
        self.blob
            .write_at(buf, self.at)
            .map_err(std::io::Error::other)?;
        self.at += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
