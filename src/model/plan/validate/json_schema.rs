//! The JSON Schema of plans (`plexus schema plan`), generated from the description the
//! shape check walks ([`super::schema`]): an editor given it refuses what
//! `plexus validate` refuses wherever JSON Schema can say so.

use serde_json::{json, Map, Value};

use super::schema::PLAN;
use super::shape::{Obj, Tagged, Want};
use crate::base::ranges::NumRange;

/// The dialect of every schema plexus prints.
pub(crate) const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// What the plan schema cannot say, left to `plexus validate`.
const LEFT_TO_VALIDATE: &str = "A plexus plan: tasks handed to agents, their depends_on \
forming a DAG. Generated from the checks of `plexus validate`, it refuses what they refuse \
where JSON Schema can say so. Only `plexus validate` checks that task ids are unique, that \
every depends_on names a task of the plan and that there is no cycle, that a task_output \
reference names a task upstream, that a task's agent is a built-in agent or an entry of \
`agents` (and that every entry of `agents` that is not a built-in agent is used, and no two \
entries name the same agent), that JSONPaths parse, that db_query columns belong to their \
table, and that no key is written twice in an object.";

/// The JSON Schema (draft 2020-12) of a plan file.
pub fn plan_schema() -> Value {
    let mut root = Map::new();
    root.insert("$schema".into(), DIALECT.into());
    root.insert("title".into(), "plexus plan".into());
    root.insert("description".into(), LEFT_TO_VALIDATE.into());
    root.extend(object(&PLAN));
    let mut root = Value::Object(root);
    // The built-in agents, offered for completion (a plan may define others).
    if let Some(agent) = root.pointer_mut("/properties/tasks/items/properties/agent") {
        agent["examples"] = json!(crate::base::agents::builtin_names());
    }
    root
}

/// The schema of a value of shape `want`.
fn schema(want: &Want) -> Map<String, Value> {
    let mut s = Map::new();
    let mut put = |k: &str, v: Value| {
        s.insert(k.to_string(), v);
    };
    match want {
        Want::Any => {}
        Want::Str => put("type", "string".into()),
        Want::Text => {
            put("type", "string".into());
            put("pattern", NOT_BLANK.into());
        }
        Want::Id => {
            put("type", "string".into());
            put("pattern", ID.into());
        }
        Want::Bool => put("type", "boolean".into()),
        Want::Num(range) => return range.json_schema(),
        Want::OneOf(names) | Want::Named(names) => {
            put("type", "string".into());
            put("enum", json!(names));
        }
        Want::Matching(pattern) => {
            put("type", "string".into());
            put("pattern", (*pattern).into());
        }
        Want::List(item) => {
            put("type", "array".into());
            put("items", Value::Object(schema(item)));
        }
        Want::NonEmptyList(item) => {
            put("type", "array".into());
            put("items", Value::Object(schema(item)));
            put("minItems", 1.into());
        }
        Want::Obj(obj) => return object(obj),
        Want::Map(item) => {
            put("type", "object".into());
            put("propertyNames", json!({"pattern": ID}));
            put("additionalProperties", Value::Object(schema(item)));
        }
        Want::Tagged(tagged) => return tagged_object(tagged),
        Want::Opt(inner) => return nullable(schema(inner)),
    }
    s
}

/// Text with more than white space in it.
const NOT_BLANK: &str = r"\S";

/// An id: not blank, and without a control character (`char::is_control`) or a bidi
/// control (`crate::base::text::sanitize::is_bidi_control`).
const ID: &str = concat!(
    r"^[^\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*",
    r"[^\s\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]",
    r"[^\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*$"
);

/// The schema of an object of `obj`'s fields.
fn object(obj: &Obj) -> Map<String, Value> {
    let mut properties = Map::new();
    for f in obj.fields {
        let mut s = schema(&f.want);
        let mut doc = f.doc.to_string();
        if let Some(range) = range_of(&f.want) {
            doc = range.document(&doc);
        }
        if !doc.is_empty() {
            s.insert("description".into(), doc.into());
        }
        properties.insert(f.name.to_string(), Value::Object(s));
    }
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), Value::Object(properties));
    if !obj.required.is_empty() {
        s.insert("required".into(), json!(obj.required));
    }
    s.insert("additionalProperties".into(), false.into());
    s
}

/// The range of a number field, for its description.
fn range_of(want: &Want) -> Option<&'static NumRange> {
    match want {
        Want::Num(r) => Some(r),
        Want::Opt(inner) => range_of(inner),
        _ => None,
    }
}

/// An object of one of `tagged`'s kinds: the tag names the kind, and the kind's fields
/// apply.
fn tagged_object(tagged: &Tagged) -> Map<String, Value> {
    let kinds: Vec<Value> = tagged
        .kinds
        .iter()
        .map(|(name, obj)| {
            json!({
                "if": {"type": "object", "properties": {tagged.tag: {"const": name}}},
                "then": Value::Object(object(obj)),
            })
        })
        .collect();
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert(
        "properties".into(),
        json!({tagged.tag: {"type": "string", "enum": tagged.names()}}),
    );
    s.insert("required".into(), json!([tagged.tag]));
    s.insert("allOf".into(), Value::Array(kinds));
    s
}

/// `s`, or `null`.
pub(crate) fn nullable(mut s: Map<String, Value>) -> Map<String, Value> {
    match s.get("type").cloned() {
        // Every other keyword applies to its own type only, so null passes them.
        Some(Value::String(t)) => {
            s.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(names)) = s.get_mut("enum") {
                names.push(Value::Null);
            }
            s
        }
        None if s.is_empty() => s,
        _ => {
            let mut any = Map::new();
            any.insert("anyOf".into(), json!([{"type": "null"}, Value::Object(s)]));
            any
        }
    }
}
