//! The marks file of a rerun (`plexus eval rerun --samples FILE`): one sample id a line,
//! blank lines and `#` comments skipped, an id that would not read back plain written
//! as a JSON string. The Eval screen writes it and reads it back when it opens; the
//! rerun reads it.

use std::path::{Path, PathBuf};

/// The file the Eval screen keeps an eval's marks in: `rerun_EVAL.txt` beside its
/// failure tree (`out_dir`), else in the working directory.
pub fn marks_path(out_dir: Option<&str>, eval_id: &str) -> PathBuf {
    PathBuf::from(out_dir.unwrap_or(".")).join(format!("rerun_{eval_id}.txt"))
}

/// An id as a line of the marks file: as it is, or as a JSON string when it would
/// not read back so (a `#` or `"` first, spaces around it, a line break).
pub fn marks_line(id: &str) -> String {
    let plain = !id.is_empty()
        && id.trim() == id
        && !id.starts_with(['#', '"'])
        && !id.contains(['\n', '\r']);
    if plain {
        format!("{id}\n")
    } else {
        format!("{}\n", serde_json::Value::String(id.to_string()))
    }
}

/// The ids of a marks file's text, each with its line number (from 1).
pub fn parse_marks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let id = line.trim();
        if id.is_empty() || id.starts_with('#') {
            continue;
        }
        // An id written as a JSON string (one that would not read back plain).
        let quoted: Option<String> = id
            .starts_with('"')
            .then(|| serde_json::from_str(id).ok())
            .flatten();
        out.push((n + 1, quoted.unwrap_or_else(|| id.to_string())));
    }
    out
}

/// The ids of the marks file at `path`: none when there is no file; an error naming
/// the file when it cannot be read.
pub fn read_marks(path: &Path) -> Result<Vec<(usize, String)>, String> {
    match crate::base::text::utf8::read_text(path) {
        Ok(text) => Ok(parse_marks(&text)),
        Err(_) if !path.exists() => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_written_reads_back_as_it_was() {
        let ids = ["q1", "#2", "\"3\"", " four ", "five\nlines", "ü 6"];
        let text: String = ids.iter().map(|id| marks_line(id)).collect();
        let text = format!("# marked by hand\n\n{text}");
        let back: Vec<String> = parse_marks(&text).into_iter().map(|(_, id)| id).collect();
        assert_eq!(back, ids);
        assert_eq!(parse_marks("a\n\n# c\nb\n")[1], (4, "b".to_string()));
    }

    #[test]
    fn a_missing_file_has_no_marks_and_an_unreadable_one_is_named() {
        let d = tempfile::tempdir().expect("tempdir");
        assert_eq!(read_marks(&d.path().join("none.txt")), Ok(vec![]));
        let err = read_marks(d.path()).expect_err("a directory");
        assert!(err.contains(&d.path().display().to_string()), "{err}");
    }
}
