//! Reference transfer comes with the means to fetch: a task given an input by reference
//! is offered `fetch_reference` though its plan lists no tools, and a model that calls it
//! (two calls at once, one of them for an id that does not exist) gets the section it
//! asked for and an error naming the ids there are; both are logged like any tool.

use std::path::Path;

use serde_json::{json, Value};

use super::scripted_levels::final_answer;
use super::scripted_run::run_scripted;
use crate::common::{quick_sim, run_plan, test_config};
use plexus::dev::mock_server::script::Script;
use plexus::model::event::EngineEvent;

/// About 30,000 tokens of notes under numbered headings: by reference for a 100K window.
fn big_notes() -> String {
    let line = "The planner denoises the whole trajectory at once, conditioned on the scene.\n";
    let mut text = String::from("# 1 Introduction\n\n");
    text.push_str(&line.repeat(1_000));
    text.push_str("\n# 2 Method\n\nTHE METHOD: guidance weight 3.5 on 64 denoising steps.\n\n");
    text.push_str("# 3 Results\n\n");
    text.push_str(&line.repeat(1_000));
    text
}

fn plan() -> Value {
    json!({"plan_id": "FETCH", "execution_mode": "Quick_Assessment", "agents": {"Researcher": {}},
        "tasks": [{"task_id": "T", "agent": "Researcher", "instruction": "Say what the method is.",
            "data_references": [{"ref_type": "file", "path": "notes/big.md"}],
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}}]})
}

fn workspace(dir: &Path) {
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    std::fs::write(dir.join("notes/big.md"), big_notes()).expect("notes");
    std::fs::write(dir.join("plan.json"), plan().to_string()).expect("plan");
}

#[test]
fn a_model_fetches_a_section_of_a_reference_and_a_wrong_id_is_told_the_ids() {
    let script: Script = serde_json::from_value(json!({"turns": [
        {"text": "I need the method section.",
         "tool_calls": [
            {"name": "fetch_reference", "arguments": {"ref_id": "file:notes/big.md", "section": "Method", "max_tokens": 300}},
            {"name": "fetch_reference", "arguments": {"ref_id": "file:notes/other.md"}}
         ]},
        {"text": final_answer()}
    ]}))
    .expect("script");
    let ran = run_scripted(&script, "openai", true, workspace);
    // The first request offered the tool, and the reference said how to fetch it.
    let first = &ran.server.seen()[0].body;
    let body: Value = serde_json::from_str(first).expect("a JSON body");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(tools, ["fetch_reference"], "{}", body["tools"]);
    assert!(first.contains("fetch_with"), "the payload names the tool");
    let answered: Vec<_> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ToolAnswered(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(answered.len(), 2, "{answered:?}");
    let good = answered
        .iter()
        .find(|a| !a.is_error)
        .expect("one fetch answered");
    assert!(
        good.observation.contains("THE METHOD: guidance weight 3.5"),
        "{}",
        good.observation
    );
    assert!(
        !good.observation.contains("# 3 Results"),
        "{}",
        good.observation
    );
    let bad = answered.iter().find(|a| a.is_error).expect("one refused");
    assert!(
        bad.observation.contains("file:notes/big.md"),
        "the error names the ids there are: {}",
        bad.observation
    );
}

#[tokio::test]
async fn the_simulated_model_fetches_what_it_was_given_by_reference() {
    let w = tempfile::tempdir().expect("tempdir");
    workspace(w.path());
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    // Seconds, not the tests' milliseconds: the loop reads and counts 30K tokens.
    cfg.timeout_scale = 0.05;
    let r = run_plan(&plan().to_string(), quick_sim(), cfg).await;
    assert_eq!(r.status_of("T"), "success");
    let fetched: Vec<_> = r
        .of(|e| match e {
            EngineEvent::ToolAnswered(a) => Some(a),
            _ => None,
        })
        .into_iter()
        .map(|(_, a)| a.clone())
        .collect();
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert_eq!(fetched[0].tool, "fetch_reference");
    assert!(!fetched[0].is_error, "{}", fetched[0].observation);
    assert!(fetched[0].observation.contains("file:notes/big.md"));
}
