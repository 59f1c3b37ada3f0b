//! The content check every agent output passes before it is shown, streamed or stored
//! as valid: a refused output is handled like an invalid one (asked again with the
//! problems, up to the tries allowed).
//!
//! The built-in check looks at every string of the output for what must not reach a
//! person's terminal or a browser front end, or leak: terminal control sequences and
//! invisible direction overrides, HTML that runs script, and text shaped like a
//! credential (a private key block, a cloud or API key). A profile that names a
//! `moderation_model` adds its `/moderations` endpoint ([`super::moderation`]).

use regex::Regex;
use serde_json::{json, Value};
use std::sync::OnceLock;

use super::check::Checked;
use super::shared::Session;
use crate::data::store::StoreError;
use crate::model::event::debate::DebateErrorLogged;
use crate::model::event::EngineEvent;
use crate::run::engine::emit::Scope;

/// Patterns of text shaped like a credential, with what each is.
fn secret_patterns() -> &'static [(Regex, &'static str)] {
    static P: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    P.get_or_init(|| {
        [
            (r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "a private key"),
            (r"\bAKIA[0-9A-Z]{16}\b", "an AWS access key"),
            (r"\bsk-[A-Za-z0-9_-]{20,}", "an API key"),
            (r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token"),
            (r"\bxox[abprs]-[A-Za-z0-9-]{10,}", "a Slack token"),
        ]
        .into_iter()
        .filter_map(|(p, what)| Regex::new(p).ok().map(|r| (r, what)))
        .collect()
    })
}

/// HTML that runs script in a browser.
fn script_pattern() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        Regex::new(r"(?i)<\s*(script|iframe|object|embed)\b|javascript\s*:|\bon(error|load|click|mouseover)\s*=")
            .unwrap_or_else(|_| Regex::new("$^").expect("an empty pattern"))
    })
}

/// Whether `c` is a control character that is not a line break or a tab, or an
/// invisible direction override.
fn is_hidden_control(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The problems the built-in check finds in one string at `path`.
fn check_text(path: &str, text: &str, problems: &mut Vec<String>) {
    if let Some(c) = text.chars().find(|c| is_hidden_control(*c)) {
        problems.push(format!(
            "content check: {path} holds a control character (U+{:04X}) that would drive the terminal or hide text",
            c as u32
        ));
    }
    if let Some(m) = script_pattern().find(text) {
        problems.push(format!(
            "content check: {path} holds HTML that runs script ({:?})",
            m.as_str()
        ));
    }
    for (re, what) in secret_patterns() {
        if re.is_match(text) {
            problems.push(format!(
                "content check: {path} holds text shaped like {what}; never repeat credentials"
            ));
        }
    }
}

/// The problems the built-in check finds in free text (a stream not yet parsed).
pub fn text_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    check_text("the streamed text", text, &mut problems);
    problems
}

/// Every string of `v` checked, its JSON path named.
fn walk(v: &Value, path: &mut String, problems: &mut Vec<String>) {
    match v {
        Value::String(s) => check_text(path, s, problems),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, problems);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                walk(item, path, problems);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// The problems of `output` by the built-in check (none: it passes).
pub fn builtin_problems(output: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(output, &mut "$".to_string(), &mut problems);
    problems.truncate(5);
    problems
}

/// Passes `c` through the content check (the built-in one, then the profile's
/// moderation endpoint when it names one), or the problems that refuse it. An endpoint
/// that cannot answer leaves the built-in check alone, logged as a failed tool
/// (`tool_execution_failed`, tool `moderation`) for round `round` under `scope`.
pub async fn check_output(
    s: &Session,
    scope: &Scope,
    round: u32,
    c: Checked,
) -> Result<Result<Checked, Vec<String>>, StoreError> {
    let problems = builtin_problems(&c.output);
    if !problems.is_empty() {
        return Ok(Err(problems));
    }
    let Some(m) = &s.moderator else {
        return Ok(Ok(c));
    };
    match m.flagged(&text_of(&c.output)).await {
        Ok(categories) if categories.is_empty() => Ok(Ok(c)),
        Ok(categories) => Ok(Err(vec![format!(
            "content check: the moderation endpoint ({}) flagged the output: {}",
            m.label(),
            categories.join(", ")
        )])),
        Err(why) => {
            s.emitter.emit(
                scope,
                EngineEvent::DebateError(DebateErrorLogged {
                    round,
                    error: json!({
                        "error": "tool_execution_failed",
                        "tool": "moderation",
                        "fallback": "the built-in content check alone"
                    }),
                    message: format!(
                        "the moderation endpoint failed in round {round} ({why}): the built-in content check alone"
                    ),
                }),
            )?;
            Ok(Ok(c))
        }
    }
}

/// Every string of `v`, one per line: what the moderation endpoint reads.
fn text_of(v: &Value) -> String {
    fn push(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| push(i, out)),
            Value::Object(map) => map.values().for_each(|i| push(i, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    push(v, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clean_output_passes_and_each_kind_of_problem_is_named_with_its_path() {
        let clean = json!({"content": "Plan:\n\t- week 1: basics (<3 hours)", "metadata": {"x": ["a < b"]}});
        assert!(builtin_problems(&clean).is_empty());
        let bad = json!({
            "content": "done\u{1b}[2J",
            "metadata": {"notes": ["<script>alert(1)</script>", "key sk-abcdefghijklmnopqrstuvwx"],
                         "hidden": "a\u{202E}b"}
        });
        let p = builtin_problems(&bad);
        assert!(
            p.iter()
                .any(|x| x.contains("$.content") && x.contains("U+001B")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|x| x.contains("$.metadata.notes[0]") && x.contains("script")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|x| x.contains("$.metadata.notes[1]") && x.contains("API key")),
            "{p:?}"
        );
        assert!(p.iter().any(|x| x.contains("$.metadata.hidden")), "{p:?}");
    }
}
