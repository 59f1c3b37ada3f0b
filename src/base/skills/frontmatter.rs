//! The YAML front matter of a SKILL.md: found between a first line `---` and the next
//! line `---`, parsed and checked (`name`, `description`, optional `uses`).

use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use super::error::SkillError;

/// Longest skill name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Most skills one `uses:` list may name.
pub const MAX_USES: usize = 32;

/// The fields of a front matter plexus reads; others (license, metadata…) are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    /// Skill name (equal to its folder's name).
    pub name: String,
    /// What the skill does and when to use it.
    pub description: String,
    /// Skills this one activates in turn, in order.
    pub uses: Vec<String>,
}

/// Where the front matter and the body lie in the bytes of a SKILL.md.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split<'a> {
    /// The YAML between the two `---` lines (starts on line 2 of the file).
    pub yaml: &'a str,
    /// Byte offset of the body (just after the closing `---` line).
    pub body_start: usize,
}

/// Checks a skill name: 1 to 64 characters among ASCII letters, digits, `-`, `_` and `.`,
/// not starting with `.` (so a name is never a path).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("longer than {MAX_NAME_CHARS} characters"));
    }
    if name.starts_with('.') {
        return Err("starts with `.`".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "character {c:?} (only ASCII letters, digits, `-`, `_`, `.`)"
        ));
    }
    Ok(())
}

/// A line without its end (`\n`, `\r\n`) and trailing blanks.
fn trimmed(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

/// 1-based line of byte offset `at` in `bytes`.
pub(crate) fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &bytes[..at.min(bytes.len())]).count()
}

/// Finds the front matter in `bytes` (the whole file, or its first bytes when
/// `truncated`). The file must start with a line `---` (a UTF-8 byte order mark before it
/// is allowed); the front matter ends at the next line `---`.
pub(crate) fn split<'a>(
    bytes: &'a [u8],
    truncated: bool,
    path: &Path,
) -> Result<Split<'a>, SkillError> {
    let err = |line: usize, message: String| SkillError::FrontMatter {
        path: path.to_path_buf(),
        line,
        message,
    };
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let first_end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i + 1);
    if trimmed(&bytes[start..first_end]) != b"---" {
        return Err(err(
            1,
            "no front matter: a SKILL.md starts with a line `---`, then `name:` and \
             `description:`, then a line `---`"
                .into(),
        ));
    }
    let mut at = first_end;
    while at < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
        // a last line cut by the read limit is not a whole line
        let whole = end < bytes.len() || !truncated || bytes[end - 1] == b'\n';
        if whole && trimmed(&bytes[at..end]) == b"---" {
            let yaml =
                std::str::from_utf8(&bytes[first_end..at]).map_err(|e| SkillError::NotUtf8 {
                    path: path.to_path_buf(),
                    line: line_of(bytes, first_end + e.valid_up_to()),
                })?;
            return Ok(Split {
                yaml,
                body_start: end,
            });
        }
        at = end;
    }
    Err(err(
        1,
        if truncated {
            format!(
                "front matter not closed by a line `---` within the first {} bytes",
                bytes.len()
            )
        } else {
            "front matter not closed: no line `---` after line 1".into()
        },
    ))
}

/// A serde_yaml_ng message without its `at line N column M` parts (relative to the front
/// matter, which would mislead next to the file's line).
fn yaml_message(e: &serde_yaml_ng::Error) -> String {
    let s = e.to_string();
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " at line ".len()..];
        let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n = digits(after);
        match after[n..].strip_prefix(" column ") {
            Some(col) if n > 0 && digits(col) > 0 => rest = &col[digits(col)..],
            _ => {
                out.push_str(" at line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// 1-based line in the file of the top-level key `key` (the front matter starts on line
/// 2); line 1 when it cannot be found.
fn key_line(yaml: &str, key: &str) -> usize {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(1, |i| i + 2)
}

/// What kind of YAML value this is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "list",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged value",
    }
}

/// Parses and checks the front matter YAML of the SKILL.md at `path`; `folder` is the
/// name of the skill's folder, which `name` must equal.
pub(crate) fn parse(yaml: &str, path: &Path, folder: &str) -> Result<FrontMatter, SkillError> {
    let err = |line: usize, message: String| front_matter_error(path, line, message);
    let map = mapping(yaml, path)?;
    let name = text_field(&map, yaml, "name", path)?;
    let description = text_field(&map, yaml, "description", path)?;
    if let Err(reason) = check_name(&name) {
        return Err(err(
            key_line(yaml, "name"),
            format!("`name` `{name}` is not a valid skill name: {reason}"),
        ));
    }
    if name != folder {
        return Err(SkillError::NameMismatch {
            path: path.to_path_buf(),
            line: key_line(yaml, "name"),
            name,
            folder: folder.to_string(),
        });
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(err(
            key_line(yaml, "description"),
            format!("`description` is longer than {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    let uses = uses_field(&map, yaml, path)?;
    Ok(FrontMatter {
        name,
        description,
        uses,
    })
}

/// An error of the front matter of the SKILL.md at `path`, at file line `line`.
fn front_matter_error(path: &Path, line: usize, message: String) -> SkillError {
    SkillError::FrontMatter {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// The front matter `yaml` parsed, as the mapping of fields it must be.
fn mapping(yaml: &str, path: &Path) -> Result<Mapping, SkillError> {
    let err = |line: usize, message: String| front_matter_error(path, line, message);
    let value: Value = serde_yaml_ng::from_str(yaml).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line() + 1);
        err(
            line,
            format!("malformed YAML in the front matter: {}", yaml_message(&e)),
        )
    })?;
    match value {
        Value::Mapping(m) => Ok(m),
        Value::Null => Err(err(1, "empty front matter: no `name`".into())),
        other => Err(err(
            2,
            format!(
                "the front matter must be a mapping of fields, not a {}",
                kind(&other)
            ),
        )),
    }
}

/// The required text field `key`, trimmed (an error when it is missing, empty or not a
/// string).
fn text_field(map: &Mapping, yaml: &str, key: &str, path: &Path) -> Result<String, SkillError> {
    let err = |line: usize, message: String| front_matter_error(path, line, message);
    match map.get(key) {
        None | Some(Value::Null) => Err(err(1, format!("the front matter has no `{key}`"))),
        Some(Value::String(s)) if s.trim().is_empty() => {
            Err(err(key_line(yaml, key), format!("`{key}` is empty")))
        }
        Some(Value::String(s)) => Ok(s.trim().to_string()),
        Some(other) => Err(err(
            key_line(yaml, key),
            format!("`{key}` must be a string, not a {}", kind(other)),
        )),
    }
}

/// The optional `uses` list: at most [`MAX_USES`] valid skill names (none when absent).
fn uses_field(map: &Mapping, yaml: &str, path: &Path) -> Result<Vec<String>, SkillError> {
    let err = |line: usize, message: String| front_matter_error(path, line, message);
    let items = match map.get("uses") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Sequence(items)) => items,
        Some(other) => {
            return Err(err(
                key_line(yaml, "uses"),
                format!(
                    "`uses` must be a list of skill names, not a {}",
                    kind(other)
                ),
            ))
        }
    };
    let line = key_line(yaml, "uses");
    if items.len() > MAX_USES {
        return Err(err(
            line,
            format!("`uses` names {} skills, more than {MAX_USES}", items.len()),
        ));
    }
    let mut uses = Vec::with_capacity(items.len());
    for item in items {
        let Value::String(s) = item else {
            return Err(err(
                line,
                format!("`uses` must list skill names, not a {}", kind(item)),
            ));
        };
        check_name(s).map_err(|reason| {
            err(
                line,
                format!("`uses` entry `{s}` is not a valid skill name: {reason}"),
            )
        })?;
        uses.push(s.clone());
    }
    Ok(uses)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_never_paths() {
        for ok in ["a", "pdf-report", "data_viz.v2", "A1"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "a/b",
            "a\\b",
            "a b",
            "名字",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_finds_the_body_and_refuses_a_cut_closing_line() {
        let p = Path::new("SKILL.md");
        let text = b"---\nname: a\n---\nbody";
        let s = split(text, false, p).expect("split");
        assert_eq!(s.yaml, "name: a\n");
        assert_eq!(&text[s.body_start..], b"body");
        // `---` as the last bytes of a truncated read may be the start of `----…`
        assert!(split(b"---\nname: a\n---", true, p).is_err());
        assert!(split(b"---\nname: a\n---", false, p).is_ok());
        assert!(split(b"---\nname: a\n---\n", true, p).is_ok());
    }

    #[test]
    fn yaml_positions_are_removed_from_messages() {
        let e = serde_yaml_ng::from_str::<Value>("a: [1, [2]\n").expect_err("bad yaml");
        assert!(e.to_string().contains(" at line "));
        let m = yaml_message(&e);
        assert!(!m.contains(" at line "), "{m}");
        assert!(!m.is_empty());
    }
}
