//! The shape a task's answer must have, from its `output_requirements` and its agent:
//! the JSON Schema the server is asked to hold the answer to (in the strict subset every
//! dialect takes: every property required, no other property; the one bound is the
//! number of atoms), and the short example the prompt shows. Both come from one description, so
//! what the prompt says and what the server enforces never differ.

use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use crate::base::agents::AgentDef;
use crate::base::protocol::SharedJson;
use crate::base::tokens::TokenCounter;
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

/// The `answer_format` of the prompts of `task`: the rule and example of its JSON
/// answer, or the plain-text rule of a task whose answer is text.
pub fn answer_format(task: &Task, agent: &AgentDef) -> SharedJson {
    if task.options().text_output {
        SharedJson::of(&json!({
            "rule": "Answer in plain text: the answer itself, with no JSON and nothing around it."
        }))
    } else {
        SharedJson::of(&example(task, agent))
    }
}

/// A run's answer formats, each rendered and counted once: the tasks that share their
/// output requirements (the plan holds them once) and their agent share one.
pub struct AnswerFormats {
    counter: TokenCounter,
    /// By the address of the task's requirements and of its agent's name, both held by
    /// the run's plan for the run's whole life, and whether the answer is text.
    rendered: Mutex<rustc_hash::FxHashMap<(usize, usize, bool), AnswerFormat>>,
}

/// One task shape's answer format, rendered, with what counting its prompts needs.
#[derive(Clone)]
pub struct AnswerFormat {
    json: SharedJson,
    counter: TokenCounter,
    /// Tokens of the format after its opening `{"`, with the prompt's closing `}`.
    tail_tokens: Option<usize>,
}

impl AnswerFormats {
    /// The formats of a run whose prompts are counted with `counter`.
    pub fn new(counter: TokenCounter) -> AnswerFormats {
        AnswerFormats {
            counter,
            rendered: Default::default(),
        }
    }

    /// The answer format of `task` (whose agent is `agent`), rendered on first use.
    pub fn of(&self, task: &Task, agent: &AgentDef) -> AnswerFormat {
        let key = (
            Arc::as_ptr(&task.output_requirements) as usize,
            Arc::as_ptr(&task.agent) as *const u8 as usize,
            task.options().text_output,
        );
        let mut rendered = match self.rendered.lock() {
            Ok(r) => r,
            Err(p) => p.into_inner(),
        };
        rendered
            .entry(key)
            .or_insert_with(|| {
                let json = answer_format(task, agent);
                let tail_tokens =
                    tail(json.get()).map(|t| self.counter.encoding.count(&format!("{t}}}")));
                AnswerFormat {
                    json,
                    counter: self.counter,
                    tail_tokens,
                }
            })
            .clone()
    }
}

impl AnswerFormat {
    /// The format as the prompt shows it.
    pub fn json(&self) -> SharedJson {
        self.json.clone()
    }

    /// Tokens of `prompt`, a rendered user prompt that ends with this format (as
    /// [`super::request::user_prompt_for`] writes it): the text before the format's
    /// first key is counted, the rest is the format's own count. The encoders split a
    /// piece there (the key's letters after `":{"`), so the sum is the count of the
    /// whole; a prompt of another shape is counted whole.
    pub fn prompt_tokens(&self, prompt: &str) -> u64 {
        self.two_part_count(prompt)
            .unwrap_or_else(|| self.counter.count(prompt))
    }

    /// The count of [`AnswerFormat::prompt_tokens`] in two parts, when `prompt` ends
    /// with this format.
    fn two_part_count(&self, prompt: &str) -> Option<u64> {
        const KEY: &str = "\"answer_format\":";
        let head = prompt
            .strip_suffix('}')?
            .strip_suffix(self.json.get())?
            .strip_suffix(KEY)?;
        let tail = self.tail_tokens?;
        // The head runs to the format's `{"`, before its first key's letters.
        let head = &prompt[..head.len() + KEY.len() + 2];
        Some(self.counter.count_with_tail(head, tail))
    }
}

/// The format after its opening `{"`, when a letter follows it (the first key's).
fn tail(json: &str) -> Option<&str> {
    json.strip_prefix("{\"")
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
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

    /// A plan of one task with `instruction`, `required` fields and a text or JSON answer.
    fn plan_of(instruction: &str, required: &[&str], text: bool) -> crate::model::plan::Plan {
        let plan = format!(
            r#"{{"plan_id":"P","tasks":[{{"task_id":"A","agent":"Scholar_Internalizer",
            "instruction":{},"output_format":{},
            "output_requirements":{{"required_fields":{}}}}}]}}"#,
            serde_json::to_string(instruction).expect("json"),
            if text { r#""text""# } else { r#""atoms""# },
            serde_json::to_string(required).expect("json"),
        );
        crate::model::plan::parse_plan(&plan, "p.json").expect("a plan")
    }

    #[test]
    fn a_prompt_counted_in_two_parts_counts_as_the_whole() {
        use crate::base::tokens::Encoding;
        use crate::run::engine::request::{user_prompt_for, ContextParts};
        let instructions = [
            "go",
            "Analyse \"it\"\n\tnow: 3.14159 and x_{t-1}",
            "分析这一段：去噪采样公式 x_{t-1}",
            "ends in punctuation ?!",
        ];
        let fields = [&[][..], &["content.mathematical_expression", "tags"][..]];
        let counters = [
            (Encoding::Cl100kBase, 1.0),
            (Encoding::O200kBase, 1.0),
            (Encoding::Cl100kBase, 1.15),
        ]
        .map(|(encoding, safety_factor)| TokenCounter {
            encoding,
            safety_factor,
        });
        let mut cases = Vec::new();
        for c in counters {
            for i in instructions {
                cases.extend(
                    fields
                        .iter()
                        .flat_map(|f| [false, true].map(|text| (c, i, *f, text))),
                );
            }
        }
        for (counter, instruction, required, text) in cases {
            let plan = plan_of(instruction, required, text);
            let (t, a) = (&plan.tasks[0], &plan.agents["Scholar_Internalizer"]);
            let format = AnswerFormats::new(counter).of(t, a);
            let p = user_prompt_for(
                t,
                a,
                crate::base::protocol::Grade::C,
                Some("the last answer had no atoms"),
                ContextParts::default(),
                format.json(),
            );
            let text = serde_json::to_string(&p).expect("renders");
            assert_eq!(
                format.two_part_count(&text),
                Some(counter.count(&text)),
                "{text}"
            );
            // The prompt shows the format as it was built.
            let shown: Value = serde_json::from_str(&text).expect("JSON");
            let built: Value = serde_json::from_str(answer_format(t, a).get()).expect("JSON");
            assert_eq!(shown["answer_format"], built);
            // A prompt that does not end with the format is counted whole.
            let other = text.replacen("answer_format", "answer_formats", 1);
            assert_eq!(format.two_part_count(&other), None);
            assert_eq!(format.prompt_tokens(&other), counter.count(&other));
        }
    }
}
