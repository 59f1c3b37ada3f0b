//! Transfer payloads of one input (§4): the data whole, a summary of it, or a reference
//! with the paths available, data stats and an inline preview.

use serde_json::{json, Value};

use super::select::DataType;
use super::table::{summarize_table, table_rows};
use crate::base::text::blocks::whole_blocks;
use crate::base::text::summary::{
    summarize_atoms_with, summarize_text, text_of, Strategy, SummaryFields,
};
use crate::base::tokens::TokenCounter;

/// Atoms of a value: its `atoms` array, or the value itself when it is an array.
pub(super) fn atoms_of(v: &Value) -> Option<&Vec<Value>> {
    match v {
        Value::Array(a) => Some(a),
        Value::Object(o) => o.get("atoms").and_then(Value::as_array),
        _ => None,
    }
}

/// Keeps only the atoms of `v` (its `atoms` array, or `v` itself when it is an array)
/// whose priority level passes `keep`.
pub(super) fn retain_atoms_by_priority(v: &mut Value, keep: impl Fn(u8) -> bool) {
    let atoms = match v {
        Value::Array(a) => Some(a),
        Value::Object(o) => o.get_mut("atoms").and_then(Value::as_array_mut),
        _ => None,
    };
    if let Some(atoms) = atoms {
        atoms.retain(|a| {
            keep(super::trim::atom_priority(
                a.get("atom_type").and_then(Value::as_str).unwrap_or(""),
            ))
        });
    }
}

/// Bytes of a value's JSON text, without writing it (escapes not counted).
fn json_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!*b),
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => s.len() + 2,
        Value::Array(a) => 2 + a.iter().map(|x| json_len(x) + 1).sum::<usize>(),
        Value::Object(o) => {
            2 + o
                .iter()
                .map(|(k, x)| k.len() + 4 + json_len(x))
                .sum::<usize>()
        }
    }
}

/// Tokens of a value: a string's text, anything else as JSON.
pub(super) fn count(v: &Value, c: &TokenCounter) -> u64 {
    match v {
        Value::String(s) => c.count(s),
        other => c.count(&other.to_string()),
    }
}

/// A summary of `data` (of type `data_type`) within about `target` tokens: code and
/// formulas as whole blocks, tables as their header, statistics and top rows, anything
/// else made by `strategy`, the atoms' `fields` kept or summarised.
pub(super) fn summarize(
    data: &Value,
    data_type: DataType,
    target: u64,
    strategy: Strategy,
    fields: &SummaryFields,
    c: &TokenCounter,
) -> Value {
    match (data_type, text_field(data), table_rows(data)) {
        (DataType::Code | DataType::Formula, Some(text), _) => {
            with_text(data, whole_blocks(text, target, c))
        }
        (DataType::Table, _, Some(rows)) => {
            summarize_table(data.get("table").and_then(Value::as_str), rows, target, c)
        }
        _ => match atoms_of(data) {
            Some(atoms) => summarize_atoms_with(atoms, target, strategy, fields, c),
            None => Value::String(summarize_text(&text_of(data), target, strategy, c)),
        },
    }
}

/// How a summary of `data_type` is made, for the payload's `summary_config.strategy`.
pub(super) fn summary_method(data_type: DataType, strategy: Strategy) -> &'static str {
    match data_type {
        DataType::Code | DataType::Formula => "whole_blocks",
        DataType::Table => "header_and_statistics",
        _ => strategy.name(),
    }
}

/// The text of a resolved file (its `text`) or of a string.
fn text_field(data: &Value) -> Option<&str> {
    data.as_str()
        .or_else(|| data.get("text").and_then(Value::as_str))
}

/// `data` with its text replaced by `text` (a file keeps its path, format and language).
fn with_text(data: &Value, text: String) -> Value {
    match data {
        Value::Object(o) => {
            let mut o = o.clone();
            o.insert("text".into(), Value::String(text));
            Value::Object(o)
        }
        _ => Value::String(text),
    }
}

/// The reference-mode payload of input `name` (`data` as resolved by `reference`):
/// available paths, data stats and an inline preview (§4.3).
pub(super) fn reference_payload(
    name: &str,
    data: &Value,
    reference: &Value,
    tokens: u64,
    batched: bool,
    preview: usize,
) -> Value {
    let mut paths: Vec<String> = match data {
        Value::Object(o) => o.keys().map(|k| format!("$.{k}")).collect(),
        Value::Array(_) => vec!["$[*]".into()],
        _ => vec!["$".into()],
    };
    paths.sort();
    let atoms = atoms_of(data);
    let relations = data
        .get("relations")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let mut stats = json!({
        "total_atoms": atoms.map_or(0, Vec::len),
        "total_relations": relations,
        "estimated_size_bytes": json_len(data),
        "estimated_tokens": tokens,
    });
    if batched {
        stats["batched"] = json!(true);
    }
    let preview_items: Vec<Value> = atoms
        .map(|a| {
            a.iter()
                .take(preview)
                .map(|x| {
                    let text = x.get("content").map(text_of).unwrap_or_else(|| text_of(x));
                    json!({
                        "atom_id": x.get("asset_id").or_else(|| x.get("atom_id")).cloned().unwrap_or(Value::Null),
                        "atom_type": x.get("atom_type").cloned().unwrap_or(Value::Null),
                        "content_preview": crate::base::text::cut::cut_chars(&text, 80),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut payload = json!({
        "source": name,
        "transfer_mode": "reference",
        "reference": {
            "ref": reference,
            "available_paths": paths,
            "data_stats": stats,
        },
        "inline_preview": {"atoms_preview": preview_items, "preview_count": preview_items.len()},
    });
    if !batched {
        // Fetched on demand (§4.3): the tool the task is offered for it.
        payload["fetch_with"] = json!({"tool": "fetch_reference", "ref_id": name});
    }
    payload
}
