//! Reading the file a tool call stored its data in, for a loop step's popup: read on
//! demand by the loader, its first part when it is large, and a clear message when the
//! file is gone.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::tui::app::docs::Doc;

/// Most bytes of a stored file the popup shows.
pub const SHOWN_BYTES: u64 = 256 * 1024;

/// Where `path` is: as written (absolute, or relative to where the run was started),
/// else relative to the database's folder (a run started elsewhere).
fn locate(path: &str, db: &Path) -> Option<PathBuf> {
    let p = PathBuf::from(path);
    if p.is_file() {
        return Some(p);
    }
    let beside = db.parent()?.join(&p);
    (p.is_relative() && beside.is_file()).then_some(beside)
}

/// The text of the stored file `path` (of the run in database `db`): its first
/// [`SHOWN_BYTES`] with a note of what is left, or why it cannot be shown.
pub fn read(path: &str, db: &Path) -> Doc {
    let Some(found) = locate(path, db) else {
        return Doc::Missing(format!(
            "the stored file {path} is gone (moved or deleted): only the observation above, what the model saw, is left"
        ));
    };
    let file = match std::fs::File::open(&found) {
        Ok(f) => f,
        Err(e) => return Doc::Missing(format!("cannot open the stored file {path}: {e}")),
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    if let Err(e) = file.take(SHOWN_BYTES).read_to_end(&mut bytes) {
        return Doc::Missing(format!("cannot read the stored file {path}: {e}"));
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if size > SHOWN_BYTES {
        text.push_str(&format!(
            "\n… the first {} KiB of {} bytes; the rest is in {path}",
            SHOWN_BYTES / 1024,
            size
        ));
    }
    Doc::Ready(text.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_file_is_read_whole_or_its_first_part() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("p.db");
        let small = dir.path().join("small.json");
        std::fs::write(&small, "{\"a\": 1}\nline two").expect("write");
        assert_eq!(
            read(&small.to_string_lossy(), &db),
            Doc::Ready("{\"a\": 1}\nline two".into())
        );
        let big = dir.path().join("big.txt");
        std::fs::write(&big, "x".repeat(SHOWN_BYTES as usize + 10)).expect("write");
        let Doc::Ready(t) = read(&big.to_string_lossy(), &db) else {
            panic!("not read");
        };
        assert!(
            t.ends_with(&format!("rest is in {}", big.display())),
            "{}",
            &t[t.len() - 120..]
        );
        assert!(t.starts_with(&"x".repeat(SHOWN_BYTES as usize)));
    }

    #[test]
    fn a_relative_path_is_found_beside_the_database() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("tool_data/R1")).expect("mkdir");
        std::fs::write(dir.path().join("tool_data/R1/c.txt"), "data").expect("write");
        let doc = read("tool_data/R1/c.txt", &dir.path().join("p.db"));
        assert_eq!(doc, Doc::Ready("data".into()));
    }

    #[test]
    fn a_gone_file_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let Doc::Missing(why) = read("tool_data/R1/gone.json", &dir.path().join("p.db")) else {
            panic!("read a missing file");
        };
        assert!(why.contains("tool_data/R1/gone.json is gone"), "{why}");
    }
}
