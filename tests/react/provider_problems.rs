//! The problems report blames what failed: six HTTP 500 answers from the model's server
//! are a provider problem (fix target the provider), not a missing data source of the
//! plan (E001 is both codes' number).

use serde_json::{json, Value};

use crate::common::bin::{output, plexus};
use plexus::dev::mock_server::script::Script;
use plexus::dev::mock_server::{MockConfig, MockServer};

#[test]
fn http_500_answers_are_reported_as_a_provider_problem() {
    let turns: Vec<Value> = (0..8)
        .map(|_| json!({"status": 500, "text": "{\"error\": {\"message\": \"upstream overloaded\"}}"}))
        .collect();
    let script: Script = serde_json::from_value(json!({"turns": turns})).expect("script");
    let server = MockServer::start(
        MockConfig {
            model_script: Some(script),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let plan = json!({"plan_id": "P500", "execution_mode": "Quick_Assessment",
        "tasks": [{"task_id": "T", "agent": "Scholar_Internalizer", "instruction": "Analyse the formula.",
            "output_requirements": {"quality_threshold": "C", "max_atoms": 1}}]});
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nstream = false\n",
            server.url()
        ),
    )
    .expect("config");
    let run = output(plexus(dir).args([
        "--db",
        "p.db",
        "--config",
        "plexus.toml",
        "run",
        "plan.json",
        "--provider",
        "local",
        "--headless",
        "--retry-delay-div",
        "1000",
    ]));
    assert_eq!(run.code, Some(3), "{}\n{}", run.stdout, run.stderr);
    let out = output(plexus(dir).args(["--db", "p.db", "export-failures", "latest", "tree"]));
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let report = find_report(&dir.join("tree")).expect("a problems report in the tree");
    let problems = report["layer1_problems"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let types: Vec<&str> = problems
        .iter()
        .filter_map(|p| p["problem_type"].as_str())
        .collect();
    assert!(types.contains(&"Provider_Error"), "{report:#}");
    assert!(!types.contains(&"Source_Not_Found"), "{report:#}");
    let text = report.to_string();
    assert!(
        !text.contains("plan.data_references"),
        "the plan is not blamed: {report:#}"
    );
}

/// The first JSON file under `dir` whose name says it is the problems report.
fn find_report(dir: &std::path::Path) -> Option<Value> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        if p.is_dir() {
            if let Some(v) = find_report(&p) {
                return Some(v);
            }
        } else if p.file_name()?.to_str()?.contains("problems") {
            return serde_json::from_str(&std::fs::read_to_string(&p).ok()?).ok();
        }
    }
    None
}
