//! Skills are enforced by the engine, not by the model's word: a scripted model that
//! activates `alpha`, `beta`, `gamma`, `alpha`, `beta` without ever sending `from_skill`
//! (alpha uses beta, beta uses gamma, gamma uses alpha) meets the cycle, and a skill the
//! task was never offered is refused; each refusal is an observation the model reads.

use std::path::Path;

use serde_json::json;

use super::scripted_levels::final_answer;
use super::scripted_run::run_scripted;
use plexus::dev::mock_server::script::Script;
use plexus::model::event::EngineEvent;

fn workspace(dir: &Path) {
    for (name, uses) in [
        ("alpha", "beta"),
        ("beta", "gamma"),
        ("gamma", "alpha"),
        ("delta", ""),
    ] {
        let d = dir.join("skills").join(name);
        std::fs::create_dir_all(&d).expect("skill dir");
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} way.\nuses: [{uses}]\n---\n\n# {name}\n\nDo it the {name} way.\n"),
        )
        .expect("SKILL.md");
    }
    std::fs::write(
        dir.join("skills/alpha/example.md"),
        "An alpha example: first the goal, then the steps.\n",
    )
    .expect("resource");
    let plan = json!({
        "plan_id": "SKILLS",
        "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {"skills": ["alpha"]}},
        "tasks": [{
            "task_id": "TASK_SKILLS_01",
            "agent": "Researcher",
            "instruction": "Work the alpha way.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}
        }]
    });
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
}

fn activate(name: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": name}}]})
}

#[test]
fn the_engine_tracks_the_chain_and_refuses_cycles_and_skills_never_offered() {
    let mut turns: Vec<serde_json::Value> = ["alpha", "beta", "gamma", "alpha", "delta"]
        .iter()
        .map(|n| activate(n))
        .collect();
    turns.push(json!({"text": final_answer()}));
    let script: Script = serde_json::from_value(json!({ "turns": turns })).expect("script");
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let what = format!("{kind} stream={stream}");
            let events = run_scripted(&script, kind, stream, workspace).events;
            let mut seen = Vec::new();
            let mut errors = Vec::new();
            for event in events {
                match event {
                    EngineEvent::SkillActivated(a) => {
                        seen.push(format!("loaded {}", a.chain.join(" > ")))
                    }
                    EngineEvent::SkillRefused(x) => {
                        seen.push(format!("refused {}: {}", x.skill, x.chain.join(" > ")));
                        assert!(!x.reason.is_empty(), "{what}");
                    }
                    EngineEvent::ToolAnswered(a) if a.is_error => errors.push(a.observation),
                    _ => {}
                }
            }
            assert_eq!(
                seen,
                [
                    "loaded alpha",
                    "loaded alpha > beta",
                    "loaded alpha > beta > gamma",
                    "refused alpha: alpha > beta > gamma > alpha",
                    "refused delta: delta",
                ],
                "{what}"
            );
            // Each refusal went back to the model as an observation it can read.
            assert_eq!(errors.len(), 2, "{what}: {errors:?}");
            assert!(errors[0].contains("cycle"), "{what}: {}", errors[0]);
            assert!(
                errors[1].contains("not offered to this task (alpha)"),
                "{what}: {}",
                errors[1]
            );
        }
    }
}

fn read(skill: &str, path: Option<&str>) -> serde_json::Value {
    let mut args = json!({"skill_name": skill});
    if let Some(p) = path {
        args["path"] = json!(p);
    }
    json!({"tool_calls": [{"name": "read_skill_file", "arguments": args}]})
}

#[test]
fn an_active_skill_s_other_files_are_read_inside_its_folder_only() {
    let script: Script = serde_json::from_value(json!({"turns": [
        read("alpha", Some("example.md")),
        activate("alpha"),
        read("alpha", None),
        read("alpha", Some("example.md")),
        read("alpha", Some("../delta/SKILL.md")),
        {"text": final_answer()}
    ]}))
    .expect("script");
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let what = format!("{kind} stream={stream}");
            let events = run_scripted(&script, kind, stream, workspace).events;
            let answers: Vec<(bool, String)> = events
                .into_iter()
                .filter_map(|e| match e {
                    EngineEvent::ToolAnswered(a) if a.tool == "read_skill_file" => {
                        Some((a.is_error, a.observation))
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(answers.len(), 4, "{what}: {answers:?}");
            assert!(
                answers[0].0 && answers[0].1.contains("not active"),
                "{what}: before activation: {:?}",
                answers[0]
            );
            assert!(
                !answers[1].0 && answers[1].1.contains("example.md"),
                "{what}: the list: {:?}",
                answers[1]
            );
            assert!(
                !answers[2].0 && answers[2].1.contains("first the goal"),
                "{what}: the file: {:?}",
                answers[2]
            );
            assert!(
                answers[3].0 && answers[3].1.contains(".."),
                "{what}: outside the folder: {:?}",
                answers[3]
            );
        }
    }
}
