//! Random mutations of the fixture plans — values nested past any depth, numbers beyond
//! a 64-bit float, values of another type, keys nobody declared (typos of known ones
//! among them) — never give a plan that validates with fewer tasks than its file holds:
//! a part that cannot be read is an error at its place, never a task dropped.

use plexus::model::plan::{parse_plan, PlanErrorKind};
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// The valid plans the mutations start from.
const FIXTURES: &[&str] = &[
    "fixtures/plans/avp_diffusion_planner.json",
    "fixtures/plans/seed000_task_chain.json",
    "fixtures/plans/react_tools.json",
];

/// Stands for a value written into the text after serialisation (text a `Value`
/// cannot hold, such as `1e400`).
const HOLE: &str = "\"__PLEXUS_HOLE__\"";

/// One mutation of one task.
#[derive(Debug, Clone)]
enum Mutation {
    /// A field's value replaced by `levels` nested arrays around a number.
    Deep { field: String, levels: usize },
    /// A field's value replaced by a number as written (`1e400`, `-1e999`, `1e308`).
    Number { field: String, text: String },
    /// A field's value replaced by a value of some type.
    Swap { field: String, value: Value },
    /// A key added to the task or to one of its objects.
    Key { object: Option<String>, key: String },
}

/// Fields of a task, top-level and nested (dotted), that mutations aim at.
const FIELDS: &[&str] = &[
    "instruction",
    "focus",
    "depends_on",
    "context",
    "context.paper_info",
    "context.paper_info.title",
    "output_requirements",
    "output_requirements.max_atoms",
    "output_requirements.quality_threshold",
    "transfer_config",
    "transfer_config.mode",
    "transfer_config.max_tokens",
    "fallback_config",
    "constraints.timeout_seconds",
    "max_steps",
    "data_references",
];

/// Keys added: typos of known keys and made-up ones.
const KEYS: &[&str] = &[
    "quality_treshold",
    "max_atom",
    "transfrom",
    "mdoe",
    "instrcution",
    "depends",
    "zzz",
    "agent_name",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let field = prop::sample::select(FIELDS).prop_map(str::to_string);
    let value = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z ]{0,8}".prop_map(Value::String),
        Just(json!([])),
        Just(json!({})),
        Just(json!([1, "a"])),
    ];
    prop_oneof![
        (field.clone(), 1usize..400).prop_map(|(field, levels)| Mutation::Deep { field, levels }),
        (
            field.clone(),
            prop::sample::select(
                &["1e400", "-1e999", "1e308", "123456789012345678901234567890"][..]
            )
        )
            .prop_map(|(field, t)| Mutation::Number {
                field,
                text: t.to_string()
            }),
        (field.clone(), value).prop_map(|(field, value)| Mutation::Swap { field, value }),
        (
            prop::option::of(prop::sample::select(
                &[
                    "context",
                    "output_requirements",
                    "transfer_config",
                    "fallback_config",
                    "constraints"
                ][..]
            )),
            prop::sample::select(KEYS)
        )
            .prop_map(|(object, key)| Mutation::Key {
                object: object.map(str::to_string),
                key: key.to_string()
            }),
    ]
}

/// The object at the dotted `path` of `task` (made when absent), and the last name.
fn slot<'a>(
    task: &'a mut Value,
    path: &'a str,
) -> Option<(&'a mut serde_json::Map<String, Value>, &'a str)> {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop()?;
    let mut at = task;
    for p in parts {
        let obj = at.as_object_mut()?;
        at = obj.entry(p).or_insert_with(|| json!({}));
    }
    Some((at.as_object_mut()?, last))
}

/// The plan's text with `m` applied to task `i`.
fn mutate(plan: &Value, i: usize, m: &Mutation) -> String {
    let mut plan = plan.clone();
    let tasks = plan["tasks"].as_array_mut().expect("tasks");
    let i = i % tasks.len();
    let task = &mut tasks[i];
    let mut hole = None;
    match m {
        Mutation::Deep { field, levels } => {
            if let Some((obj, name)) = slot(task, field) {
                obj.insert(name.into(), json!("__PLEXUS_HOLE__"));
                hole = Some(format!("{}7{}", "[".repeat(*levels), "]".repeat(*levels)));
            }
        }
        Mutation::Number { field, text } => {
            if let Some((obj, name)) = slot(task, field) {
                obj.insert(name.into(), json!("__PLEXUS_HOLE__"));
                hole = Some(text.clone());
            }
        }
        Mutation::Swap { field, value } => {
            if let Some((obj, name)) = slot(task, field) {
                obj.insert(name.into(), value.clone());
            }
        }
        Mutation::Key { object, key } => {
            let target = match object {
                Some(o) => task
                    .as_object_mut()
                    .map(|t| t.entry(o.as_str()).or_insert_with(|| json!({}))),
                None => Some(task),
            };
            if let Some(Value::Object(obj)) = target {
                obj.insert(key.clone(), json!(1));
            }
        }
    }
    let text = serde_json::to_string_pretty(&plan).expect("serialise");
    match hole {
        Some(h) => text.replacen(HOLE, &h, 1),
        None => text,
    }
}

/// The number of tasks the text's `tasks` array holds.
fn tasks_in_file(text: &str) -> usize {
    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        tasks: Vec<&'a RawValue>,
    }
    serde_json::from_str::<Top<'_>>(text)
        .map(|t| t.tasks.len())
        .unwrap_or(0)
}

fn fixtures() -> Vec<Value> {
    FIXTURES
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{p}: {e}"))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn a_valid_plan_always_has_every_task_of_its_file(
        which in 0usize..FIXTURES.len(),
        i in 0usize..16,
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let plans = fixtures();
        let mut text = serde_json::to_string(&plans[which]).expect("serialise");
        for (k, m) in mutations.iter().enumerate() {
            // Each mutation on the text of the last one (holes filled in), when it is
            // still a JSON value; otherwise the mutations stop there.
            let Ok(v) = serde_json::from_str::<Value>(&text) else { break };
            text = mutate(&v, i + k, m);
        }
        let in_file = tasks_in_file(&text);
        match parse_plan(&text, "mutated.json") {
            Ok(plan) => prop_assert_eq!(
                plan.tasks.len(),
                in_file,
                "valid with fewer tasks than the file holds:\n{}",
                text
            ),
            Err(errors) => prop_assert!(!errors.0.is_empty()),
        }
    }
}

#[test]
fn a_task_nested_too_deep_or_holding_a_huge_number_is_an_error_at_its_line() {
    let plans = fixtures();
    for m in [
        Mutation::Deep {
            field: "context.paper_info.title".into(),
            levels: 130,
        },
        Mutation::Number {
            field: "focus".into(),
            text: "1e400".into(),
        },
    ] {
        let text = mutate(&plans[0], 1, &m);
        let errors = parse_plan(&text, "mutated.json")
            .expect_err("must not validate")
            .0;
        let e = &errors[0];
        assert_eq!(e.kind, PlanErrorKind::Syntax, "{m:?}: {errors:?}");
        assert_eq!(e.field, "tasks[1]", "{m:?}");
        assert!(e.task.is_some(), "the task is named by its id: {e}");
        assert!(
            e.message.starts_with("cannot be read at line "),
            "{m:?}: {}",
            e.message
        );
        // The line named is the line of the bad value in the file.
        let line: usize = e.message["cannot be read at line ".len()..]
            .split(',')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a line number");
        let bad_line = text.lines().nth(line - 1).expect("the line exists");
        assert!(
            bad_line.contains("[[[") || bad_line.contains("1e400"),
            "{m:?}: line {line} is {bad_line:?}"
        );
    }
}

#[test]
fn typos_in_nested_objects_are_refused_with_the_key_they_meant() {
    let plans = fixtures();
    for (object, key, meant) in [
        (
            "output_requirements",
            "quality_treshold",
            "quality_threshold",
        ),
        ("output_requirements", "max_atom", "max_atoms"),
        ("transfer_config", "mdoe", "mode"),
        ("fallback_config", "retry_cuont", "retry_count"),
    ] {
        let m = Mutation::Key {
            object: Some(object.into()),
            key: key.into(),
        };
        let text = mutate(&plans[0], 0, &m);
        let errors = parse_plan(&text, "typo.json").expect_err(key).0;
        let e = errors
            .iter()
            .find(|e| e.field == format!("{object}.{key}"))
            .unwrap_or_else(|| panic!("{key}: {errors:?}"));
        assert_eq!(e.kind, PlanErrorKind::UnknownField);
        assert!(
            e.message.contains(&format!("did you mean `{meant}`?")),
            "{key}: {}",
            e.message
        );
    }
    // A data reference's `transform` misspelt (the seed's chain plan, task 2).
    let mut plan = plans[1].clone();
    let r = &mut plan["tasks"][1]["data_references"][0];
    let t = r["transform"].take();
    r.as_object_mut().expect("a reference").remove("transform");
    r["transfrom"] = t;
    let errors = parse_plan(&plan.to_string(), "typo.json")
        .expect_err("transfrom")
        .0;
    let e = errors
        .iter()
        .find(|e| e.field == "data_references[0].transfrom")
        .unwrap_or_else(|| panic!("{errors:?}"));
    assert_eq!(e.kind, PlanErrorKind::UnknownField);
    assert!(
        e.message.contains("did you mean `transform`?"),
        "{}",
        e.message
    );
}
