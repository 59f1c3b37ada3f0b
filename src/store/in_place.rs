//! Writing a large value into its row in place: the row is made with a blob of zeros of
//! the value's length and the bytes are written into it through incremental blob I/O.
//! Bound as a parameter, SQLite would copy a value of tens of MB twice (the bound copy,
//! then the record built from it) before writing a page.

use rusqlite::Connection;

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
