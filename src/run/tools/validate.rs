//! Checks of a call's arguments before the tool runs: their size (seed 003
//! `validate_input_size`) and their shape against the tool's JSON Schema.
//!
//! The validator covers the part of JSON Schema the tools' schemas use: `type` (a name
//! or a list of names), `required`, `properties`, `additionalProperties: false`, `enum`,
//! `minimum`/`maximum`, `minLength`/`maxLength` and `items`, nested to any depth.
//! Anything else in a schema is ignored.

use serde_json::{Map, Value};

use super::error::{ToolError, ToolErrorCode};
use super::tool::json_size;

/// Largest arguments accepted, in MB (seed 003 `max_size_mb = 10`).
pub const MAX_INPUT_MB: u64 = 10;

/// Most problems listed in one error message.
const MAX_PROBLEMS: usize = 5;

/// Refuses arguments whose compact JSON is larger than `max_size_mb` MB (MiB:
/// `max_size_mb × 1,048,576` bytes; exactly that many bytes passes).
pub fn validate_input_size(parameters: &Value, max_size_mb: u64) -> Result<(), ToolError> {
    let size = json_size(parameters);
    let limit = max_size_mb.saturating_mul(1 << 20);
    if size > limit {
        return Err(ToolError::invalid(
            ToolErrorCode::InputTooLarge,
            format!("the arguments are {size} bytes of JSON; the limit is {max_size_mb} MB ({limit} bytes)"),
        ));
    }
    Ok(())
}

/// Checks `args` against `schema`; the error lists the first few problems, each with the
/// JSON path of the value (`$.start_line`).
pub fn validate_args(schema: &Value, args: &Value) -> Result<(), ToolError> {
    let mut problems = Vec::new();
    check(schema, args, "$", &mut problems);
    if problems.is_empty() {
        return Ok(());
    }
    let more = problems.len().saturating_sub(MAX_PROBLEMS);
    problems.truncate(MAX_PROBLEMS);
    let mut msg = format!("invalid arguments: {}", problems.join("; "));
    if more > 0 {
        msg.push_str(&format!(" (and {more} more)"));
    }
    Err(ToolError::arguments(msg))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, want: &str) -> bool {
    match want {
        // JSON Schema: 2.0 is an integer too.
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => v.is_number(),
        other => type_name(v) == other,
    }
}

fn check(schema: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() > MAX_PROBLEMS {
        return;
    }
    let Some(s) = schema.as_object() else {
        return;
    };
    if let Some(t) = s.get("type") {
        let wanted: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !wanted.is_empty() && !wanted.iter().any(|w| has_type(v, w)) {
            out.push(format!(
                "{path} must be {}, not {}",
                wanted.join(" or "),
                type_name(v)
            ));
            return;
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.contains(v) {
            let listed: Vec<String> = options.iter().map(Value::to_string).collect();
            out.push(format!("{path} must be one of {}", listed.join(", ")));
        }
    }
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if let Some(min) = s.get("minimum").and_then(Value::as_f64) {
                if x < min {
                    out.push(format!("{path} must be at least {min}"));
                }
            }
            if let Some(max) = s.get("maximum").and_then(Value::as_f64) {
                if x > max {
                    out.push(format!("{path} must be at most {max}"));
                }
            }
        }
        Value::String(text) => {
            let len = text.chars().count() as u64;
            if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
                if len < min {
                    out.push(format!("{path} must have at least {min} characters"));
                }
            }
            if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
                if len > max {
                    out.push(format!("{path} must have at most {max} characters"));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::Object(map) => check_object(s, map, path, out),
        _ => {}
    }
}

fn check_object(
    s: &Map<String, Value>,
    map: &Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) {
    let props = s.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = s.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                out.push(format!("{path}.{name} is required"));
            }
        }
    }
    for (key, value) in map {
        match props.and_then(|p| p.get(key)) {
            Some(prop) => check(prop, value, &format!("{path}.{key}"), out),
            None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                let known: Vec<&str> = props
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                out.push(format!(
                    "{path}.{key} is not an argument of this tool (it takes {})",
                    known.join(", ")
                ));
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "start_line": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": ["integer", "null"]}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn problems(args: Value) -> String {
        validate_args(&schema(), &args)
            .err()
            .map(|e| e.message)
            .unwrap_or_default()
    }

    #[test]
    fn accepts_good_arguments() {
        assert_eq!(problems(json!({"path": "a"})), "");
        assert_eq!(
            problems(
                json!({"path": "a", "start_line": 2.0, "mode": "b", "tags": ["x"], "limit": null})
            ),
            ""
        );
    }

    #[test]
    fn names_each_problem() {
        assert!(problems(json!([1])).contains("$ must be object, not array"));
        assert!(problems(json!({})).contains("$.path is required"));
        assert!(problems(json!({"path": 3})).contains("$.path must be string, not integer"));
        assert!(problems(json!({"path": ""})).contains("at least 1 characters"));
        assert!(problems(json!({"path": "a", "start_line": 0})).contains("at least 1"));
        assert!(problems(json!({"path": "a", "start_line": 1.5})).contains("must be integer"));
        assert!(problems(json!({"path": "a", "mode": "c"})).contains("one of \"a\", \"b\""));
        assert!(problems(json!({"path": "a", "tags": [1]})).contains("$.tags[0] must be string"));
        assert!(problems(json!({"path": "a", "x": 1})).contains("$.x is not an argument"));
    }

    #[test]
    fn input_size_limit_is_inclusive() {
        // {"a":"…"} is 8 bytes of framing plus the string.
        let at = json!({ "a": "x".repeat((1 << 20) - 8) });
        assert_eq!(json_size(&at), 1 << 20);
        assert!(validate_input_size(&at, 1).is_ok());
        let over = json!({ "a": "x".repeat((1 << 20) - 7) });
        let e = validate_input_size(&over, 1).expect_err("over the limit");
        assert_eq!(e.code, ToolErrorCode::InputTooLarge);
    }
}
