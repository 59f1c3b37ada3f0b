//! One document of a tree, loaded when asked: its status (ok, missing, broken, truncated, partial,
//! too large, unreadable), its size, its token count and its JSON. Files are untrusted:
//! whatever is wrong with one becomes its status, never an error of the caller.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::base::tokens::TokenCounter;

/// Documents larger than this are not read (50 MB).
pub const DEFAULT_DOC_CAP: u64 = 50 * 1024 * 1024;

/// The four documents of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKind {
    /// `samples/<id>.json`: the sample itself.
    Sample,
    /// `execution_traces/<id>_trace.json`: conversation history, tool calls, states.
    Trace,
    /// `evaluation_results/<id>_eval.json`: checker results and the LLM verdict.
    Evaluation,
    /// `attribution_analysis/<id>_attribution.json`: why it failed.
    Attribution,
}

impl DocKind {
    /// The four kinds, in tab order.
    pub const ALL: [DocKind; 4] = [
        DocKind::Sample,
        DocKind::Trace,
        DocKind::Evaluation,
        DocKind::Attribution,
    ];

    /// A short name: `sample`, `trace`, `evaluation`, `attribution`.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Sample => "sample",
            DocKind::Trace => "trace",
            DocKind::Evaluation => "evaluation",
            DocKind::Attribution => "attribution",
        }
    }

    /// Position in [`DocKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The fields a document of this kind is expected to have: each group is one field,
    /// satisfied by any of its names (the first is the one reported when missing).
    /// No document has to carry its sample's id: the file name gives it, as in the
    /// protocol's layout; a sample document's contents are the pipeline's own.
    pub fn expected(self) -> &'static [&'static [&'static str]] {
        match self {
            DocKind::Sample => &[],
            DocKind::Trace => &[&[
                "conversation_history",
                "messages",
                "conversation",
                "turns",
                "history",
                "epochs",
            ]],
            DocKind::Evaluation => &[&[
                "checker_results",
                "checkers",
                "checks",
                "quality_check",
                "epochs",
            ]],
            DocKind::Attribution => {
                &[&["failure_type", "attribution", "root_cause", "error_codes"]]
            }
        }
    }
}

/// What became of loading a document.
#[derive(Debug, Clone, PartialEq)]
pub enum DocStatus {
    /// Read and parsed, every expected field present.
    Ok,
    /// No file at its path.
    Missing,
    /// Not JSON (or not UTF-8): the parser's message and where it stopped (1-based).
    Broken {
        /// The parser's message.
        message: String,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
    },
    /// JSON that ends too soon (a file cut off while being written or copied): the
    /// parser's message and where the text ends (1-based).
    Truncated {
        /// The parser's message.
        message: String,
        /// Line where the text ends.
        line: usize,
        /// Column where the text ends.
        column: usize,
    },
    /// Valid JSON without some expected fields (listed).
    Partial {
        /// The missing fields.
        missing: Vec<String>,
    },
    /// Larger than the cap: not read.
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The cap.
        cap: u64,
    },
    /// It could not be read (permissions, a directory, a path that leaves the tree).
    Unreadable {
        /// Why.
        message: String,
    },
}

impl DocStatus {
    /// One word: `ok`, `missing`, `broken`, `partial`, `too large`, `unreadable`.
    pub fn label(&self) -> &'static str {
        match self {
            DocStatus::Ok => "ok",
            DocStatus::Missing => "missing",
            DocStatus::Broken { .. } => "broken",
            DocStatus::Truncated { .. } => "truncated",
            DocStatus::Partial { .. } => "partial",
            DocStatus::TooLarge { .. } => "too large",
            DocStatus::Unreadable { .. } => "unreadable",
        }
    }

    /// The status with its reason, for a person.
    pub fn describe(&self) -> String {
        match self {
            DocStatus::Ok => "ok".into(),
            DocStatus::Missing => "missing: no file at this path".into(),
            DocStatus::Broken {
                message,
                line,
                column,
            } => format!("broken: not JSON at line {line}, column {column}: {message}"),
            DocStatus::Truncated {
                message,
                line,
                column,
            } => format!(
                "truncated: the JSON ends too soon at line {line}, column {column}: {message}"
            ),
            DocStatus::Partial { missing } => {
                format!("partial: missing {}", missing.join(", "))
            }
            DocStatus::TooLarge { bytes, cap } => {
                format!("too large: {bytes} bytes, over the {cap}-byte cap; not read")
            }
            DocStatus::Unreadable { message } => format!("unreadable: {message}"),
        }
    }

    /// Whether the JSON is there to show (ok or partial).
    pub fn has_json(&self) -> bool {
        matches!(self, DocStatus::Ok | DocStatus::Partial { .. })
    }
}

/// A loaded document.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// Which document of the sample (`None` for other files such as the report).
    pub kind: Option<DocKind>,
    /// Where it was looked for.
    pub path: PathBuf,
    /// What became of it.
    pub status: DocStatus,
    /// Size on disk (0 when missing).
    pub bytes: u64,
    /// Tokens of its text as read (0 when not read).
    pub tokens: u64,
    /// The JSON, when ok or partial.
    pub value: Option<Value>,
    /// The text, when broken (to show where it breaks).
    pub text: Option<String>,
}

impl Doc {
    /// A document that was not read, with `status`.
    pub fn unread(kind: Option<DocKind>, path: PathBuf, status: DocStatus) -> Doc {
        Doc {
            kind,
            path,
            status,
            bytes: 0,
            tokens: 0,
            value: None,
            text: None,
        }
    }
}

/// How documents are loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadOptions {
    /// Documents larger than this are not read.
    pub cap: u64,
    /// How tokens are counted.
    pub counter: TokenCounter,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            cap: DEFAULT_DOC_CAP,
            counter: TokenCounter::default(),
        }
    }
}

/// Loads the file at `path`, expecting the fields of `kind` (none when `None`, or the
/// `expected` groups given). Never fails: what is wrong is the status.
pub fn load_file(path: &Path, kind: Option<DocKind>, o: &LoadOptions) -> Doc {
    let expected = kind.map(DocKind::expected).unwrap_or(&[]);
    load_expecting(path, kind, expected, o)
}

/// [`load_file`] with explicit expected field groups.
pub fn load_expecting(
    path: &Path,
    kind: Option<DocKind>,
    expected: &[&[&str]],
    o: &LoadOptions,
) -> Doc {
    let mut doc = Doc::unread(kind, path.to_path_buf(), DocStatus::Ok);
    let bytes = match read_capped(path, o.cap) {
        Ok(Read_::Bytes(b)) => b,
        Ok(Read_::TooLarge(n)) => {
            doc.bytes = n;
            doc.status = DocStatus::TooLarge {
                bytes: n,
                cap: o.cap,
            };
            return doc;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            doc.status = DocStatus::Missing;
            return doc;
        }
        Err(e) => {
            doc.status = DocStatus::Unreadable {
                message: e.to_string(),
            };
            return doc;
        }
    };
    doc.bytes = bytes.len() as u64;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let (line, column) = line_col(&bytes[..at]);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            doc.tokens = o.counter.count(&text);
            doc.status = DocStatus::Broken {
                message: format!("not UTF-8 (byte {at})"),
                line,
                column,
            };
            doc.text = Some(text);
            return doc;
        }
    };
    doc.tokens = o.counter.count(&text);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => {
            let missing = missing_fields(&v, expected);
            if !missing.is_empty() {
                doc.status = DocStatus::Partial { missing };
            }
            doc.value = Some(v);
        }
        Err(e) if e.is_eof() => {
            doc.status = DocStatus::Truncated {
                message: e.to_string(),
                line: e.line(),
                column: e.column(),
            };
            doc.text = Some(text);
        }
        Err(e) => {
            doc.status = DocStatus::Broken {
                message: e.to_string(),
                line: e.line(),
                column: e.column(),
            };
            doc.text = Some(text);
        }
    }
    doc
}

/// Loads a file that need not be JSON (a design file: YAML, Markdown, JSON): a `.json`
/// file is loaded as [`load_file`] does; any other is kept as text, `ok` when it is
/// UTF-8. Never fails: what is wrong is the status.
pub fn load_text(path: &Path, o: &LoadOptions) -> Doc {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return load_file(path, None, o);
    }
    let mut doc = Doc::unread(None, path.to_path_buf(), DocStatus::Ok);
    match read_capped(path, o.cap) {
        Ok(Read_::Bytes(b)) => {
            doc.bytes = b.len() as u64;
            match String::from_utf8(b) {
                Ok(t) => {
                    doc.tokens = o.counter.count(&t);
                    doc.text = Some(t);
                }
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    let (line, column) = line_col(&e.as_bytes()[..at]);
                    doc.status = DocStatus::Broken {
                        message: format!("not UTF-8 (byte {at})"),
                        line,
                        column,
                    };
                }
            }
        }
        Ok(Read_::TooLarge(n)) => {
            doc.bytes = n;
            doc.status = DocStatus::TooLarge {
                bytes: n,
                cap: o.cap,
            };
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => doc.status = DocStatus::Missing,
        Err(e) => {
            doc.status = DocStatus::Unreadable {
                message: e.to_string(),
            }
        }
    }
    doc
}

/// The expected fields `v` lacks (every one of them when `v` is not an object).
pub fn missing_fields(v: &Value, expected: &[&[&str]]) -> Vec<String> {
    expected
        .iter()
        .filter(|names| !names.iter().any(|n| v.get(n).is_some_and(|x| !x.is_null())))
        .filter_map(|names| names.first().map(|n| n.to_string()))
        .collect()
}

enum Read_ {
    Bytes(Vec<u8>),
    TooLarge(u64),
}

/// The file's bytes, or its size when it is over `cap` (checked before reading, and
/// again while reading a file that grows).
fn read_capped(path: &Path, cap: u64) -> std::io::Result<Read_> {
    let f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("a directory, not a file"));
    }
    if meta.len() > cap {
        return Ok(Read_::TooLarge(meta.len()));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.take(cap.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Ok(Read_::TooLarge(buf.len() as u64));
    }
    Ok(Read_::Bytes(buf))
}

/// 1-based line and column of the end of `b`.
fn line_col(b: &[u8]) -> (usize, usize) {
    let line = b.iter().filter(|&&c| c == b'\n').count() + 1;
    let col = b.len() - b.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, body: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write");
        p
    }

    #[test]
    fn every_status() {
        let d = tempfile::tempdir().expect("tmp");
        let o = LoadOptions::default();
        let ok = write(
            d.path(),
            "ok.json",
            br#"{"sample_id":"A","checker_results":[]}"#,
        );
        let doc = load_file(&ok, Some(DocKind::Evaluation), &o);
        assert_eq!(doc.status, DocStatus::Ok);
        assert!(doc.tokens > 0 && doc.value.is_some());

        let doc = load_file(&d.path().join("none.json"), Some(DocKind::Trace), &o);
        assert_eq!(doc.status, DocStatus::Missing);

        let cut = write(
            d.path(),
            "c.json",
            b"{\n  \"sample_id\": \"A\",\n  \"x\": [1, 2\n",
        );
        let doc = load_file(&cut, Some(DocKind::Sample), &o);
        assert!(
            matches!(doc.status, DocStatus::Truncated { line: 4, .. }),
            "{:?}",
            doc.status
        );
        let broken = write(
            d.path(),
            "b.json",
            b"{\n  \"sample_id\": \"A\",\n  \"x\": [1, 2}\n",
        );
        let doc = load_file(&broken, Some(DocKind::Sample), &o);
        let DocStatus::Broken { line, .. } = doc.status else {
            panic!("{:?}", doc.status)
        };
        assert_eq!(line, 3);
        assert!(doc.text.is_some() && doc.value.is_none());

        let partial = write(d.path(), "p.json", br#"{"id":"A","note":1}"#);
        let doc = load_file(&partial, Some(DocKind::Trace), &o);
        assert_eq!(
            doc.status,
            DocStatus::Partial {
                missing: vec!["conversation_history".into()]
            }
        );

        let big = write(d.path(), "big.json", &[b' '; 64]);
        let small = LoadOptions { cap: 10, ..o };
        let doc = load_file(&big, Some(DocKind::Sample), &small);
        assert_eq!(doc.status, DocStatus::TooLarge { bytes: 64, cap: 10 });
        assert_eq!(doc.tokens, 0);

        let latin1 = write(d.path(), "l.json", b"{\"a\":\n\"\xe9\"}");
        let doc = load_file(&latin1, None, &o);
        assert!(
            matches!(
                doc.status,
                DocStatus::Broken {
                    line: 2,
                    column: 2,
                    ..
                }
            ),
            "{:?}",
            doc.status
        );

        let doc = load_file(d.path(), None, &o);
        assert!(matches!(doc.status, DocStatus::Unreadable { .. }));
    }
}
