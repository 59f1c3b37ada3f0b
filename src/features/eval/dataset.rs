//! Reading an evaluation's dataset: JSON Lines, CSV or a JSON array, one sample per row.
//!
//! Every sample has a stable id, never its row number: the `id` field, or the field the
//! eval names instead. It also has an `input`, optionally an `expected` value (`target`
//! is read as the same), `vars` and `metadata`. A CSV file gives these as columns, with
//! `vars.NAME` and `metadata.NAME` columns for the objects.
//!
//! Each row's content is hashed, so a row changed under the same id can be told from
//! one that did not. Errors name the file and the line (or record) and say what is
//! wrong; a duplicate id names both lines.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The file formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line (`.jsonl`, `.ndjson`).
    Jsonl,
    /// A header row, then one record per sample (`.csv`).
    Csv,
    /// One JSON array of objects (`.json`).
    JsonArray,
}

/// One sample of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Its id: stable across versions of the file.
    pub id: String,
    /// What the plan is given.
    pub input: Value,
    /// What a check compares the output with; never given to an agent.
    pub expected: Option<Value>,
    /// Named values for the plan's placeholders.
    pub vars: Map<String, Value>,
    /// Facts about the sample, for filters and groups.
    pub metadata: Map<String, Value>,
    /// SHA-256 of the sample's content (id, input, expected, vars, metadata), hex.
    pub hash: String,
    /// The line (JSON Lines, CSV) or position (JSON array, from 1) it came from.
    pub line: usize,
}

/// A dataset read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Its format.
    pub format: Format,
    /// Its samples, in file order.
    pub samples: Vec<Sample>,
}

/// A dataset that could not be read, with where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct DatasetError {
    /// The file.
    pub file: String,
    /// The line (or record) at fault, if one is.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Reads the dataset at `path`. Its format comes from its extension (`.jsonl`/`.ndjson`,
/// `.csv`, `.json`), else from its first character (`[`: a JSON array). `id_key` names
/// the field that holds each sample's id (`id` when `None`).
pub fn load(path: &Path, id_key: Option<&str>) -> Result<Dataset, DatasetError> {
    let file = path.display().to_string();
    let err = |line: Option<usize>, message: String| DatasetError {
        file: file.clone(),
        line,
        message,
    };
    let open = || std::fs::File::open(path).map_err(|e| err(None, format!("cannot read: {e}")));
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match ext.as_deref() {
        Some("jsonl" | "ndjson") => Format::Jsonl,
        Some("csv") => Format::Csv,
        Some("json") => Format::JsonArray,
        _ => sniff(open()?).map_err(|e| err(None, format!("cannot read: {e}")))?,
    };
    let rows = match format {
        Format::Jsonl => jsonl_rows(std::io::BufReader::new(open()?), &err)?,
        Format::JsonArray => array_rows(open()?, &err)?,
        Format::Csv => csv_rows(open()?, &err)?,
    };
    let key = id_key.unwrap_or("id");
    let mut samples = Vec::with_capacity(rows.len());
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(rows.len());
    for (line, row) in rows {
        let sample = sample_of(row, line, key).map_err(|m| err(Some(line), m))?;
        if let Some(first) = seen.insert(sample.id.clone(), line) {
            return Err(err(
                Some(line),
                format!(
                    "id `{}` is also the id of line {first}; every sample needs an id of its own",
                    crate::base::text::sanitize::sanitize(&sample.id)
                ),
            ));
        }
        samples.push(sample);
    }
    if samples.is_empty() {
        return Err(err(None, "the dataset has no samples".into()));
    }
    Ok(Dataset { format, samples })
}

/// The format of a file without a known extension, from its first character.
fn sniff(f: std::fs::File) -> std::io::Result<Format> {
    let mut r = std::io::BufReader::new(f);
    skip_bom(&mut r)?;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(Format::Jsonl);
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) if buf[i] == b'[' => return Ok(Format::JsonArray),
            Some(_) => return Ok(Format::Jsonl),
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    }
}

type Rows = Vec<(usize, Map<String, Value>)>;

fn jsonl_rows(
    r: impl BufRead,
    err: &dyn Fn(Option<usize>, String) -> DatasetError,
) -> Result<Rows, DatasetError> {
    let mut rows = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| err(Some(n), format!("cannot read: {e}")))?;
        // A byte-order mark, as some editors write, is not part of the first sample.
        let text = if n == 1 {
            line.strip_prefix(crate::base::text::utf8::BOM)
                .unwrap_or(&line)
        } else {
            &line
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(o)) => rows.push((n, o)),
            Ok(_) => return Err(err(Some(n), "a sample must be a JSON object".into())),
            Err(e) => return Err(err(Some(n), format!("not valid JSON: {e}"))),
        }
    }
    Ok(rows)
}

fn array_rows(
    f: std::fs::File,
    err: &dyn Fn(Option<usize>, String) -> DatasetError,
) -> Result<Rows, DatasetError> {
    let mut r = std::io::BufReader::new(f);
    skip_bom(&mut r).map_err(|e| err(None, format!("cannot read: {e}")))?;
    let v: Value = serde_json::from_reader(r)
        .map_err(|e| err(Some(e.line()), format!("not valid JSON: {e}")))?;
    let Value::Array(items) = v else {
        return Err(err(
            None,
            "a JSON dataset must be an array of samples".into(),
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::Object(o) => Ok((i + 1, o)),
            _ => Err(err(
                Some(i + 1),
                format!("sample {} of the array is not a JSON object", i + 1),
            )),
        })
        .collect()
}

/// Skips a UTF-8 byte-order mark at the start of `r`, as some editors write.
fn skip_bom(r: &mut impl BufRead) -> std::io::Result<()> {
    const MARK: &[u8] = "\u{feff}".as_bytes();
    if r.fill_buf()?.starts_with(MARK) {
        r.consume(MARK.len());
    }
    Ok(())
}

fn csv_rows(
    f: std::fs::File,
    err: &dyn Fn(Option<usize>, String) -> DatasetError,
) -> Result<Rows, DatasetError> {
    let mut r = csv::ReaderBuilder::new().flexible(false).from_reader(f);
    let headers = r
        .headers()
        .map_err(|e| err(Some(1), format!("cannot read the header row: {e}")))?
        .clone();
    let mut rows = Vec::new();
    for record in r.records() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            err(line, format!("not a valid CSV record: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let mut row = Map::new();
        for (name, value) in headers.iter().zip(record.iter()) {
            let value = Value::String(value.to_string());
            match name.split_once('.') {
                Some((obj @ ("vars" | "metadata"), key)) if !key.is_empty() => {
                    let slot = row
                        .entry(obj.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(m) = slot {
                        m.insert(key.to_string(), value);
                    }
                }
                _ => {
                    row.insert(name.to_string(), value);
                }
            }
        }
        rows.push((line, row));
    }
    Ok(rows)
}

/// The fields a sample may have besides its id.
const FIELDS: [&str; 6] = ["id", "input", "expected", "target", "vars", "metadata"];

/// A sample from a row; the error says what is wrong with it.
fn sample_of(mut row: Map<String, Value>, line: usize, key: &str) -> Result<Sample, String> {
    let id = match id_in(&row, key) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        Some(Value::String(_)) => return Err(format!("`{key}` is empty")),
        Some(_) => return Err(format!("`{key}` must be a string or a whole number")),
        None => {
            return Err(format!(
                "no `{key}`: every sample needs a stable id (a row number would change when rows are added)"
            ))
        }
    };
    for k in row.keys() {
        if !FIELDS.contains(&k.as_str()) && k != key {
            return Err(format!(
                "unknown field `{}`; a sample has {}",
                crate::base::text::sanitize::sanitize(k),
                FIELDS.join(", ")
            ));
        }
    }
    let input = row
        .remove("input")
        .ok_or_else(|| "no `input`: what the plan is given".to_string())?;
    let expected = match (row.remove("expected"), row.remove("target")) {
        (Some(_), Some(_)) => {
            return Err("`expected` and `target` are the same field; give one".into())
        }
        (e, t) => e.or(t),
    };
    let object = |row: &mut Map<String, Value>, name: &str| match row.remove(name) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(format!("`{name}` must be an object")),
    };
    let vars = object(&mut row, "vars")?;
    let metadata = object(&mut row, "metadata")?;
    let hash = content_hash(&id, &input, expected.as_ref(), &vars, &metadata);
    Ok(Sample {
        id,
        input,
        expected,
        vars,
        metadata,
        hash,
        line,
    })
}

/// The id at `key`: a top-level field, or `metadata.NAME` / `vars.NAME`.
fn id_in<'r>(row: &'r Map<String, Value>, key: &str) -> Option<&'r Value> {
    match key.split_once('.') {
        Some((obj @ ("vars" | "metadata"), name)) => row.get(obj)?.get(name),
        _ => row.get(key),
    }
}

/// SHA-256 of the sample's content, as compact JSON with sorted keys.
fn content_hash(
    id: &str,
    input: &Value,
    expected: Option<&Value>,
    vars: &Map<String, Value>,
    metadata: &Map<String, Value>,
) -> String {
    let content = serde_json::json!({
        "id": id,
        "input": input,
        "expected": expected,
        "vars": vars,
        "metadata": metadata,
    });
    let mut h = Sha256::new();
    h.update(content.to_string().as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    #[test]
    fn a_byte_order_mark_is_read_past_in_every_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bom = "\u{feff}";
        for (name, text) in [
            (
                "b.jsonl",
                format!("{bom}{{\"id\":\"a\",\"input\":\"x\"}}\n"),
            ),
            ("b.json", format!("{bom}[{{\"id\":\"a\",\"input\":\"x\"}}]")),
            ("b.csv", format!("{bom}id,input\na,x\n")),
            ("b.data", format!("{bom}[{{\"id\":\"a\",\"input\":\"x\"}}]")),
        ] {
            let d = load(&write(dir.path(), name, &text), None)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d.samples.len(), 1, "{name}");
            assert_eq!(d.samples[0].id, "a", "{name}: the id column keeps its name");
        }
    }

    #[test]
    fn a_number_beyond_f64_or_nesting_too_deep_is_an_error_at_its_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for (name, text) in [
            (
                "n.jsonl",
                "{\"id\":\"a\",\"input\":1}\n{\"id\":\"b\",\"input\":1e400}\n".to_string(),
            ),
            (
                "d.jsonl",
                format!("{{\"id\":\"a\",\"input\":1}}\n{{\"id\":\"b\",\"input\":{deep}}}\n"),
            ),
        ] {
            let e = load(&write(dir.path(), name, &text), None).expect_err(name);
            assert_eq!(e.line, Some(2), "{name}: {e}");
        }
    }

    #[test]
    fn the_three_formats_read_the_same_samples() {
        let dir = tempfile::tempdir().expect("tempdir");
        let jsonl = write(
            dir.path(),
            "d.jsonl",
            "{\"id\":\"a\",\"input\":\"2+2\",\"expected\":\"4\",\"vars\":{\"lang\":\"en\"},\"metadata\":{\"level\":\"easy\"}}\n\n{\"input\":\"3+3\",\"id\":\"b\",\"target\":\"6\"}\n",
        );
        let csv = write(
            dir.path(),
            "d.csv",
            "id,input,expected,vars.lang,metadata.level\na,2+2,4,en,easy\n",
        );
        let array = write(
            dir.path(),
            "d.json",
            "[{\"id\":\"a\",\"input\":\"2+2\",\"expected\":\"4\",\"vars\":{\"lang\":\"en\"},\"metadata\":{\"level\":\"easy\"}}]",
        );
        let j = load(&jsonl, None).expect("jsonl");
        assert_eq!(j.format, Format::Jsonl);
        assert_eq!(j.samples.len(), 2);
        assert_eq!(j.samples[1].line, 3, "the blank line is counted, not read");
        assert_eq!(
            j.samples[1].expected,
            Some(Value::from("6")),
            "target reads as expected"
        );
        let c = load(&csv, None).expect("csv");
        assert_eq!(c.format, Format::Csv);
        let a = load(&array, None).expect("array");
        assert_eq!(a.format, Format::JsonArray);
        for other in [&c.samples[0], &a.samples[0]] {
            assert_eq!(other.id, "a");
            assert_eq!(other.vars, j.samples[0].vars);
            assert_eq!(other.metadata, j.samples[0].metadata);
            assert_eq!(other.hash, j.samples[0].hash, "same content, same hash");
        }
    }

    #[test]
    fn a_changed_row_under_the_same_id_hashes_differently_and_key_order_does_not_matter() {
        let dir = tempfile::tempdir().expect("tempdir");
        let one = write(
            dir.path(),
            "1.jsonl",
            "{\"id\":7,\"input\":{\"x\":1,\"y\":2}}\n",
        );
        let reordered = write(
            dir.path(),
            "2.jsonl",
            "{\"input\":{\"y\":2,\"x\":1},\"id\":\"7\"}\n",
        );
        let changed = write(
            dir.path(),
            "3.jsonl",
            "{\"id\":7,\"input\":{\"x\":1,\"y\":3}}\n",
        );
        let h = |p: &Path| load(p, None).expect("load").samples[0].hash.clone();
        assert_eq!(h(&one), h(&reordered), "a number id reads as its digits");
        assert_ne!(h(&one), h(&changed));
    }

    #[test]
    fn a_declared_key_gives_the_id() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = write(
            dir.path(),
            "k.jsonl",
            "{\"input\":\"q\",\"metadata\":{\"qid\":\"Q-17\"}}\n",
        );
        let d = load(&p, Some("metadata.qid")).expect("load");
        assert_eq!(d.samples[0].id, "Q-17");
        let e = load(&p, None).expect_err("no id");
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("stable id"), "{e}");
    }

    #[test]
    fn bad_rows_are_named_by_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cases = [
            (
                "dup.jsonl",
                "{\"id\":\"a\",\"input\":1}\n{\"id\":\"a\",\"input\":2}\n",
                Some(2),
                "also the id of line 1",
            ),
            (
                "syntax.jsonl",
                "{\"id\":\"a\",\"input\":1}\n{\"id\":\n",
                Some(2),
                "not valid JSON",
            ),
            ("scalar.jsonl", "42\n", Some(1), "JSON object"),
            ("noinput.jsonl", "{\"id\":\"a\"}\n", Some(1), "no `input`"),
            (
                "extra.jsonl",
                "{\"id\":\"a\",\"input\":1,\"answer\":2}\n",
                Some(1),
                "unknown field `answer`",
            ),
            (
                "both.jsonl",
                "{\"id\":\"a\",\"input\":1,\"expected\":2,\"target\":2}\n",
                Some(1),
                "give one",
            ),
            (
                "vars.jsonl",
                "{\"id\":\"a\",\"input\":1,\"vars\":[1]}\n",
                Some(1),
                "`vars` must be an object",
            ),
            (
                "empty_id.jsonl",
                "{\"id\":\" \",\"input\":1}\n",
                Some(1),
                "`id` is empty",
            ),
            (
                "float_id.jsonl",
                "{\"id\":1.5,\"input\":1}\n",
                Some(1),
                "whole number",
            ),
            (
                "ragged.csv",
                "id,input\na,1\nb,2,3\n",
                Some(3),
                "CSV record",
            ),
            ("obj.json", "{\"id\":\"a\"}", None, "array of samples"),
            ("empty.jsonl", "\n\n", None, "no samples"),
        ];
        for (name, text, line, says) in cases {
            let p = write(dir.path(), name, text);
            let e = load(&p, None).expect_err(name);
            assert_eq!(e.line, line, "{name}: {e}");
            assert!(e.message.contains(says), "{name}: {e}");
            assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
        }
        let missing = load(&dir.path().join("none.jsonl"), None).expect_err("missing");
        assert!(missing.message.contains("cannot read"), "{missing}");
    }

    #[test]
    fn a_file_without_an_extension_is_read_by_its_first_character() {
        let dir = tempfile::tempdir().expect("tempdir");
        let array = write(dir.path(), "data", "  \n [{\"id\":\"a\",\"input\":1}]");
        assert_eq!(load(&array, None).expect("array").format, Format::JsonArray);
        let lines = write(dir.path(), "data2", "{\"id\":\"a\",\"input\":1}\n");
        assert_eq!(load(&lines, None).expect("lines").format, Format::Jsonl);
    }
}
