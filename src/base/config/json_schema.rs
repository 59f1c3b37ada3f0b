//! The JSON Schema of `plexus.toml` (`plexus schema config`), generated from the
//! declaration the loader checks ([`super::schema`]), for editors of TOML that read
//! JSON Schema (Taplo, Even Better TOML).

use serde_json::{json, Map, Value};

use super::schema::{Default, Key, Kind, Layout, Rule, Section, SECTIONS};

/// What the config schema cannot say, left to plexus when it loads the file.
const LEFT_TO_PLEXUS: &str = "The plexus configuration file, plexus.toml. Generated from \
the declaration plexus checks the file against when it loads, it refuses what plexus refuses \
where JSON Schema can say so. Only plexus checks that every key string of [keys] parses and \
that no two actions are bound to the same key, that header names and values are valid in \
HTTP, and that no key is written twice in a table.";

/// The JSON Schema (draft 2020-12) of the config file.
pub fn config_schema() -> Value {
    let mut properties = Map::new();
    for section in SECTIONS {
        let mut s = section_schema(section);
        s.insert("description".into(), section.doc.into());
        properties.insert(section.name.into(), Value::Object(s));
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "plexus.toml",
        "description": LEFT_TO_PLEXUS,
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    })
}

/// The schema of one top-level table.
fn section_schema(section: &Section) -> Map<String, Value> {
    match &section.layout {
        Layout::Table(keys) => table(keys, &[]),
        Layout::Tables {
            keys,
            rules,
            reserved,
        } => {
            let mut s = Map::new();
            s.insert("type".into(), "object".into());
            if !reserved.is_empty() {
                s.insert("propertyNames".into(), json!({"not": {"enum": reserved}}));
            }
            s.insert(
                "additionalProperties".into(),
                Value::Object(table(keys, rules)),
            );
            s
        }
        Layout::Keymap => keymap(),
    }
}

/// The schema of a table of `keys` under `rules`.
fn table(keys: &[Key], rules: &[Rule]) -> Map<String, Value> {
    let unless = rules.iter().find_map(|r| match r {
        Rule::Unless {
            key,
            value,
            required,
        } => Some((*key, *value, *required)),
        _ => None,
    });
    let others: Vec<Value> = rules.iter().filter_map(rule).collect();
    let required: Vec<&str> = keys.iter().filter(|k| k.required).map(|k| k.name).collect();
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    match unless {
        None => {
            s.insert("properties".into(), properties(keys, |_| true));
            if !others.is_empty() {
                s.insert("allOf".into(), Value::Array(others));
            }
        }
        // Only types and ranges when `key` is `value`; everything otherwise.
        Some((tested, value, also)) => {
            s.insert("properties".into(), properties(keys, |k| k.name == tested));
            s.insert(
                "if".into(),
                json!({"properties": {tested: {"const": value}}, "required": [tested]}),
            );
            let mut strict = Map::new();
            strict.insert("required".into(), json!(also));
            strict.insert("properties".into(), properties(keys, |_| true));
            if !others.is_empty() {
                strict.insert("allOf".into(), Value::Array(others));
            }
            s.insert("else".into(), Value::Object(strict));
        }
    }
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    s.insert("additionalProperties".into(), false.into());
    s
}

/// The `properties` of `keys`: each key in full when `full` says so, else only its type
/// and range (the checks that always apply).
fn properties(keys: &[Key], full: impl Fn(&Key) -> bool) -> Value {
    let mut props = Map::new();
    for k in keys {
        let mut s = kind(&k.kind, full(k));
        let doc = match k.kind {
            Kind::Num(r) => r.document(k.doc),
            _ => k.doc.to_string(),
        };
        s.insert("description".into(), doc.into());
        if let Some(d) = &k.default {
            s.insert("default".into(), default(d));
        }
        props.insert(k.name.into(), Value::Object(s));
    }
    Value::Object(props)
}

/// The schema of a value of `kind` (`full`: every check, else its type and range).
fn kind(kind: &Kind, full: bool) -> Map<String, Value> {
    let mut s = Map::new();
    let string = |s: &mut Map<String, Value>| {
        s.insert("type".into(), "string".into());
    };
    match kind {
        Kind::Num(r) => return r.json_schema(),
        Kind::Bool => {
            s.insert("type".into(), "boolean".into());
        }
        Kind::Str => string(&mut s),
        Kind::Text => {
            string(&mut s);
            if full {
                s.insert("pattern".into(), r"\S".into());
            }
        }
        Kind::Url => {
            string(&mut s);
            if full {
                s.insert("pattern".into(), r"^\s*https?://".into());
            }
        }
        Kind::OneOf(names) => {
            string(&mut s);
            if full {
                s.insert("enum".into(), json!(names));
            }
        }
        Kind::StrTable => {
            s.insert("type".into(), "object".into());
            s.insert("additionalProperties".into(), json!({"type": "string"}));
        }
        Kind::StrList => {
            s.insert("type".into(), "array".into());
            s.insert("items".into(), json!({"type": "string"}));
        }
    }
    s
}

/// A rule other than [`Rule::Unless`], as a schema.
fn rule(rule: &Rule) -> Option<Value> {
    match rule {
        Rule::Unless { .. } => None,
        Rule::Exclusive(a, b) => Some(json!({"not": {"required": [a, b]}})),
        // Not `dependentRequired`, which editors built on older drafts do not know.
        Rule::Needs(a, b) => {
            Some(json!({"anyOf": [{"not": {"required": [a]}}, {"required": [b]}]}))
        }
    }
}

/// A default as JSON.
pub(super) fn default(d: &Default) -> Value {
    match d {
        Default::Str(s) => json!(s),
        Default::Int(i) => json!(i),
        Default::Num(n) => json!(n),
        Default::Bool(b) => json!(b),
    }
}

/// `[keys]`: every action of the keymap with its default keys; an action's name matches
/// in any case, with `-` for `_`.
fn keymap() -> Map<String, Value> {
    let keys = json!({
        "type": ["string", "array"],
        "items": {"type": "string"},
        "minItems": 1,
    });
    let mut props = Map::new();
    let mut names = Vec::new();
    for (action, defaults) in super::keys::defaults() {
        let mut s = keys.as_object().cloned().unwrap_or_default();
        s.insert(
            "description".into(),
            format!("Keys of `{action}` (default: {}).", defaults.join(", ")).into(),
        );
        s.insert("default".into(), json!(defaults));
        props.insert(action.into(), Value::Object(s));
        names.push(any_case(action));
    }
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), Value::Object(props));
    s.insert(
        "propertyNames".into(),
        json!({"pattern": format!(r"^\s*(?:{})\s*$", names.join("|"))}),
    );
    s.insert("additionalProperties".into(), keys);
    s
}

/// A pattern matching `name` in any case, with `-` or `_` for each `_`.
fn any_case(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '_' | '-' => "[-_]".to_string(),
            c if c.is_ascii_alphabetic() => {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            }
            c if c.is_ascii_alphanumeric() => c.to_string(),
            c => format!("\\{c}"),
        })
        .collect()
}
