//! Response parsing (SPEC §3.3): find an AgentResponse-shaped JSON object in the model's
//! text (whole text, a fenced ```json block, or the outermost `{…}`), accept
//! `{output: {atoms, summary}}` or a bare `{atoms, summary}`, and validate its shape.
//! Anything else is E002 (parse_error) or E003 (validation_error naming the field).

// Errors are the protocol's ErrorInfo, returned once per response: size does not matter.
#![allow(clippy::result_large_err)]

use std::collections::HashSet;

use serde_json::Value;

use crate::base::protocol::{Atom, ErrorCode, ErrorInfo};
use crate::data::provider::http::redact::{redact_serialized, TextRedactor};

/// The parsed output of a response.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedOutput {
    /// Atoms.
    pub atoms: Vec<Atom>,
    /// Summary (empty when absent).
    pub summary: String,
    /// The errors the model reports itself (the response's `errors`), honoured as the
    /// errors they name.
    pub errors: Vec<ErrorInfo>,
    /// What the parse did to keep the atoms' ids apart (a weak model repeats itself): an
    /// atom given again word for word is kept once; another atom under an id already
    /// used is stored under a new one. Each is a quality issue of the atom.
    pub issues: Vec<crate::base::protocol::QualityIssue>,
}

/// A quality issue about atom `id`'s id.
fn id_issue(id: &str, kind: &str, message: String) -> crate::base::protocol::QualityIssue {
    crate::base::protocol::QualityIssue {
        atom_id: id.to_string(),
        issue_type: kind.into(),
        field: "asset_id".into(),
        severity: crate::base::protocol::IssueSeverity::Warning,
        message,
    }
}

/// The errors a response's `errors` reports (`[{error_code, message}]`, read however
/// they are written: a code in any case, a bare string): each the error of its code, an
/// unknown code E008.
fn reported_errors(v: Option<&Value>) -> Vec<ErrorInfo> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|e| {
            let (code, message) = match e {
                Value::String(s) => (None, s.clone()),
                Value::Object(o) => (
                    o.get("error_code")
                        .or_else(|| o.get("code"))
                        .and_then(Value::as_str)
                        .map(str::to_ascii_uppercase),
                    o.get("message")
                        .or_else(|| o.get("error_message"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                ),
                _ => return None,
            };
            let code = code
                .and_then(|c| serde_json::from_value(Value::String(c)).ok())
                .unwrap_or(ErrorCode::E008);
            Some(ErrorInfo::new(
                code,
                format!("the model reports: {message}"),
            ))
        })
        .collect()
}

/// Largest response text accepted for parsing (bytes).
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

fn parse_error(message: impl Into<String>) -> ErrorInfo {
    ErrorInfo::new(ErrorCode::E002, message)
}

fn validation_error(field: &str, message: impl Into<String>) -> ErrorInfo {
    let mut e = ErrorInfo::new(ErrorCode::E003, format!("{field}: {}", message.into()));
    e.extra
        .insert("field".into(), Value::String(field.to_string()));
    e
}

/// The body of the first fenced block in `text` (```` ```json ```` … ```` ``` ````, or
/// a bare fence; to the end when it is not closed), trimmed.
fn fenced_block(text: &str) -> Option<&str> {
    const FENCE: &[u8] = b"```";
    let start = memchr::memmem::find(text.as_bytes(), FENCE)?;
    let after = &text[start + FENCE.len()..];
    let body_start = memchr::memchr(b'\n', after.as_bytes()).map_or(after.len(), |i| i + 1);
    let body = &after[body_start..];
    let end = memchr::memmem::find(body.as_bytes(), FENCE).unwrap_or(body.len());
    Some(body[..end].trim())
}

/// Locates and decodes the JSON object in `text`.
fn find_json(text: &str) -> Result<Value, ErrorInfo> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(parse_error("the response is empty"));
    }
    if text.len() > MAX_RESPONSE_BYTES {
        return Err(parse_error(format!(
            "the response is {} bytes, over the {} byte limit",
            text.len(),
            MAX_RESPONSE_BYTES
        )));
    }
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        return Ok(v);
    }
    let mut last_err = None;
    // fenced block: ```json ... ``` (or a bare ``` fence)
    if let Some(body) = fenced_block(trimmed) {
        match serde_json::from_str::<Value>(body) {
            Ok(v) => return Ok(v),
            Err(e) => last_err = Some(format!("the fenced JSON block does not parse: {e}")),
        }
    }
    if let (Some(open), Some(close)) = (trimmed.find('{'), trimmed.rfind('}')) {
        if open < close {
            match serde_json::from_str::<Value>(&trimmed[open..=close]) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    last_err.get_or_insert_with(|| {
                        format!("the JSON object in the response does not parse: {e}")
                    });
                }
            }
        }
    }
    Err(parse_error(last_err.unwrap_or_else(|| {
        "no JSON object found in the response".to_string()
    })))
}

#[derive(serde::Deserialize)]
struct FastEnvelope {
    #[serde(default)]
    output: Option<FastOutput>,
    #[serde(default)]
    atoms: Option<Vec<Atom>>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    errors: Option<Value>,
}

#[derive(serde::Deserialize)]
struct FastOutput {
    atoms: Vec<Atom>,
    #[serde(default)]
    summary: Option<String>,
}

/// The fast path for the common case: the JSON (found where [`find_json`] would look,
/// in the same order) deserialises straight into atoms and passes the shape checks.
/// `None` sends the text down the general path, which names precisely what is wrong.
fn parse_well_formed(text: &str, max_atoms: Option<u32>) -> Option<ParsedOutput> {
    let trimmed = text.trim();
    if trimmed.is_empty() || text.len() > MAX_RESPONSE_BYTES {
        return None;
    }
    // The candidates are found lazily: a plain JSON answer, the usual case, is parsed
    // without scanning it for fences first.
    let fenced = || fenced_block(trimmed);
    let braced = || {
        let (open, close) = (trimmed.find('{')?, trimmed.rfind('}')?);
        (open < close).then(|| &trimmed[open..=close])
    };
    let candidates = std::iter::once(Some(trimmed))
        .chain(std::iter::once_with(fenced))
        .chain(std::iter::once_with(braced))
        .flatten();
    for c in candidates {
        match serde_json::from_str::<FastEnvelope>(c) {
            Ok(env) => {
                let (atoms, summary) = match (env.output, env.atoms) {
                    (Some(o), _) => (o.atoms, o.summary),
                    (None, Some(a)) => (a, env.summary),
                    (None, None) => return None,
                };
                if max_atoms.is_some_and(|m| atoms.len() > m as usize) {
                    return None;
                }
                let mut ids = HashSet::with_capacity(atoms.len());
                if !atoms
                    .iter()
                    .all(|a| !a.asset_id.trim().is_empty() && ids.insert(a.asset_id.as_str()))
                {
                    return None;
                }
                return Some(ParsedOutput {
                    atoms,
                    summary: summary.unwrap_or_default(),
                    errors: reported_errors(env.errors.as_ref()),
                    issues: Vec::new(),
                });
            }
            // valid JSON of another shape: the general path decides (as find_json would)
            Err(e) if e.is_data() => return None,
            Err(_) => continue,
        }
    }
    None
}

/// One step of a path inside an atom.
enum Step {
    Key(String),
    Index(usize),
}

/// Whether `atom` deserializes once the children `range` of the node at `path` (in
/// the order of `node`, that node in `atom`) are removed.
fn fixed_without(atom: &Value, path: &[Step], node: &Value, range: std::ops::Range<usize>) -> bool {
    let mut probe = atom.clone();
    let target = path.iter().try_fold(&mut probe, |v, s| match s {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    });
    match (target, node) {
        (Some(Value::Object(m)), Value::Object(orig)) => {
            for k in orig.keys().skip(range.start).take(range.len()) {
                m.remove(k);
            }
        }
        (Some(Value::Array(v)), Value::Array(_)) => {
            v.drain(range);
        }
        _ => return false,
    }
    serde_json::from_value::<Atom>(probe).is_ok()
}

/// The path (`.metadata`, `.delta_audit.existing_assets[1]`, …) of the one member that
/// keeps `atom` from deserializing, found by removing children (a binary search per
/// level, so a few deserializations only); empty when no single member is to blame.
fn bad_member_path(atom: &Value) -> String {
    let mut path: Vec<Step> = Vec::new();
    let mut node = atom;
    loop {
        let n = match node {
            Value::Object(m) => m.len(),
            Value::Array(v) => v.len(),
            _ => 0,
        };
        if n == 0 || !fixed_without(atom, &path, node, 0..n) {
            break;
        }
        let (mut lo, mut hi) = (0, n);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fixed_without(atom, &path, node, lo..mid) {
                hi = mid;
            } else if fixed_without(atom, &path, node, mid..hi) {
                lo = mid;
            } else {
                break;
            }
        }
        if hi - lo != 1 {
            break;
        }
        let (step, child) = match node {
            Value::Object(m) => match m.iter().nth(lo) {
                Some((k, v)) => (Step::Key(k.clone()), v),
                None => break,
            },
            Value::Array(v) => match v.get(lo) {
                Some(c) => (Step::Index(lo), c),
                None => break,
            },
            _ => break,
        };
        path.push(step);
        node = child;
    }
    path.iter()
        .map(|s| match s {
            Step::Key(k) => format!(".{k}"),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// `parsed` with the provider's key (when it has one: `redactor`) replaced in every
/// string decoded from the answer: a string the model wrote with JSON escapes
/// (`\u0073k-…`) decodes to the key in clear, whatever the text looked like. E002 in the
/// unlikely case that the atoms no longer read once redacted.
pub fn without_secret(
    parsed: ParsedOutput,
    redactor: Option<&TextRedactor>,
) -> Result<ParsedOutput, ErrorInfo> {
    let Some(r) = redactor else {
        return Ok(parsed);
    };
    let atoms = redact_serialized(parsed.atoms, r).map_err(|e| {
        parse_error(format!(
            "the atoms held the provider's key and do not read once it is removed: {e}"
        ))
    })?;
    let summary = r.found_in(&parsed.summary).unwrap_or(parsed.summary);
    let mut errors = parsed.errors;
    for e in &mut errors {
        if let Some(m) = r.found_in(&e.message) {
            e.message = m;
        }
    }
    let mut issues = parsed.issues;
    for i in &mut issues {
        for s in [&mut i.atom_id, &mut i.message] {
            if let Some(m) = r.found_in(s) {
                *s = m;
            }
        }
    }
    Ok(ParsedOutput {
        atoms,
        summary,
        errors,
        issues,
    })
}

/// Parses a model's text into atoms and summary, validating the shape.
/// `max_atoms` caps the number of atoms (more is a validation error).
pub fn parse_response(text: &str, max_atoms: Option<u32>) -> Result<ParsedOutput, ErrorInfo> {
    let mut parsed = parse_atoms(text, max_atoms)?;
    // A number written as a string (`"confidence": "0.9"`) is read as the number.
    for a in &mut parsed.atoms {
        a.numbers_from_strings();
    }
    Ok(parsed)
}

fn parse_atoms(text: &str, max_atoms: Option<u32>) -> Result<ParsedOutput, ErrorInfo> {
    // Reasoning before the answer (`<think>…</think>`) is never read as the answer.
    let text = crate::base::text::reasoning::answer(text);
    if let Some(ok) = parse_well_formed(text, max_atoms) {
        return Ok(ok);
    }
    let root = find_json(text)?;
    let Value::Object(obj) = root else {
        return Err(validation_error(
            "$",
            "the response JSON must be an object with `output`",
        ));
    };
    let errors = reported_errors(obj.get("errors"));
    let Some((output, base)) = output_of(&obj, !errors.is_empty())? else {
        // An answer that reports only errors: those are its outcome.
        return Ok(ParsedOutput {
            atoms: Vec::new(),
            summary: String::new(),
            errors,
            issues: Vec::new(),
        });
    };
    let field = |name: &str| {
        if base.is_empty() {
            name.to_string()
        } else {
            format!("{base}.{name}")
        }
    };
    let atoms_v = match output.get("atoms") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err(validation_error(&field("atoms"), "must be an array")),
        None => return Err(validation_error(&field("atoms"), "missing")),
    };
    let summary = match output.get("summary") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(validation_error(&field("summary"), "must be a string")),
    };
    let (atoms, issues) = read_atoms(atoms_v, &field("atoms"))?;
    if let Some(max) = max_atoms {
        if atoms.len() > max as usize {
            return Err(validation_error(
                &field("atoms"),
                format!("{} atoms, at most {max} allowed", atoms.len()),
            ));
        }
    }
    Ok(ParsedOutput {
        atoms,
        summary,
        errors,
        issues,
    })
}

/// A JSON object.
type JsonObject = serde_json::Map<String, Value>;

/// The object holding the atoms (`output`, or the response itself for a bare
/// `{atoms, summary}`) and its path; `None` for an answer that has no atoms but reports
/// errors (`reports_errors`).
fn output_of(
    obj: &JsonObject,
    reports_errors: bool,
) -> Result<Option<(&JsonObject, &'static str)>, ErrorInfo> {
    match obj.get("output") {
        Some(Value::Object(o)) => Ok(Some((o, "output"))),
        Some(_) => Err(validation_error(
            "output",
            "must be an object with `atoms` and `summary`",
        )),
        None if obj.contains_key("atoms") => Ok(Some((obj, ""))),
        None if reports_errors => Ok(None),
        None => Err(validation_error(
            "output.atoms",
            "missing: the response has neither `output.atoms` nor `atoms`",
        )),
    }
}

/// Reads the atoms of the array at `field`, keeping their ids apart (see
/// [`ParsedOutput::issues`]).
fn read_atoms(
    atoms_v: &[Value],
    field: &str,
) -> Result<(Vec<Atom>, Vec<crate::base::protocol::QualityIssue>), ErrorInfo> {
    let mut atoms = Vec::with_capacity(atoms_v.len());
    let mut ids: std::collections::HashMap<String, &Value> = Default::default();
    let mut issues = Vec::new();
    for (i, a) in atoms_v.iter().enumerate() {
        let f = format!("{field}[{i}]");
        if !a.is_object() {
            return Err(validation_error(&f, "each atom must be an object"));
        }
        let Some(s) = a
            .get("asset_id")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
        else {
            return Err(validation_error(
                &format!("{f}.asset_id"),
                "missing or not a non-empty string",
            ));
        };
        match ids.get(s) {
            // The same atom again, word for word: kept once.
            Some(first) if *first == a => {
                issues.push(id_issue(
                    s,
                    "repeated_atom",
                    "the answer gave this atom again, word for word; it is kept once".into(),
                ));
            }
            // Another atom under an id already used: stored under an id of its own.
            Some(_) => {
                let new_id = fresh_id(s, &ids, atoms_v);
                issues.push(id_issue(&new_id, "duplicate_asset_id", format!("the answer gave two different atoms the id `{s}`; this one is stored as `{new_id}`")));
                let mut renamed = a.clone();
                renamed["asset_id"] = Value::String(new_id.clone());
                let atom = atom_of(&renamed, a, &f)?;
                ids.insert(new_id, a);
                atoms.push(atom);
            }
            None => {
                ids.insert(s.to_string(), a);
                atoms.push(atom_of(a, a, &f)?);
            }
        }
    }
    Ok((atoms, issues))
}

/// The first `ID_N` (N from 2) that is neither an id used so far nor one given in the
/// answer.
fn fresh_id(
    id: &str,
    ids: &std::collections::HashMap<String, &Value>,
    atoms_v: &[Value],
) -> String {
    (2..)
        .map(|n| format!("{id}_{n}"))
        .find(|c| {
            !ids.contains_key(c)
                && !atoms_v
                    .iter()
                    .any(|o| o.get("asset_id").and_then(Value::as_str) == Some(c))
        })
        .unwrap_or_default()
}

/// Decodes the atom `v` at `f` (`given`, the atom as the answer wrote it, names the
/// member that does not decode).
fn atom_of(v: &Value, given: &Value, f: &str) -> Result<Atom, ErrorInfo> {
    <Atom as serde::Deserialize>::deserialize(v)
        .map_err(|e| validation_error(&format!("{f}{}", bad_member_path(given)), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_wrapped_bare_and_fenced() {
        let a = r#"{"asset_id":"A1","content":{"x":"y"}}"#;
        for text in [
            format!(r#"{{"output":{{"atoms":[{a}],"summary":"s"}}}}"#),
            format!(r#"{{"atoms":[{a}],"summary":"s"}}"#),
            format!(
                "Sure!\n```json\n{{\"output\":{{\"atoms\":[{a}],\"summary\":\"s\"}}}}\n```\nDone."
            ),
            format!("prefix {{\"atoms\":[{a}]}} suffix"),
        ] {
            let p = parse_response(&text, None).expect(&text);
            assert_eq!(p.atoms.len(), 1);
            assert_eq!(p.atoms[0].asset_id, "A1");
        }
    }

    #[test]
    fn a_key_decoded_from_escapes_is_redacted_from_atoms_and_summary() {
        const KEY: &str = "sk-parse-0123456789ab";
        // `\u0073\u006b` is `sk`: the text does not hold the key, the decoded JSON does.
        let text = r#"{"atoms":[{"asset_id":"A1","content":{"x":"key \u0073\u006b-parse-0123456789ab"},
            "metadata":{"tags":["\u0073k-parse-0123456789ab"]}}],"summary":"sk-parse-0123456789\u0061b"}"#;
        assert!(!text.contains(KEY));
        let parsed = parse_response(text, None).expect("parses");
        let r = TextRedactor::new(Some(KEY));
        let clean = without_secret(parsed.clone(), Some(&r)).expect("redacted");
        let all = serde_json::to_string(&clean.atoms).expect("json");
        assert!(!all.contains(KEY), "{all}");
        assert_eq!(clean.atoms[0].content["x"], "key [redacted]");
        assert_eq!(clean.summary, "[redacted]");
        // No secret: nothing changes.
        assert_eq!(without_secret(parsed.clone(), None).expect("same"), parsed);
    }

    #[test]
    fn a_key_the_model_used_as_an_id_twice_is_redacted_from_the_quality_issues() {
        const KEY: &str = "sk-parse-0123456789ab";
        let text = r#"{"atoms":[{"asset_id":"\u0073k-parse-0123456789ab","content":{"x":1}},
            {"asset_id":"\u0073k-parse-0123456789ab","content":{"x":2}}],"summary":"s"}"#;
        let parsed = parse_response(text, None).expect("parses");
        assert_eq!(parsed.issues.len(), 1, "{:?}", parsed.issues);
        assert!(parsed.issues[0].message.contains(KEY));
        let clean = without_secret(parsed, Some(&TextRedactor::new(Some(KEY)))).expect("redacted");
        let all = serde_json::to_string(&clean.issues).expect("json");
        assert!(!all.contains(KEY), "{all}");
        assert!(all.contains("[redacted]"), "{all}");
    }
}
