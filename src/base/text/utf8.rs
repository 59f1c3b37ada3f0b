//! Reading a file as UTF-8 text with the place of the first byte that is not UTF-8
//! (line, column, byte), and the byte-order mark some editors write, which is not part
//! of the text.

use std::path::Path;

/// The byte-order mark, as some editors write it at the start of a file.
pub const BOM: char = '\u{feff}';

/// Bytes that are not UTF-8, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not UTF-8 at line {line}, column {column} (byte {byte}); save the file as UTF-8")]
pub struct NotUtf8 {
    /// 1-based line of the first bad byte.
    pub line: usize,
    /// 1-based column (in characters) of the first bad byte.
    pub column: usize,
    /// 0-based offset of the first bad byte.
    pub byte: usize,
}

/// Why a text file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadTextError {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// It is not UTF-8.
    #[error(transparent)]
    NotUtf8(#[from] NotUtf8),
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
pub fn place(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.as_bytes()[..at].iter().rposition(|&b| b == b'\n');
    let line = 1 + text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let start = before.map_or(0, |i| i + 1);
    let column = 1 + text
        .get(start..at)
        .map_or(at - start, |s| s.chars().count());
    (line, column)
}

/// `bytes` as text, or where they stop being UTF-8.
pub fn decode(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        // The part before the bad byte is valid by definition.
        let good = std::str::from_utf8(&bytes[..byte]).unwrap_or_default();
        let (line, column) = place(good, byte);
        NotUtf8 { line, column, byte }
    })
}

/// The file at `path` as text, without a byte-order mark at its start.
pub fn read_text(path: &Path) -> Result<String, ReadTextError> {
    let mut text = decode(std::fs::read(path)?)?;
    if text.starts_with(BOM) {
        text.replace_range(..BOM.len_utf8(), "");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_byte_is_placed_by_line_column_and_offset() {
        let mut bytes = "{\n  \"é\": \"".as_bytes().to_vec();
        bytes.push(0xff);
        let e = decode(bytes).expect_err("not UTF-8");
        assert_eq!((e.line, e.column, e.byte), (2, 9, 11));
        assert_eq!(
            e.to_string(),
            "not UTF-8 at line 2, column 9 (byte 11); save the file as UTF-8"
        );
    }

    #[test]
    fn a_file_loses_its_byte_order_mark() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.json");
        std::fs::write(&p, "\u{feff}{}").expect("write");
        assert_eq!(read_text(&p).expect("read"), "{}");
    }

    #[test]
    fn places_count_characters_not_bytes() {
        assert_eq!(place("ab\ncé d", 7), (2, 4));
        assert_eq!(place("", 0), (1, 1));
    }
}
