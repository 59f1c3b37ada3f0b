//! The shape a task's answer must have, from its `output_requirements` and its agent:
//! the JSON Schema the server is asked to hold the answer to (in the strict subset every
//! dialect takes: every property required, no other property; the one bound is the
//! number of atoms), and the short example the prompt shows. Both come from one description, so
//! what the prompt says and what the server enforces never differ.

use serde_json::{json, Map, Value};

use crate::base::agents::AgentDef;
use crate::model::plan::Task;

/// One field of an atom's shape: its dotted path and whether it holds a list.
struct Leaf {
    path: Vec<String>,
    list: bool,
}

/// The atom's fields: `asset_id`, `atom_type`, `confidence`, the content the task
/// requires (`text` when it names none), a paper location, and each other required field.
fn leaves(task: &Task) -> Vec<Leaf> {
    let leaf = |p: &str| Leaf {
        path: p.split('.').map(str::to_string).collect(),
        list: p.ends_with("tags") || p.ends_with("existing_assets"),
    };
    let mut out: Vec<Leaf> = ["asset_id", "atom_type", "confidence"]
        .into_iter()
        .map(leaf)
        .collect();
    let required = &task.output_requirements.required_fields;
    if !required.iter().any(|f| f.starts_with("content.")) {
        out.push(leaf("content.text"));
    }
    for f in required {
        let f = f.trim();
        if f.is_empty() || out.iter().any(|l| l.path.join(".") == f) {
            continue;
        }
        // A bare name is a field of the content, as the gate reads it.
        if f.contains('.') {
            out.push(leaf(f));
        } else {
            out.push(leaf(&format!("content.{f}")));
        }
    }
    if !out
        .iter()
        .any(|l| l.path.join(".") == "provenance.paper_location")
    {
        out.push(leaf("provenance.paper_location"));
    }
    out
}

/// The atom type the task asks for.
fn atom_type(task: &Task, agent: &AgentDef) -> String {
    task.output_requirements
        .atom_type
        .clone()
        .unwrap_or_else(|| agent.atom_type.clone())
}

/// Sets `value` at `path` inside `obj`, making objects on the way.
fn put(obj: &mut Map<String, Value>, path: &[String], value: Value) {
    match path {
        [] => {}
        [last] => {
            obj.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            let child = obj
                .entry(first.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(m) = child {
                put(m, rest, value);
            }
        }
    }
}

/// A tree of objects whose leaves are schemas (each in a one-element array) as one
/// strict schema: each object with every key required and none other.
fn strict(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let props: Map<String, Value> = m.iter().map(|(k, v)| (k.clone(), strict(v))).collect();
            let required: Vec<&String> = m.keys().collect();
            json!({"type": "object", "properties": props, "required": required,
                   "additionalProperties": false})
        }
        // A leaf: its schema as it is.
        Value::Array(a) => a.first().cloned().unwrap_or(json!({"type": "string"})),
        _ => v.clone(),
    }
}

/// The JSON Schema of the answer of `task` for `agent`; `known_assets` are the ids the
/// atoms may relate to (the request's existing assets): with none, the atoms name none.
pub fn schema(task: &Task, agent: &AgentDef, known_assets: &[String]) -> Value {
    let mut atom = Map::new();
    for l in leaves(task) {
        // Each leaf's schema in a one-element array: `strict` takes it as it is.
        let leaf = match l.path.join(".").as_str() {
            "atom_type" => json!([{"type": "string", "enum": [atom_type(task, agent)]}]),
            "confidence" => json!([{"type": "number"}]),
            _ if l.list => json!([{"type": "array", "items": {"type": "string"}}]),
            _ => json!([{"type": "string"}]),
        };
        put(&mut atom, &l.path, leaf);
    }
    if !known_assets.is_empty() {
        put(
            &mut atom,
            &["delta_audit".into(), "existing_assets".into()],
            json!([{"type": "array", "items": {"type": "string", "enum": known_assets}}]),
        );
        put(
            &mut atom,
            &["delta_audit".into(), "incremental_value".into()],
            json!([{"type": "string"}]),
        );
    }
    let atom = strict(&Value::Object(atom));
    // At least one atom, at most the task's: a grammar-held model otherwise writes
    // atoms until its tokens run out.
    let mut atoms = json!({"type": "array", "items": atom, "minItems": 1});
    if let Some(max) = task.output_requirements.max_atoms {
        atoms["maxItems"] = json!(max.max(1));
    }
    json!({
        "type": "object",
        "properties": {"output": {
            "type": "object",
            "properties": {
                "atoms": atoms,
                "summary": {"type": "string"},
            },
            "required": ["atoms", "summary"],
            "additionalProperties": false,
        }},
        "required": ["output"],
        "additionalProperties": false,
    })
}

/// A short answer of the right shape, for the prompt (one atom, placeholders to fill).
pub fn example(task: &Task, agent: &AgentDef) -> Value {
    let mut atom = Map::new();
    for l in leaves(task) {
        let name = l.path.join(".");
        let v = match name.as_str() {
            "asset_id" => json!(format!("{}_01", agent.short_name)),
            "atom_type" => json!(atom_type(task, agent)),
            "confidence" => json!(0.8),
            "provenance.paper_location" => json!("Section 3.2"),
            _ if l.list => json!(["..."]),
            _ => json!(format!(
                "<{}>",
                l.path.last().map_or("text", String::as_str)
            )),
        };
        put(&mut atom, &l.path, v);
    }
    let max = task.output_requirements.max_atoms.unwrap_or(3).max(1);
    json!({
        "rule": format!(
            "Answer with one JSON object of exactly this shape and nothing before or after it: 1 to {max} atoms, each field filled with real content."
        ),
        "example": {"output": {"atoms": [Value::Object(atom)], "summary": "<one sentence>"}},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(required: &[&str]) -> (Task, AgentDef) {
        let req = serde_json::to_string(required).expect("json");
        let plan = crate::model::plan::parse_plan(
            &format!(
                r#"{{"plan_id":"P","tasks":[{{"task_id":"A","agent":"Scholar_Internalizer","instruction":"go",
                "output_requirements":{{"required_fields":{req},"max_atoms":2}}}}]}}"#
            ),
            "p.json",
        )
        .expect("a plan");
        let agent = plan.agents["Scholar_Internalizer"].clone();
        (plan.tasks[0].clone(), agent)
    }

    #[test]
    fn an_answer_of_the_example_validates_against_the_schema() {
        let (t, a) = task(&[
            "content.mathematical_expression",
            "provenance.paper_location",
        ]);
        let s = schema(&t, &a, &["MATH_OLD_01".into()]);
        let v = jsonschema::validator_for(&s).expect("the schema compiles");
        let ex = example(&t, &a);
        let mut answer = ex["example"].clone();
        answer["output"]["atoms"][0]["delta_audit"] =
            json!({"existing_assets": ["MATH_OLD_01"], "incremental_value": "x"});
        assert!(v.is_valid(&answer), "{answer}");
        // A made-up asset, a missing required field, another atom type: refused.
        let mut bad = answer.clone();
        bad["output"]["atoms"][0]["delta_audit"]["existing_assets"] = json!(["MADE_UP"]);
        assert!(!v.is_valid(&bad));
        let mut bad = answer.clone();
        bad["output"]["atoms"][0]["content"]
            .as_object_mut()
            .expect("content")
            .remove("mathematical_expression");
        assert!(!v.is_valid(&bad));
        let mut bad = answer;
        bad["output"]["atoms"][0]["atom_type"] = json!("Code_Atom");
        assert!(!v.is_valid(&bad));
    }

    #[test]
    fn every_object_is_strict_and_a_task_without_content_fields_gets_text() {
        let (t, a) = task(&[]);
        let s = schema(&t, &a, &[]);
        fn walk(v: &Value) {
            if v.get("type") == Some(&json!("object")) {
                assert_eq!(v["additionalProperties"], json!(false), "{v}");
                let props: Vec<&String> = v["properties"]
                    .as_object()
                    .expect("properties")
                    .keys()
                    .collect();
                let req: Vec<&str> = v["required"]
                    .as_array()
                    .expect("required")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(props.len(), req.len(), "{v}");
            }
            match v {
                Value::Object(m) => m.values().for_each(walk),
                Value::Array(a) => a.iter().for_each(walk),
                _ => {}
            }
        }
        walk(&s);
        let atom = &s["properties"]["output"]["properties"]["atoms"]["items"];
        assert!(atom["properties"]["content"]["properties"]["text"].is_object());
        assert!(atom["properties"].get("delta_audit").is_none());
    }
}
