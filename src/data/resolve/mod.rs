//! Resolving a plan's data references: a `task_output` reference here (JSONPath,
//! filter, transform), a file in [`file`] (with PDF text from [`pdf`]), a `db_query` in
//! [`db`]. The engine resolves a task's inputs with them and the file tools share their
//! path rules; they need nothing of either.

pub mod db;
pub mod file;
pub mod pdf;

use serde_json::{Map, Value};

use crate::base::jsonpath::{compare, CmpOp, JsonPath};
use crate::base::protocol::refs::RefErrorCode;
use crate::base::protocol::{FilterOp, RefFilter, TaskOutputRef, Transform};

/// Why a reference did not resolve.
#[derive(Debug, Clone, PartialEq)]
pub struct RefFailure {
    /// Seed 000 §3.2 code.
    pub code: RefErrorCode,
    /// Explanation.
    pub message: String,
}

/// Tests one item against a filter; `Err` when the filter cannot apply (REF_FILTER_ERROR).
pub fn filter_matches(item: &Value, f: &RefFilter) -> Result<bool, String> {
    let Some(v) = field_of(item, &f.field) else {
        return Ok(false);
    };
    Ok(match f.operator {
        FilterOp::Eq => compare(v, CmpOp::Eq, &f.value),
        FilterOp::Ne => compare(v, CmpOp::Ne, &f.value),
        FilterOp::In => match &f.value {
            Value::Array(options) => match v {
                Value::Array(vs) => vs.iter().any(|x| options.contains(x)),
                x => options.contains(x),
            },
            _ => return Err("`in` needs an array value".into()),
        },
        FilterOp::Gt | FilterOp::Gte | FilterOp::Lt | FilterOp::Lte => {
            if !(f.value.is_number() || f.value.is_string()) {
                return Err(format!(
                    "`{}` needs a number or string value",
                    f.operator.as_str()
                ));
            }
            let op = match f.operator {
                FilterOp::Gt => CmpOp::Gt,
                FilterOp::Gte => CmpOp::Ge,
                FilterOp::Lt => CmpOp::Lt,
                _ => CmpOp::Le,
            };
            compare(v, op, &f.value)
        }
        FilterOp::Contains => match (v, &f.value) {
            (Value::String(s), Value::String(needle)) => s.contains(needle.as_str()),
            (Value::Array(a), needle) => a.contains(needle),
            (_, Value::String(_)) => false,
            _ => return Err("`contains` needs a string value".into()),
        },
    })
}

/// The value of `field` in `item`: a key of it, else a dotted path into it
/// (`content.text`).
fn field_of<'a>(item: &'a Value, field: &str) -> Option<&'a Value> {
    item.get(field)
        .or_else(|| crate::base::protocol::invocation::value_at_path(item, field))
}

fn summarise(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(crate::base::text::cut::cut_chars(s, 201).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(summarise).collect()),
        Value::Object(o) => {
            let mut m = Map::new();
            for (k, x) in o {
                if matches!(k.as_str(), "metadata" | "delta_audit") {
                    continue;
                }
                m.insert(k.clone(), summarise(x));
            }
            Value::Object(m)
        }
        other => other.clone(),
    }
}

fn keys_only(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Array(o.keys().map(|k| Value::String(k.clone())).collect()),
        Value::Array(a) => Value::Array(a.iter().map(keys_only).collect()),
        other => other.clone(),
    }
}

/// Resolves a task_output reference against the task's output `{atoms, summary}`.
/// `atom_type` is the type the upstream task was asked for: its atoms can also be read
/// under that name (`$.validation_results` of a task whose atoms are
/// `validation_results`), as the protocol's task chains name a task's output.
pub fn resolve_task_output(
    output: &Value,
    r: &TaskOutputRef,
    atom_type: Option<&str>,
) -> Result<Value, RefFailure> {
    let aliased;
    let output = match (r.path.as_deref(), atom_type) {
        (Some(p), Some(t)) if reads_key(p, t) && output.get(t).is_none() => {
            aliased = with_atoms_under(output, t);
            &aliased
        }
        _ => output,
    };
    let selected = match &r.path {
        None => output.clone(),
        Some(p) => {
            let path = JsonPath::parse(p).map_err(|e| RefFailure {
                code: RefErrorCode::RefPathInvalid,
                message: format!("JSONPath `{p}`: {e}"),
            })?;
            // A path that selects nothing is an invalid path (its fallback hands over
            // the whole output), not a missing output.
            path.select_value(output).ok_or_else(|| RefFailure {
                code: RefErrorCode::RefPathInvalid,
                message: format!("`{p}` matches nothing in the output of {}", r.task_id),
            })?
        }
    };
    let filtered = match (&r.filter, selected) {
        (Some(f), Value::Array(items)) => Value::Array(matching(items, f)?),
        (_, v) => v,
    };
    Ok(match r.transform.unwrap_or(Transform::None) {
        Transform::None => filtered,
        Transform::Summary => summarise(&filtered),
        Transform::KeysOnly => keys_only(&filtered),
    })
}

/// Whether JSONPath `path` starts by reading the top-level key `key` (`$.key…` or
/// `$['key']…`).
fn reads_key(path: &str, key: &str) -> bool {
    let path = path.trim();
    let rest = path
        .strip_prefix("$.")
        .and_then(|r| r.strip_prefix(key))
        .or_else(|| {
            path.strip_prefix("$[")
                .and_then(|r| r.strip_prefix(['\'', '"']))
                .and_then(|r| r.strip_prefix(key))
                .and_then(|r| r.strip_prefix(['\'', '"']))
                .and_then(|r| r.strip_prefix(']'))
        });
    rest.is_some_and(|r| r.is_empty() || r.starts_with(['.', '[']))
}

/// `output` with its atoms also under `key`.
fn with_atoms_under(output: &Value, key: &str) -> Value {
    let mut v = output.clone();
    if let Value::Object(o) = &mut v {
        let atoms = o.get("atoms").cloned().unwrap_or(Value::Array(Vec::new()));
        o.insert(key.to_string(), atoms);
    }
    v
}

/// The items that pass filter `f`, in order. A filter that cannot be applied fails with
/// REF_FILTER_ERROR: a wrong value for its operator, or a field that none of the items
/// has (a filter on `atom_type` after a path that selected the atoms' `content`).
fn matching(items: Vec<Value>, f: &RefFilter) -> Result<Vec<Value>, RefFailure> {
    if !items.is_empty() && items.iter().all(|it| field_of(it, &f.field).is_none()) {
        return Err(RefFailure {
            code: RefErrorCode::RefFilterError,
            message: format!(
                "filter on `{}`: none of the {} item(s) selected has that field",
                f.field,
                items.len()
            ),
        });
    }
    let mut kept = Vec::new();
    for it in items {
        match filter_matches(&it, f) {
            Ok(true) => kept.push(it),
            Ok(false) => {}
            Err(m) => {
                return Err(RefFailure {
                    code: RefErrorCode::RefFilterError,
                    message: m,
                })
            }
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(op: FilterOp, value: Value) -> RefFilter {
        RefFilter {
            field: "x".into(),
            operator: op,
            value,
        }
    }

    #[test]
    fn operators_of_seed_000_2_2() {
        let item = json!({"x": 0.8, "s": "attention is all", "tags": ["core"]});
        assert_eq!(
            filter_matches(&item, &f(FilterOp::Eq, json!(0.8))),
            Ok(true)
        );
        assert_eq!(
            filter_matches(&item, &f(FilterOp::Ne, json!(0.8))),
            Ok(false)
        );
        assert_eq!(
            filter_matches(&item, &f(FilterOp::Gte, json!(0.8))),
            Ok(true)
        );
        assert_eq!(
            filter_matches(&item, &f(FilterOp::Gt, json!(0.8))),
            Ok(false)
        );
        assert_eq!(filter_matches(&item, &f(FilterOp::Lt, json!(1))), Ok(true));
        assert_eq!(
            filter_matches(&item, &f(FilterOp::Lte, json!("a"))),
            Ok(false)
        );
        assert_eq!(
            filter_matches(&item, &f(FilterOp::In, json!([0.8, 1]))),
            Ok(true)
        );
        let s = RefFilter {
            field: "s".into(),
            operator: FilterOp::Contains,
            value: json!("attention"),
        };
        assert_eq!(filter_matches(&item, &s), Ok(true));
        let t = RefFilter {
            field: "tags".into(),
            operator: FilterOp::In,
            value: json!(["core", "key"]),
        };
        assert_eq!(filter_matches(&item, &t), Ok(true));
        assert!(filter_matches(&item, &f(FilterOp::In, json!("core"))).is_err());
        assert!(filter_matches(&item, &f(FilterOp::Gt, json!([1]))).is_err());
        assert_eq!(
            filter_matches(&json!({}), &f(FilterOp::Eq, json!(1))),
            Ok(false)
        );
    }

    fn output() -> Value {
        json!({"atoms": [
            {"atom_type": "claim", "content": {"text": "attention is all you need"}},
            {"atom_type": "methodology", "content": {"text": "multi-head self-attention"}},
        ], "summary": "two atoms"})
    }

    fn task_ref(path: Option<&str>, filter: Option<RefFilter>) -> TaskOutputRef {
        TaskOutputRef {
            task_id: "T".into(),
            path: path.map(str::to_string),
            filter,
            transform: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn a_filter_reads_a_nested_field_by_its_dotted_path() {
        let filter = RefFilter {
            field: "content.text".into(),
            operator: FilterOp::Contains,
            value: json!("self-attention"),
        };
        let got = resolve_task_output(&output(), &task_ref(Some("$.atoms"), Some(filter)), None)
            .expect("resolves");
        assert_eq!(got.as_array().map(Vec::len), Some(1), "{got}");
        assert_eq!(got[0]["atom_type"], "methodology");
    }

    #[test]
    fn a_path_that_selects_nothing_is_an_invalid_path() {
        let e = resolve_task_output(
            &output(),
            &task_ref(Some("$.validation_results"), None),
            None,
        )
        .expect_err("nothing there");
        assert_eq!(e.code, RefErrorCode::RefPathInvalid, "{}", e.message);
    }

    #[test]
    fn a_tasks_atoms_are_read_under_the_atom_type_it_was_asked_for() {
        let r = task_ref(Some("$.validation_results"), None);
        let got = resolve_task_output(&output(), &r, Some("validation_results")).expect("alias");
        assert_eq!(got.as_array().map(Vec::len), Some(2), "{got}");
        let r = task_ref(Some("$['validation_results'][0].atom_type"), None);
        let got = resolve_task_output(&output(), &r, Some("validation_results")).expect("alias");
        assert_eq!(got, json!("claim"));
        // Another name is not an alias; a key the output has is read as it is.
        let r = task_ref(Some("$.validation_resultsX"), None);
        assert!(resolve_task_output(&output(), &r, Some("validation_results")).is_err());
        let r = task_ref(Some("$.summary"), None);
        let got = resolve_task_output(&output(), &r, Some("summary")).expect("own key");
        assert_eq!(got, json!("two atoms"));
    }

    #[test]
    fn a_filter_on_a_field_no_selected_item_has_cannot_be_applied() {
        // The seed's own example: the path selects the contents, which have no atom_type.
        let filter = RefFilter {
            field: "atom_type".into(),
            operator: FilterOp::Eq,
            value: json!("methodology"),
        };
        let e = resolve_task_output(
            &output(),
            &task_ref(Some("$.atoms[*].content"), Some(filter.clone())),
            None,
        )
        .expect_err("no item has the field");
        assert_eq!(e.code, RefErrorCode::RefFilterError, "{}", e.message);
        assert!(e.message.contains("atom_type"), "{}", e.message);
        // On the atoms themselves it applies.
        let got = resolve_task_output(&output(), &task_ref(Some("$.atoms"), Some(filter)), None)
            .expect("resolves");
        assert_eq!(got.as_array().map(Vec::len), Some(1), "{got}");
    }
}
