//! The JSON Schema of plans (`plexus schema plan`) against the validator: every shipped
//! plan passes both; each kind of mistake JSON Schema can express is refused by both;
//! and of the invalid fixtures, the schema lets through exactly those whose only
//! problems are ones only `plexus validate` can find (cycles, unknown ids, …).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use plexus::model::plan::{parse_plan, plan_schema};

fn validator() -> jsonschema::Validator {
    let schema = plan_schema();
    assert!(
        jsonschema::meta::is_valid(&schema),
        "the plan schema is not valid JSON Schema"
    );
    jsonschema::validator_for(&schema).expect("the plan schema compiles")
}

/// The schema's complaints about `plan`, one line each.
fn schema_errors(v: &jsonschema::Validator, plan: &Value) -> Vec<String> {
    v.iter_errors(plan)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Every `.json` file under `dir`, recursively, except the invalid fixtures.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with("invalid") {
            json_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
}

#[test]
fn every_shipped_plan_passes_the_schema_and_the_validator() {
    let v = validator();
    let mut files = Vec::new();
    json_files(Path::new("fixtures/plans"), &mut files);
    assert!(files.len() >= 3, "{files:?}");
    let mut plans: Vec<(String, Value)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f:?}: {e}"));
            (f.display().to_string(), value)
        })
        .collect();
    // A generated plan (`plexus dev gen-plan`) is a shipped plan too.
    let spec = plexus::dev::gen_plan::GenSpec {
        tasks: 30,
        width: 5,
        ..Default::default()
    };
    plans.push(("gen-plan".into(), plexus::dev::gen_plan::generate(spec)));
    for (name, plan) in &plans {
        let errors = schema_errors(&v, plan);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        if let Err(e) = parse_plan(&plan.to_string(), name) {
            panic!("{name}: {e}");
        }
    }
}

/// A small valid plan, changed by `edit`.
fn plan_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut plan = json!({
        "$schema": "./plan.schema.json",
        "plan_id": "P",
        "execution_mode": "Quick_Assessment",
        "agents": {"Helper": {"temperature": 0.2, "tools": ["get_now"]}},
        "tasks": [
            {"task_id": "A", "agent": "scholar", "instruction": "read"},
            {"task_id": "B", "agent": "Helper", "instruction": "use",
             "depends_on": ["A"],
             "data_references": [
                 {"ref_type": "task_output", "task_id": "A", "path": "$.atoms"},
                 {"ref_type": "file", "path": "notes.md", "format": "md"},
                 {"ref_type": "db_query", "table": "knowledge_atoms", "limit": 10,
                  "order_by": {"field": "created_at", "direction": "desc"}}
             ],
             "output_requirements": {"quality_threshold": "B", "max_atoms": 5},
             "constraints": {"max_tokens": 100},
             "skills": ["lit-review"], "max_steps": 4}
        ]
    });
    edit(&mut plan);
    plan
}

#[test]
fn the_base_plan_and_a_schema_key_pass_both() {
    let plan = plan_with(|_| {});
    assert_eq!(schema_errors(&validator(), &plan), Vec::<String>::new());
    if let Err(e) = parse_plan(&plan.to_string(), "plan.json") {
        panic!("{e}");
    }
    let bad = plan_with(|p| p["$schema"] = json!(3));
    assert!(!validator().is_valid(&bad));
    assert!(parse_plan(&bad.to_string(), "plan.json").is_err());
}

#[test]
fn mistakes_json_schema_can_express_are_refused_by_both() {
    let v = validator();
    let cases: Vec<(&str, Value)> = vec![
        ("unknown top field", plan_with(|p| p["owner"] = json!("me"))),
        (
            "unknown task field",
            plan_with(|p| p["tasks"][0]["depend_on"] = json!([])),
        ),
        (
            "unknown agent field",
            plan_with(|p| p["agents"]["Helper"]["temprature"] = json!(1)),
        ),
        (
            "wrong type",
            plan_with(|p| p["tasks"][1]["max_steps"] = json!("4")),
        ),
        (
            "wrong type in a list",
            plan_with(|p| p["tasks"][1]["depends_on"] = json!([1])),
        ),
        (
            "number out of range",
            plan_with(|p| p["tasks"][1]["constraints"]["max_tokens"] = json!(0)),
        ),
        (
            "fraction where a whole number is wanted",
            plan_with(|p| p["agents"]["Helper"]["max_tokens"] = json!(10.5)),
        ),
        (
            "bad execution mode",
            plan_with(|p| p["execution_mode"] = json!("Fast")),
        ),
        (
            "bad grade",
            plan_with(|p| p["tasks"][1]["output_requirements"]["quality_threshold"] = json!("AA")),
        ),
        (
            "bad ref_type",
            plan_with(|p| p["tasks"][1]["data_references"][0]["ref_type"] = json!("url")),
        ),
        (
            "bad file format",
            plan_with(|p| p["tasks"][1]["data_references"][1]["format"] = json!("docx")),
        ),
        (
            "bad table",
            plan_with(|p| p["tasks"][1]["data_references"][2]["table"] = json!("runs")),
        ),
        (
            "bad direction",
            plan_with(|p| {
                p["tasks"][1]["data_references"][2]["order_by"]["direction"] = json!("up")
            }),
        ),
        (
            "unknown tool",
            plan_with(|p| p["tasks"][1]["tools"] = json!(["curl"])),
        ),
        (
            "bad skill name",
            plan_with(|p| p["tasks"][1]["skills"] = json!(["../etc"])),
        ),
        (
            "missing required field",
            plan_with(|p| {
                p["tasks"][0]
                    .as_object_mut()
                    .map(|t| t.remove("instruction"));
            }),
        ),
        (
            "missing plan_id",
            plan_with(|p| {
                p.as_object_mut().map(|t| t.remove("plan_id"));
            }),
        ),
        (
            "blank instruction",
            plan_with(|p| p["tasks"][0]["instruction"] = json!("  ")),
        ),
        (
            "control character in an id",
            plan_with(|p| p["tasks"][0]["task_id"] = json!("A\u{202e}")),
        ),
        ("no tasks", plan_with(|p| p["tasks"] = json!([]))),
        (
            "missing file path",
            plan_with(|p| {
                p["tasks"][1]["data_references"][1]
                    .as_object_mut()
                    .map(|r| r.remove("path"));
            }),
        ),
    ];
    for (what, plan) in cases {
        assert!(
            !schema_errors(&v, &plan).is_empty(),
            "{what}: the schema accepts it"
        );
        assert!(
            parse_plan(&plan.to_string(), "plan.json").is_err(),
            "{what}: plexus validate accepts it"
        );
    }
}

#[test]
fn the_schema_lets_through_only_what_validate_alone_can_find() {
    // Invalid fixtures whose every problem JSON Schema cannot express.
    let only_validate = [
        "bad_jsonpath",
        "cycle_three_tasks",
        "duplicate_task_id",
        "missing_dependency",
        "ref_missing_task",
        "ref_not_upstream",
        "self_dependency",
        "unknown_agent",
        "unknown_db_column_condition",
        "unknown_db_column_order_by",
        "unknown_db_column_select",
    ];
    let v = validator();
    let mut files: Vec<PathBuf> = std::fs::read_dir("fixtures/plans/invalid")
        .expect("the invalid fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 19, "{files:?}");
    for file in files {
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&file).expect("readable");
        let Ok(plan) = serde_json::from_str::<Value>(&text) else {
            continue; // not JSON at all: no editor schema applies
        };
        let refused = !schema_errors(&v, &plan).is_empty();
        assert_eq!(
            refused,
            !only_validate.contains(&name),
            "{name}: refused by the schema: {refused}"
        );
    }
}
