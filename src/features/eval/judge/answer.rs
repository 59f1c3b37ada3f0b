//! Reading a judge's answer. Asked for `{"criteria": [{"name", "met", "evidence"}]}`,
//! models answer otherwise: inside a code fence or after a sentence, the criteria in
//! another order, as an object keyed by name, `pass` or `"yes"` for `met`, `reason`
//! for `evidence`, extra fields, criteria left out. What can be read is read; a
//! criterion the answer does not judge stays unjudged (never taken as met).

use std::collections::HashMap;

use serde_json::{Map, Value};

/// One criterion as one answer judged it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// Met or not.
    pub met: bool,
    /// The evidence quoted or given.
    pub evidence: String,
}

/// The first JSON object in `text` (a code fence or words around it allowed).
fn object_in(text: &str) -> Option<Map<String, Value>> {
    // Reasoning before the verdict (`<think>…</think>`) is never read as the verdict.
    let text = crate::base::text::reasoning::answer(text);
    let mut from = 0;
    while let Some(start) = text[from..].find('{').map(|i| i + from) {
        let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(m))) = de.next() {
            return Some(m);
        }
        from = start + 1;
    }
    None
}

fn yes(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|x| x >= 0.5),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "yes" | "y" | "true" | "met" | "pass" | "passed" | "1" => Some(true),
            "no" | "n" | "false" | "not met" | "unmet" | "fail" | "failed" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// One criterion's entry: `{met|pass|passed|verdict|answer, evidence|reason|quote}`, or
/// a bare yes/no.
fn entry(v: &Value) -> Option<Judged> {
    match v {
        Value::Object(m) => {
            let met = [
                "met", "pass", "passed", "verdict", "answer", "result", "value",
            ]
            .iter()
            .find_map(|k| m.get(*k).and_then(yes))?;
            let evidence = ["evidence", "reason", "quote", "explanation", "why"]
                .iter()
                .map(|k| text_of(m.get(*k)))
                .find(|t| !t.is_empty())
                .unwrap_or_default();
            Some(Judged { met, evidence })
        }
        other => yes(other).map(|met| Judged {
            met,
            evidence: String::new(),
        }),
    }
}

/// The criteria `text` judges, by name (only names of `known`, matched without case).
pub fn read_answer(text: &str, known: &[&str]) -> HashMap<String, Judged> {
    let mut out = HashMap::new();
    let Some(obj) = object_in(text) else {
        return out;
    };
    let name_of = |n: &str| {
        known
            .iter()
            .find(|k| k.eq_ignore_ascii_case(n.trim()))
            .map(|k| k.to_string())
    };
    let list = obj
        .get("criteria")
        .or_else(|| obj.get("results"))
        .or_else(|| obj.get("judgments"));
    match list {
        Some(Value::Array(items)) => {
            for it in items {
                let name = ["name", "criterion", "id"]
                    .iter()
                    .find_map(|k| it.get(*k).and_then(Value::as_str));
                if let (Some(name), Some(j)) = (name.and_then(name_of), entry(it)) {
                    out.entry(name).or_insert(j);
                }
            }
        }
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if let (Some(name), Some(j)) = (name_of(k), entry(v)) {
                    out.insert(name, j);
                }
            }
        }
        _ => {
            // The criteria at the top level, keyed by name.
            for (k, v) in &obj {
                if let (Some(name), Some(j)) = (name_of(k), entry(v)) {
                    out.insert(name, j);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [&str; 2] = ["correct", "polite"];

    #[test]
    fn the_asked_form_reads() {
        let a = read_answer(
            r#"{"criteria": [{"name": "correct", "met": true, "evidence": "says 4"},
                             {"name": "polite", "met": false, "evidence": "curt"}]}"#,
            &KNOWN,
        );
        assert_eq!(
            a["correct"],
            Judged {
                met: true,
                evidence: "says 4".into()
            }
        );
        assert!(!a["polite"].met);
    }

    #[test]
    fn fences_other_orders_other_words_and_extra_fields_read() {
        let a = read_answer(
            "Here is my judgment:\n```json\n{\"notes\": 1, \"criteria\": [{\"verdict\": \"no\", \"reason\": \"rude\", \"criterion\": \"Polite\", \"x\": [1]}, {\"pass\": \"yes\", \"name\": \"correct\"}]}\n```",
            &KNOWN,
        );
        assert!(a["correct"].met);
        assert_eq!(
            a["polite"],
            Judged {
                met: false,
                evidence: "rude".into()
            }
        );
        let keyed = read_answer(
            r#"{"criteria": {"correct": "yes", "polite": {"met": 0}}}"#,
            &KNOWN,
        );
        assert!(keyed["correct"].met && !keyed["polite"].met);
        let top = read_answer(r#"{"polite": true, "correct": {"passed": true}}"#, &KNOWN);
        assert_eq!(top.len(), 2);
    }

    #[test]
    fn reasoning_before_the_verdict_is_not_read_as_it() {
        let a = read_answer(
            "<think>Maybe {\"criteria\": []}? No, judge each.</think>{\"criteria\": [{\"name\": \"correct\", \"met\": true}]}",
            &KNOWN,
        );
        assert!(a["correct"].met, "{a:?}");
    }

    #[test]
    fn what_cannot_be_read_stays_unjudged() {
        assert!(read_answer("I think it is fine.", &KNOWN).is_empty());
        let a = read_answer(
            r#"{"criteria": [{"name": "correct", "met": "maybe"}, {"name": "unknown", "met": true}, {"name": "polite"}]}"#,
            &KNOWN,
        );
        assert!(a.is_empty(), "{a:?}");
        // A stream cut short: the object never closes.
        assert!(read_answer(r#"{"criteria": [{"name": "correct", "met": tr"#, &KNOWN).is_empty());
    }
}
