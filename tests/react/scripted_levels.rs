//! The agent chooses a tool's output level: a scripted model (the mock server's
//! `--script`) calls `file_search` with `"output_level": "full"`, on both APIs, streamed
//! and whole; the call is not refused for an unknown argument, the level holds, the full
//! result is stored in a file, and every tool is advertised with the argument.

use std::path::Path;

use serde_json::json;

use super::scripted_run::run_scripted;
use plexus::base::protocol::messages::OutputLevel;
use plexus::dev::mock_server::script::Script;
use plexus::model::event::EngineEvent;

/// The final answer: one valid Note atom.
pub fn final_answer() -> String {
    json!({"output": {"atoms": [{
        "asset_id": "ATOM_LEVELS_01",
        "atom_type": "Note",
        "category": "Atom_Ops",
        "confidence": 0.67,
        "content": {"note": "The notes say diffusion planners denoise whole trajectories at once."},
        "data_status": "Verified_Source_Anchored",
        "delta_audit": {"existing_assets": [], "contradiction_marked": false},
        "metadata": {"created_at": "2026-11-27T00:00:00Z", "created_by": "Researcher", "version": "1.0", "tags": ["#ATOM"]},
        "provenance": {"paper_id": "ArXiv:2406.01234", "paper_location": "Page 4, Eq. 1", "atom_path": "/atoms/atom/ATOM_LEVELS_01.json"}
    }], "summary": "One note."}})
    .to_string()
}

fn workspace(dir: &Path) {
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    std::fs::write(
        dir.join("notes/diffusion.md"),
        "# Diffusion planners\n\nThey denoise trajectories.\n",
    )
    .expect("note");
    let plan = json!({
        "plan_id": "LEVELS",
        "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {"tools": ["file_search", "get_now"]}},
        "tasks": [{
            "task_id": "TASK_LEVELS_01",
            "agent": "Researcher",
            "instruction": "Find the notes and say what they claim.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}
        }]
    });
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
}

#[test]
fn the_agent_asks_for_the_full_level_and_gets_it_stored_on_either_api_streamed_or_whole() {
    let script: Script = serde_json::from_value(json!({"turns": [
        {"text": "I look for the notes.",
         "tool_calls": [{"name": "file_search", "arguments": {"pattern": "**/*.md", "output_level": "full"}}],
         "fragments": 5},
        {"text": final_answer()}
    ]}))
    .expect("script");
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let what = format!("{kind} stream={stream}");
            let ran = run_scripted(&script, kind, stream, workspace);
            let dir = ran.dir.path();
            let answered: Vec<_> = ran
                .events
                .iter()
                .filter_map(|e| match e {
                    EngineEvent::ToolAnswered(a) => Some(a),
                    _ => None,
                })
                .collect();
            assert_eq!(answered.len(), 1, "{what}: {answered:?}");
            let a = &answered[0];
            assert!(!a.is_error, "{what}: {}", a.observation);
            assert_eq!(a.output_level, OutputLevel::Full, "{what}");
            let file = a.data_file.as_deref().expect("a full result is stored");
            let stored = std::fs::read_to_string(dir.join(file))
                .or_else(|_| std::fs::read_to_string(file))
                .unwrap_or_else(|e| panic!("{what}: {file}: {e}"));
            assert!(stored.contains("notes/diffusion.md"), "{what}: {stored}");
            // Every tool is advertised with the argument.
            let first = &ran.server.seen()[0];
            let body: serde_json::Value = serde_json::from_str(&first.body).expect("body");
            let all = body["tools"].as_array().expect("tools");
            // Anthropic holds the final answer to its schema through one tool more, the
            // model's way to answer (OpenAI through `response_format`).
            let (answer, tools): (Vec<_>, Vec<_>) = all
                .iter()
                .partition(|t| t["name"] == "answer" || t["function"]["name"] == "answer");
            assert_eq!(tools.len(), 2, "{what}");
            assert_eq!(answer.len(), usize::from(kind == "anthropic"), "{what}");
            if kind == "openai" {
                assert_eq!(body["response_format"]["type"], "json_schema", "{what}");
            }
            for t in tools {
                let schema = if kind == "openai" {
                    &t["function"]["parameters"]
                } else {
                    &t["input_schema"]
                };
                assert_eq!(
                    schema["properties"]["output_level"]["enum"],
                    json!(["brief", "standard", "full"]),
                    "{what}: {t}"
                );
            }
        }
    }
}
