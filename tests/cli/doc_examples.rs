//! Every JSON example of docs/plans.md and docs/protocol.md runs: each is put in the
//! smallest plan that holds it (a whole plan as it is, an `agents` block with a task per
//! new agent, a reference in a task of its own, a task setting in a task that has data
//! for it), validated and run on the simulated provider in a workspace with the files
//! the examples name; a `sample` reference runs under `plexus eval`, the only command that
//! fills it. No example fails, and no reference of one fails unless the example is about
//! what happens when one does. A new kind of example fails this test until it is taught
//! how to run it.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::common::bin::{output, plexus, run_fast};
use plexus::data::store::Store;
use plexus::model::event::EngineEvent;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `json` code blocks of a document, as (first line, text), fences indented or not.
fn json_blocks(doc: &str) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(root().join(doc)).expect("document");
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match &mut open {
            None if t == "```json" => open = Some((i + 2, String::new())),
            Some((at, body)) if t == "```" => {
                blocks.push((*at, std::mem::take(body)));
                open = None;
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    assert!(open.is_none(), "{doc}: a json block is not closed");
    blocks
}

/// A workspace with what the examples read: the paper (where the docs put it and where
/// the repository has it), notes, and the skills of the tool example.
fn workspace(dir: &Path) {
    let pdf = root().join("fixtures/papers/transformer.pdf");
    for to in ["papers", "fixtures/papers"] {
        std::fs::create_dir_all(dir.join(to)).expect("papers");
        std::fs::copy(&pdf, dir.join(to).join("transformer.pdf")).expect("pdf");
    }
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    let long: String = (0..400)
        .map(|i| format!("Paragraph {i}: diffusion planners denoise whole trajectories.\n\n"))
        .collect();
    std::fs::write(dir.join("notes/long.md"), long).expect("note");
    for skill in ["literature-review", "citation-check"] {
        let from = root().join("fixtures/plans/skills").join(skill);
        let to = dir.join("skills").join(skill);
        std::fs::create_dir_all(&to).expect("skill dir");
        for f in std::fs::read_dir(&from).expect("skill") {
            let f = f.expect("entry").path();
            std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
        }
    }
}

/// A task of `agent` asked for claims.
fn task(id: &str, agent: &str) -> Value {
    json!({"task_id": id, "agent": agent, "instruction": format!("Do {id} and answer with atoms."),
           "output_requirements": {"atom_type": "claim", "quality_threshold": "D", "max_atoms": 3}})
}

/// How an example is run.
enum Example {
    /// A plan for `plexus run`.
    Plan(Value),
    /// A plan for `plexus eval`, over one sample.
    Eval(Value),
    /// Not a plan (an editor setting).
    NotAPlan,
}

/// The smallest plan that holds `example`.
fn plan_for(example: &str) -> Example {
    let text = example.trim();
    let value: Value = if text.starts_with('{') {
        serde_json::from_str(text)
    } else {
        serde_json::from_str(&format!("{{{text}}}"))
    }
    .unwrap_or_else(|e| panic!("not JSON ({e}):\n{example}"));
    let obj = value.as_object().expect("an object").clone();
    if obj.contains_key("plan_id") {
        return Example::Plan(value);
    }
    if obj.contains_key("json.schemas") {
        return Example::NotAPlan;
    }
    if obj.contains_key("ref_type") {
        return reference_plan(value);
    }
    if obj.contains_key("tasks") {
        let mut plan = obj;
        plan.insert("plan_id".into(), json!("DOC_EXAMPLE"));
        return Example::Plan(Value::Object(plan));
    }
    if let Some(agents) = obj.get("agents").and_then(Value::as_object) {
        let tasks: Vec<Value> = agents
            .keys()
            .enumerate()
            .map(|(i, a)| task(&format!("T{i}"), a))
            .collect();
        return Example::Plan(json!({"plan_id": "DOC_EXAMPLE", "agents": agents, "tasks": tasks}));
    }
    if obj.contains_key("transfer_config") || obj.contains_key("fallback_config") {
        let mut t = task("T1", "validator");
        let t_obj = t.as_object_mut().expect("task");
        // Data for the setting to act on: a long note, and for a fallback a file that
        // is not there.
        let mut refs = vec![json!({"ref_type": "file", "path": "notes/long.md"})];
        if obj.contains_key("fallback_config") {
            refs.push(json!({"ref_type": "file", "path": "notes/missing.md"}));
        }
        t_obj.insert("data_references".into(), Value::Array(refs));
        t_obj.extend(obj.clone());
        return Example::Plan(json!({"plan_id": "DOC_EXAMPLE", "tasks": [t]}));
    }
    panic!("this test does not know how to run the example:\n{example}");
}

/// A plan whose task `T1` holds the reference `r` (after the task it reads, if any).
fn reference_plan(r: Value) -> Example {
    let mut tasks = Vec::new();
    let mut t = task("T1", "validator");
    if let Some(up) = r.get("task_id").and_then(Value::as_str) {
        tasks.push(task(up, "scholar"));
        t["depends_on"] = json!([up]);
    }
    let sample = r["ref_type"] == "sample";
    t["data_references"] = json!([r]);
    tasks.push(t);
    let plan = json!({"plan_id": "DOC_EXAMPLE", "tasks": tasks});
    if sample {
        Example::Eval(plan)
    } else {
        Example::Plan(plan)
    }
}

/// The references that failed in the newest run of `db`, as `code: message`.
fn failed_references(db: &Path) -> Vec<String> {
    let store = Store::open(db).expect("db");
    let run = store.run("latest").expect("run").run_id;
    store
        .events_of_kinds(&run, &["reference_failed"], 0, u64::MAX)
        .expect("log")
        .into_iter()
        .filter_map(|row| match row.event.expect("decodes") {
            EngineEvent::ReferenceFailed(f) => Some(format!("{:?}", f)),
            _ => None,
        })
        .collect()
}

const FAST: [&str; 4] = ["--chunk-ms", "0", "--first-chunk-ms", "0"];

/// Validates and runs `plan` in `dir` as example `n`; returns the failed references.
fn run_plan(dir: &Path, n: usize, plan: &Value, what: &str) -> Vec<String> {
    let file = format!("example{n}.json");
    std::fs::write(dir.join(&file), plan.to_string()).expect("plan");
    let v = output(plexus(dir).args(["validate", &file]));
    assert_eq!(v.code, Some(0), "{what}: validate:\n{}\n{plan:#}", v.stderr);
    let db = dir.join(format!("example{n}.db"));
    let r = run_fast(dir, &db, &file);
    assert_eq!(r.code, Some(0), "{what}: run:\n{}\n{plan:#}", r.stderr);
    failed_references(&db)
}

/// Runs `plan` under `plexus eval` over one sample with a document.
fn run_eval(dir: &Path, n: usize, plan: &Value, what: &str) {
    std::fs::write(dir.join(format!("eval{n}.json")), plan.to_string()).expect("plan");
    std::fs::write(
        dir.join(format!("data{n}.jsonl")),
        "{\"id\": \"s1\", \"input\": {\"document\": \"Attention is all you need.\"}, \"expected\": \"x\"}\n",
    )
    .expect("dataset");
    let spec = json!({"name": format!("doc{n}"), "plan": format!("eval{n}.json"),
                      "dataset": format!("data{n}.jsonl"),
                      "checks": [{"name": "format", "kind": "json_valid"}]});
    std::fs::write(dir.join(format!("spec{n}.json")), spec.to_string()).expect("spec");
    let o = output(
        plexus(dir)
            .args(["--db", "eval.db", "eval", &format!("spec{n}.json")])
            .args(["--out", &format!("tree{n}"), "--headless", "--json"])
            .args(FAST),
    );
    assert_eq!(o.code, Some(0), "{what}: eval:\n{}", o.stderr);
    let report: Value = serde_json::from_str(&o.stdout).expect("report");
    assert_eq!(report["counts"]["error"], 0, "{what}: {report:#}");
}

/// Whether an example is about a reference that fails (its failures are the point).
fn expects_failures(plan: &Value) -> bool {
    plan.to_string().contains("fallback_config")
}

#[test]
fn every_json_example_of_plans_and_protocol_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir);
    let mut ran = 0;
    for doc in ["docs/plans.md", "docs/protocol.md"] {
        let blocks = json_blocks(doc);
        assert!(!blocks.is_empty(), "{doc} has no JSON example");
        for (line, example) in blocks {
            let what = format!("{doc}:{line}");
            ran += 1;
            match plan_for(&example) {
                Example::NotAPlan => {}
                Example::Eval(plan) => run_eval(dir, ran, &plan, &what),
                Example::Plan(plan) => {
                    let failed = run_plan(dir, ran, &plan, &what);
                    if expects_failures(&plan) {
                        assert!(!failed.is_empty(), "{what}: the fallback never acted");
                    } else {
                        assert!(failed.is_empty(), "{what}: {failed:#?}\n{plan:#}");
                    }
                }
            }
        }
    }
    assert!(ran >= 10, "only {ran} examples");
}

#[test]
fn the_protocols_settings_example_sends_what_it_says() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir);
    let (_, example) = json_blocks("docs/protocol.md")
        .into_iter()
        .find(|(_, b)| b.contains("TRANSFER_SETTINGS"))
        .expect("the settings example");
    let Example::Plan(plan) = plan_for(&example) else {
        panic!("a whole plan")
    };
    assert!(run_plan(dir, 0, &plan, "settings").is_empty());
    let store = Store::open(&dir.join("example0.db")).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let mut modes: Map<String, Value> = Map::new();
    for row in store
        .events_of_kinds(&run, &["context_planned"], 0, u64::MAX)
        .expect("log")
    {
        let task = row.task_id.clone().unwrap_or_default();
        if let Ok(EngineEvent::ContextPlanned(c)) = row.event {
            for i in c.inputs.iter().filter(|i| i.name.contains(':')) {
                let v = json!({"mode": i.mode, "tokens_after": i.tokens_after});
                modes.insert(format!("{task} {}", i.name), v);
            }
        }
    }
    let at = |k: &str| modes.get(k).unwrap_or_else(|| panic!("{k}: {modes:#?}"));
    assert_eq!(
        at("read_paper file:fixtures/papers/transformer.pdf")["mode"],
        "full"
    );
    let claims = at("check_claims task_output:read_paper");
    assert_eq!(claims["mode"], "summary", "{modes:#?}");
    assert!(
        claims["tokens_after"].as_u64().expect("tokens") <= 300,
        "{modes:#?}"
    );
    assert_eq!(at("index task_output:read_paper")["mode"], "reference");
    assert_eq!(at("index task_output:check_claims")["mode"], "reference");
}
