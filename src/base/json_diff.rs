//! The first difference between two JSON values: where it is (a path such as
//! `errors[0]` or `constraints.timeout_seconds`) and what each side holds there, written
//! short enough for one line. A rerun uses it to say how a request or an event differs
//! from its recording.

use serde_json::Value;

/// Characters of a long string shown around its first difference.
const EXCERPT_CHARS: usize = 60;
/// Characters of context shown before the first difference of a long string.
const EXCERPT_LEAD: usize = 20;

/// Where two values first differ, and what each holds there.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// Path from the root (`errors[0]`, `grades.a`); empty when the roots differ.
    pub path: String,
    /// The recorded value there; `None` when the recorded side has nothing there.
    pub recorded: Option<Value>,
    /// The new value there; `None` when the new side has nothing there.
    pub now: Option<Value>,
}

impl Difference {
    /// Both values for a person: strings as they are, other values as compact JSON,
    /// `(absent)` for nothing; two long strings are cut around their first difference.
    pub fn shown(&self) -> (String, String) {
        match (&self.recorded, &self.now) {
            (Some(Value::String(a)), Some(Value::String(b)))
                if a.chars().count() > EXCERPT_CHARS || b.chars().count() > EXCERPT_CHARS =>
            {
                excerpts(a, b)
            }
            (a, b) => (show(a.as_ref()), show(b.as_ref())),
        }
    }
}

/// The first place where `recorded` and `now` differ (object keys in sorted order,
/// array elements in order), or `None` when they are equal.
pub fn first_difference(recorded: &Value, now: &Value) -> Option<Difference> {
    differences(recorded, now, 1).into_iter().next()
}

/// Up to `limit` places where `recorded` and `now` differ, in the order of
/// [`first_difference`] (each at the deepest path where the two part).
pub fn differences(recorded: &Value, now: &Value, limit: usize) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut path = String::new();
    walk(&mut path, Some(recorded), Some(now), &mut out, limit);
    out
}

fn walk(
    path: &mut String,
    a: Option<&Value>,
    b: Option<&Value>,
    out: &mut Vec<Difference>,
    limit: usize,
) {
    if out.len() >= limit {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                walk(path, x.get(k), y.get(k), out, limit);
                path.truncate(len);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(path, x.get(i), y.get(i), out, limit);
                path.truncate(len);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            path: path.clone(),
            recorded: a.cloned(),
            now: b.cloned(),
        }),
    }
}

/// A value for a person: a string as it is, anything else as compact JSON (long ones
/// cut), `(absent)` for nothing.
pub fn show(v: Option<&Value>) -> String {
    let text = match v {
        None => return "(absent)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    super::text::cut::cut_chars(&text, EXCERPT_CHARS * 2).into_owned()
}

/// Both strings cut to a window that starts a little before their first difference.
pub fn excerpts(a: &str, b: &str) -> (String, String) {
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let start = same.saturating_sub(EXCERPT_LEAD);
    let cut = |s: &str| {
        let total = s.chars().count();
        let body: String = s.chars().skip(start).take(EXCERPT_CHARS).collect();
        let head = if start > 0 { "…" } else { "" };
        let tail = if start + EXCERPT_CHARS < total {
            "…"
        } else {
            ""
        };
        format!("{head}{body}{tail}")
    };
    (cut(a), cut(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_first_difference_by_path() {
        let a = json!({"status": "success", "errors": ["E002"], "grades": {"a": 1, "b": 0}});
        let b = json!({"status": "success", "errors": ["E005"], "grades": {"a": 0, "b": 1}});
        let d = first_difference(&a, &b).expect("a difference");
        assert_eq!(d.path, "errors[0]");
        assert_eq!(d.shown(), ("E002".to_string(), "E005".to_string()));
        assert_eq!(first_difference(&a, &a), None);
        let all: Vec<String> = differences(&a, &b, 10)
            .into_iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(all, ["errors[0]", "grades.a", "grades.b"]);
        assert_eq!(differences(&a, &b, 2).len(), 2);
    }

    #[test]
    fn absent_values_and_longer_arrays_are_differences() {
        let d = first_difference(&json!({"x": [1]}), &json!({"x": [1, 2]})).expect("diff");
        assert_eq!(
            (d.path.as_str(), d.recorded, d.now),
            ("x[1]", None, Some(json!(2)))
        );
        let d = first_difference(&json!({"k": 1}), &json!({})).expect("diff");
        assert_eq!(d.shown(), ("1".to_string(), "(absent)".to_string()));
    }

    #[test]
    fn long_strings_are_cut_around_their_first_difference() {
        let a = format!("{}grade B or better{}", "x".repeat(100), "y".repeat(100));
        let b = format!("{}grade A or better{}", "x".repeat(100), "y".repeat(100));
        let (x, y) = excerpts(&a, &b);
        assert!(x.starts_with('…') && x.contains("grade B"), "{x}");
        assert!(y.contains("grade A") && y.ends_with('…'), "{y}");
        assert!(x.chars().count() <= EXCERPT_CHARS + 2);
    }
}
