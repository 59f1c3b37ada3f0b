//! `fetch_reference`: what a task was given by reference, fetched on demand (seed 000
//! §4.3, "按需获取"). A task whose context holds an input passed by reference (only its
//! paths, stats and a preview) is offered this tool, whatever tools its plan lists: by the
//! input's `ref_id`, the whole data, a JSONPath into it, or a section of a text, within a
//! token limit.

use std::sync::Arc;

use serde_json::{json, Value};

use super::args::{int_arg, str_arg};
use super::context::ToolContext;
use super::error::{ToolError, ToolErrorCode};
use super::tool::{Tool, ToolData, ToolFuture};
use crate::base::jsonpath::JsonPath;
use crate::base::text::summary::{summarize_text, Strategy};
use crate::base::tokens::TokenCounter;
use crate::data::resolve::file::{md_sections, text_sections};

/// The tool's name, as the model calls it.
pub use crate::data::provider::sim_react::FETCH_REFERENCE;

/// Tokens a fetch returns when the call names no limit.
pub const DEFAULT_FETCH_TOKENS: u64 = 2_000;

/// Most tokens one fetch may return.
pub const MAX_FETCH_TOKENS: u64 = 50_000;

/// One input a task was given by reference: its id (the `source` its payload names) and
/// the data as resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetchable {
    /// The input's name, e.g. `file:docs/paper.md` or `task_output:TASK_A`.
    pub ref_id: String,
    /// The data the reference resolved to.
    pub data: Arc<Value>,
}

/// Fetches from the inputs of one task.
#[derive(Debug, Clone)]
pub struct FetchReference {
    inputs: Arc<[Fetchable]>,
    counter: TokenCounter,
}

impl FetchReference {
    /// The tool over `inputs`, counting with `counter`.
    pub fn new(inputs: Arc<[Fetchable]>, counter: TokenCounter) -> FetchReference {
        FetchReference { inputs, counter }
    }
}

impl Tool for FetchReference {
    fn name(&self) -> &str {
        FETCH_REFERENCE
    }

    fn description(&self) -> &str {
        "Fetches data this task was given by reference (an input whose transfer_mode is \
         `reference`). Name it by its ref_id; optionally a JSONPath into it (e.g. \
         $.atoms[3] or $.atoms[?(@.atom_type == 'claim')]) or a section of its text by heading, and the most \
         tokens to return (default 2000). Longer data is cut at a sentence and says so."
    }

    fn input_schema(&self) -> Value {
        let ids: Vec<&str> = self.inputs.iter().map(|i| i.ref_id.as_str()).collect();
        json!({
            "type": "object",
            "properties": {
                "ref_id": {"type": "string", "enum": ids,
                           "description": "The input's ref_id, as its reference names it"},
                "path": {"type": "string", "maxLength": 1000,
                         "description": "A JSONPath into the data: .name, [n], [*], [?(@.field == 'value')], e.g. $.atoms[*].content"},
                "section": {"type": "string", "maxLength": 500,
                            "description": "A section of the text by its heading, e.g. Introduction"},
                "max_tokens": {"type": "integer", "minimum": 1, "maximum": MAX_FETCH_TOKENS,
                               "description": "Most tokens to return (default 2000)"}
            },
            "required": ["ref_id"],
            "additionalProperties": false
        })
    }

    fn is_idempotent(&self, _args: &Value) -> bool {
        // Two tasks may name different data by the same id: never shared across them.
        false
    }

    fn run<'a>(&'a self, _ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move { self.fetch(args) })
    }
}

impl FetchReference {
    fn fetch(&self, args: &Value) -> Result<ToolData, ToolError> {
        let id = str_arg(args, "ref_id").unwrap_or_default();
        let input = self.inputs.iter().find(|i| i.ref_id == id).ok_or_else(|| {
            let ids: Vec<&str> = self.inputs.iter().map(|i| i.ref_id.as_str()).collect();
            ToolError::not_found(
                ToolErrorCode::NotFound,
                format!(
                    "no input `{id}`; this task's references are: {}",
                    ids.join(", ")
                ),
            )
        })?;
        let limit = int_arg(args, "max_tokens").map_or(DEFAULT_FETCH_TOKENS, |n| {
            n.clamp(1, MAX_FETCH_TOKENS as i64) as u64
        });
        let selected = select(&input.data, args)?;
        let text = match &selected {
            Value::String(s) => s.clone(),
            v => serde_json::to_string_pretty(v).unwrap_or_default(),
        };
        let total = self.counter.count(&text);
        let sent = if total > limit {
            summarize_text(&text, limit, Strategy::Truncate, &self.counter)
        } else {
            text
        };
        let returned = self.counter.count(&sent);
        let cut = returned < total;
        let brief = if cut {
            format!("{id}: {returned} of {total} tokens (cut at the limit; fetch a path or section for the rest)")
        } else {
            format!("{id}: {total} tokens, whole")
        };
        let standard = format!("{brief}\n\n{sent}");
        let data = json!({"ref_id": id, "tokens": returned, "total_tokens": total,
                          "truncated": cut, "content": sent});
        Ok(ToolData::json(data, brief, standard))
    }
}

/// The part of `data` the call's `path` or `section` names (the whole data without either).
fn select(data: &Value, args: &Value) -> Result<Value, ToolError> {
    let mut out = data.clone();
    if let Some(p) = str_arg(args, "path") {
        let path =
            JsonPath::parse(p).map_err(|e| ToolError::arguments(format!("path `{p}`: {e}")))?;
        let found = path.select(data);
        if found.is_empty() {
            return Err(ToolError::not_found(
                ToolErrorCode::NotFound,
                format!(
                    "the path `{p}` selects nothing; the data's keys are: {}",
                    keys(data)
                ),
            ));
        }
        out = if path.is_multi() {
            Value::Array(found.into_iter().cloned().collect())
        } else {
            found[0].clone()
        };
    }
    if let Some(name) = str_arg(args, "section") {
        out = section_of(&out, name)?;
    }
    Ok(out)
}

/// Section `name` of the text in `data` (a file's `text`, a string, or a resolved
/// `sections` map).
fn section_of(data: &Value, name: &str) -> Result<Value, ToolError> {
    if let Some(map) = data.get("sections").and_then(Value::as_object) {
        if let Some((_, t)) = map.iter().find(|(h, _)| h.eq_ignore_ascii_case(name)) {
            return Ok(t.clone());
        }
    }
    let text = data
        .as_str()
        .or_else(|| data.get("text").and_then(Value::as_str))
        .ok_or_else(|| {
            ToolError::arguments(format!(
                "`section` needs text; this data has the keys: {}",
                keys(data)
            ))
        })?;
    let names = [name.to_string()];
    let md = data
        .get("format")
        .and_then(Value::as_str)
        .is_none_or(|f| f == "md" || f == "markdown");
    // A Markdown heading first; else a title line, as PDF and plain text have them.
    let first = |(found, _): (Vec<(String, String)>, Vec<String>)| found.into_iter().next();
    md.then(|| first(md_sections(text, &names)))
        .flatten()
        .or_else(|| first(text_sections(text, &names)))
        .map(|(_, t)| Value::String(t))
        .ok_or_else(|| {
            ToolError::not_found(
                ToolErrorCode::NotFound,
                format!("no section `{name}` in the text"),
            )
        })
}

/// The keys of `data`, for an error message.
fn keys(data: &Value) -> String {
    match data {
        Value::Object(o) => o.keys().map(String::as_str).collect::<Vec<_>>().join(", "),
        Value::Array(a) => format!("an array of {}", a.len()),
        _ => "none (a single value)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> FetchReference {
        let atoms: Vec<Value> = (0..40)
            .map(|i| {
                json!({"atom_id": format!("a{i}"), "atom_type": "claim",
                            "content": {"text": format!("Claim {i} about the attention heads.")}})
            })
            .collect();
        let inputs: Arc<[Fetchable]> = Arc::from(vec![
            Fetchable {
                ref_id: "task_output:A".into(),
                data: Arc::new(json!({"atoms": atoms, "relations": []})),
            },
            Fetchable {
                ref_id: "file:paper.md".into(),
                data: Arc::new(json!({"path": "paper.md", "format": "md",
                    "text": "# Intro\nAttention is all.\n# 2 Method\nHeads split the work.\n"})),
            },
        ]);
        FetchReference::new(inputs, TokenCounter::default())
    }

    fn content(r: Result<ToolData, ToolError>) -> (String, Value) {
        let d = r.expect("fetched");
        let v = match d.payload {
            super::super::tool::Payload::Json(v) => v,
            other => panic!("not JSON: {other:?}"),
        };
        (v["content"].as_str().unwrap_or_default().to_string(), v)
    }

    #[test]
    fn a_path_selects_atoms_and_a_limit_cuts_and_says_so() {
        let t = tool();
        let (text, v) = content(
            t.fetch(&json!({"ref_id": "task_output:A", "path": "$.atoms[?(@.atom_id == 'a7')]"})),
        );
        assert!(
            text.contains("Claim 7 about") && !text.contains("Claim 8 about"),
            "{text}"
        );
        assert_eq!(v["truncated"], false);
        let (_, v) = content(t.fetch(&json!({"ref_id": "task_output:A", "max_tokens": 50})));
        assert_eq!(v["truncated"], true);
        assert!(v["tokens"].as_u64().expect("tokens") <= 55, "{v}");
        assert!(v["total_tokens"].as_u64().expect("total") > 500, "{v}");
    }

    #[test]
    fn a_section_by_heading_even_numbered() {
        let t = tool();
        let (text, _) = content(t.fetch(&json!({"ref_id": "file:paper.md", "section": "Method"})));
        assert!(
            text.contains("Heads split the work.") && !text.contains("Attention is all"),
            "{text}"
        );
    }

    #[test]
    fn unknown_ids_paths_and_sections_are_errors_that_name_what_there_is() {
        let t = tool();
        let e = t
            .fetch(&json!({"ref_id": "task_output:Z"}))
            .expect_err("unknown");
        assert!(e.message.contains("task_output:A"), "{}", e.message);
        let e = t
            .fetch(&json!({"ref_id": "task_output:A", "path": "$.nothing"}))
            .expect_err("empty");
        assert!(e.message.contains("atoms"), "{}", e.message);
        let e = t
            .fetch(&json!({"ref_id": "file:paper.md", "section": "Results"}))
            .expect_err("none");
        assert!(e.message.contains("Results"), "{}", e.message);
    }
}
