//! Response parsing (SPEC §3.3): find an AgentResponse-shaped JSON object in the model's
//! text (whole text, a fenced ```json block, or the outermost `{…}`), accept
//! `{output: {atoms, summary}}` or a bare `{atoms, summary}`, and validate its shape.
//! Anything else is E002 (parse_error) or E003 (validation_error naming the field).

use std::collections::HashSet;

use serde_json::Value;

use crate::protocol::{Atom, ErrorCode, ErrorInfo};

/// The parsed output of a response.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedOutput {
    /// Atoms.
    pub atoms: Vec<Atom>,
    /// Summary (empty when absent).
    pub summary: String,
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
    if let Some(start) = trimmed.find("```") {
        let after = &trimmed[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        let body = body.find("```").map(|end| &body[..end]).unwrap_or(body);
        match serde_json::from_str::<Value>(body.trim()) {
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

/// Parses a model's text into atoms and summary, validating the shape.
/// `max_atoms` caps the number of atoms (more is a validation error).
pub fn parse_response(text: &str, max_atoms: Option<u32>) -> Result<ParsedOutput, ErrorInfo> {
    let root = find_json(text)?;
    let Value::Object(obj) = root else {
        return Err(validation_error(
            "$",
            "the response JSON must be an object with `output`",
        ));
    };
    let (output, base) = match obj.get("output") {
        Some(Value::Object(o)) => (o, "output"),
        Some(_) => {
            return Err(validation_error(
                "output",
                "must be an object with `atoms` and `summary`",
            ))
        }
        None if obj.contains_key("atoms") => (&obj, ""),
        None => {
            return Err(validation_error(
                "output.atoms",
                "missing: the response has neither `output.atoms` nor `atoms`",
            ))
        }
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
    if let Some(max) = max_atoms {
        if atoms_v.len() > max as usize {
            return Err(validation_error(
                &field("atoms"),
                format!("{} atoms, at most {max} allowed", atoms_v.len()),
            ));
        }
    }
    let mut atoms = Vec::with_capacity(atoms_v.len());
    let mut ids = HashSet::new();
    for (i, a) in atoms_v.iter().enumerate() {
        let f = format!("{}[{i}]", field("atoms"));
        if !a.is_object() {
            return Err(validation_error(&f, "each atom must be an object"));
        }
        match a.get("asset_id") {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                if !ids.insert(s.clone()) {
                    return Err(validation_error(
                        &format!("{f}.asset_id"),
                        format!("duplicate asset_id `{s}`"),
                    ));
                }
            }
            _ => {
                return Err(validation_error(
                    &format!("{f}.asset_id"),
                    "missing or not a non-empty string",
                ))
            }
        }
        let atom: Atom =
            serde_json::from_value(a.clone()).map_err(|e| validation_error(&f, e.to_string()))?;
        atoms.push(atom);
    }
    Ok(ParsedOutput { atoms, summary })
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
}
