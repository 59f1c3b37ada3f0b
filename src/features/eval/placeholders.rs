//! Placing a sample's fields into a plan's text: `{{id}}`, `{{sample.input}}` (and
//! `{{sample.input.KEY}}` into an object input), `{{vars.NAME}}` and
//! `{{metadata.NAME}}`. A string is placed as it is; any other value as compact JSON.
//!
//! The expected value is never placed: an agent that saw it would be graded on a copy.
//! Text between double braces that is not a placeholder's name (spaces inside a name,
//! other punctuation) is left as it is, so a plan that shows a template keeps it.
//! Every placeholder of every sample is checked before anything runs ([`check_all`]):
//! the ones that cannot be resolved are named with the sample and the field.

use serde_json::Value;

use super::dataset::Sample;

/// A placeholder that cannot be resolved for a sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// The sample's id.
    pub sample: String,
    /// Where in the plan (as the caller names it, e.g. `tasks[T1].instruction`).
    pub field: String,
    /// The placeholder as written, braces included.
    pub placeholder: String,
    /// Why it cannot be resolved.
    pub why: String,
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sample {}: {} in {}: {}",
            self.sample, self.placeholder, self.field, self.why
        )
    }
}

/// `text` with `sample`'s fields placed; the first placeholder that cannot be resolved
/// is the error (its `why`, and the placeholder as written).
pub fn render(text: &str, sample: &Sample) -> Result<String, (String, String)> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let name = inner.trim();
        let written = &rest[start..start + 2 + end + 2];
        if !is_name(name) {
            out.push_str(written);
        } else {
            match lookup(name, sample) {
                Ok(Value::String(s)) => out.push_str(&s),
                Ok(v) => out.push_str(&v.to_string()),
                Err(why) => return Err((written.to_string(), why)),
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every placeholder in `fields` (a name for each, and its text) checked against every
/// sample: the ones that cannot be resolved, in sample order, at most `limit`.
pub fn check_all(fields: &[(String, String)], samples: &[Sample], limit: usize) -> Vec<Unresolved> {
    let mut found = Vec::new();
    for sample in samples {
        for (field, text) in fields {
            if let Err((placeholder, why)) = render(text, sample) {
                found.push(Unresolved {
                    sample: sample.id.clone(),
                    field: field.clone(),
                    placeholder,
                    why,
                });
                if found.len() >= limit {
                    return found;
                }
            }
        }
    }
    found
}

/// Whether `s` has the shape of a placeholder's name: dotted words of letters, digits,
/// `_` and `-`.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// The value a placeholder's name stands for.
fn lookup(name: &str, sample: &Sample) -> Result<Value, String> {
    let mut parts = name.split('.');
    let root = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    let missing = |what: &str| format!("the sample has no {what}");
    match (root, rest.as_slice()) {
        ("id", []) | ("sample", ["id"]) => Ok(Value::String(sample.id.clone())),
        ("sample", ["input", path @ ..]) => {
            walk(&sample.input, path).ok_or_else(|| missing(&format!("input.{}", path.join("."))))
        }
        ("vars" | "metadata", [key, path @ ..]) => field(sample, root, key, path),
        ("sample", [which @ ("vars" | "metadata"), key, path @ ..]) => {
            field(sample, which, key, path)
        }
        ("expected" | "target", _) | ("sample", ["expected" | "target", ..]) => {
            Err("the expected value never reaches an agent; a check compares with it".into())
        }
        _ => Err(
            "unknown placeholder; there are {{id}}, {{sample.input}}, {{vars.NAME}} and {{metadata.NAME}}"
                .into(),
        ),
    }
}

/// `vars.KEY.PATH` or `metadata.KEY.PATH` of `sample`.
fn field(sample: &Sample, which: &str, key: &str, path: &[&str]) -> Result<Value, String> {
    let obj = if which == "vars" {
        &sample.vars
    } else {
        &sample.metadata
    };
    obj.get(key).and_then(|v| walk(v, path)).ok_or_else(|| {
        let mut name = vec![which, key];
        name.extend_from_slice(path);
        format!("the sample has no {}", name.join("."))
    })
}

/// The value at `path` (object keys) inside `v`.
fn walk(v: &Value, path: &[&str]) -> Option<Value> {
    let mut at = v;
    for key in path {
        at = at.as_object()?.get(*key)?;
    }
    Some(at.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample(id: &str, input: Value) -> Sample {
        Sample {
            id: id.into(),
            input,
            expected: Some(json!("secret")),
            vars: json!({"lang": "fr", "n": 3})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            metadata: json!({"level": "hard"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            hash: String::new(),
            line: 1,
        }
    }

    #[test]
    fn every_kind_of_placeholder_is_placed() {
        let s = sample("S-1", json!({"question": "2+2?", "ctx": {"unit": "m"}}));
        let text = "[{{id}}] {{ sample.input.question }} in {{vars.lang}} ×{{vars.n}} ({{metadata.level}}), unit {{sample.input.ctx.unit}}; all: {{sample.input}}";
        assert_eq!(
            render(text, &s).expect("render"),
            "[S-1] 2+2? in fr ×3 (hard), unit m; all: {\"ctx\":{\"unit\":\"m\"},\"question\":\"2+2?\"}"
        );
        assert_eq!(
            render("{{sample.vars.lang}}/{{sample.id}}", &s).expect("r"),
            "fr/S-1"
        );
    }

    #[test]
    fn the_expected_value_is_refused_and_unknown_names_are_named() {
        let s = sample("S-1", json!("q"));
        for text in ["{{expected}}", "a {{sample.expected}} b", "{{target}}"] {
            let (_, why) = render(text, &s).expect_err(text);
            assert!(why.contains("never reaches an agent"), "{text}: {why}");
        }
        let (written, why) = render("x {{ answer }} y", &s).expect_err("unknown");
        assert_eq!(written, "{{ answer }}");
        assert!(why.contains("unknown placeholder"), "{why}");
        let (_, why) = render("{{vars.missing}}", &s).expect_err("missing var");
        assert_eq!(why, "the sample has no vars.missing");
        let (_, why) = render("{{sample.input.question}}", &s).expect_err("not an object");
        assert_eq!(why, "the sample has no input.question");
    }

    #[test]
    fn text_that_is_not_a_placeholder_stays_as_written() {
        let s = sample("S-1", json!("q"));
        for text in [
            "{{ not a name }}",
            "open {{ and never closed",
            "{{}}",
            "{{a..b}}",
            "f(x) = {x}",
        ] {
            assert_eq!(render(text, &s).expect(text), text);
        }
    }

    #[test]
    fn checking_all_samples_names_each_sample_and_field_that_fails() {
        let good = sample("ok", json!("q"));
        let mut bad = sample("S-9", json!("q"));
        bad.vars.remove("lang");
        let fields = vec![
            (
                "tasks[T1].instruction".to_string(),
                "Answer in {{vars.lang}}: {{sample.input}}".to_string(),
            ),
            (
                "tasks[T2].context".to_string(),
                "{{metadata.level}}".to_string(),
            ),
        ];
        let found = check_all(&fields, &[good, bad.clone(), bad], 10);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].sample, "S-9");
        assert_eq!(found[0].field, "tasks[T1].instruction");
        assert_eq!(found[0].placeholder, "{{vars.lang}}");
        assert_eq!(
            found[0].to_string(),
            "sample S-9: {{vars.lang}} in tasks[T1].instruction: the sample has no vars.lang"
        );
        assert_eq!(
            check_all(&fields, &vec![sample("x", json!(1)); 3], 10),
            vec![]
        );
        let mut many = vec![];
        for i in 0..5 {
            let mut s = sample(&format!("m{i}"), json!(1));
            s.vars.clear();
            many.push(s);
        }
        assert_eq!(check_all(&fields, &many, 3).len(), 3, "stops at the limit");
    }
}
