//! The simulated model after a compression: it reads what it did from the summary (a
//! summarised call keeps its short input, even in a round's references) and never makes
//! the same call twice, whatever the window; it had re-activated its skills after every
//! compression until the step limit.

use std::path::Path;

use serde_json::json;

use crate::common::bin::run_fast;
use plexus::data::store::Store;
use plexus::model::event::EngineEvent;

/// Six skills in a chain (`uses` the next), each with a second file, two offered to
/// the agent; thirty notes to search and read; the plan for an agent of `window` tokens.
fn workspace(dir: &Path, window: u64) {
    let names = ["alpha", "beta", "gamma", "delta", "eps", "zeta"];
    for (i, name) in names.iter().enumerate() {
        let d = dir.join("skills").join(name);
        std::fs::create_dir_all(&d).expect("skill dir");
        let uses = names.get(i + 1).copied().unwrap_or_default();
        let body: Vec<String> = (0..10)
            .map(|k| format!("Rule {k} of {name}: quote the note."))
            .collect();
        std::fs::write(
            d.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: The {name} way.\nuses: [{uses}]\n---\n\n# {name}\n\n{}\n",
                body.join(" ")
            ),
        )
        .expect("SKILL.md");
        std::fs::write(d.join("extra.md"), "extra ".repeat(50)).expect("extra");
    }
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    for i in 0..30 {
        let lines: Vec<String> = (0..40)
            .map(|k| format!("Line {k}: diffusion planners denoise trajectories in step {k}."))
            .collect();
        std::fs::write(
            dir.join(format!("notes/note-{i:02}.md")),
            format!("# Note {i}\n\n{}", lines.join("\n")),
        )
        .expect("note");
    }
    let plan = json!({
        "plan_id": "SIM_COMPRESSION",
        "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {
            "tools": ["file_search", "file_reader", "get_now", "calculate_date", "atom_query"],
            "skills": ["alpha", "gamma"],
            "max_input_tokens": window
        }},
        "tasks": [{
            "task_id": "T1",
            "agent": "Researcher",
            "instruction": "Find the notes and say what they claim.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}
        }]
    });
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
}

/// What the loop of a run at `window` did: its calls as `tool input`, its compressions,
/// and how it stopped.
fn run_at(window: u64) -> (Vec<String>, u32, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir, window);
    let out = run_fast(dir, &dir.join("s.db"), "plan.json");
    // Succeeded, or failed as a run (the window, the step limit).
    assert!(matches!(out.code, Some(0 | 3)), "{}", out.stderr);
    let store = Store::open(&dir.join("s.db")).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let mut calls = Vec::new();
    let mut compressions = 0;
    let mut stop = String::new();
    for row in store.events(&run, 1, u64::MAX).expect("events") {
        match row.event.expect("decodes") {
            EngineEvent::ToolCalled(c) => calls.push(format!("{} {}", c.tool, c.input)),
            EngineEvent::ContextCompressed(_) => compressions += 1,
            EngineEvent::LoopFinished(f) => stop = f.stop,
            _ => {}
        }
    }
    (calls, compressions, stop)
}

#[test]
fn the_simulated_model_never_repeats_a_call_after_a_compression() {
    let mut answered_after_compressing = 0;
    for window in [2_750, 3_000, 3_250, 3_500, 4_000, 4_500] {
        let (calls, compressions, stop) = run_at(window);
        for (i, c) in calls.iter().enumerate() {
            assert!(
                !calls[..i].contains(c),
                "window {window}: `{c}` made twice ({compressions} compressions): {calls:#?}"
            );
        }
        // It stops on an answer, on the window (the pinned skills fill it) or on the
        // step limit (more tools than steps): never on a loop.
        assert!(
            ["answer", "context_window", "step_limit"].contains(&stop.as_str()),
            "window {window}: {stop}"
        );
        if compressions > 0 && stop == "answer" {
            answered_after_compressing += 1;
        }
    }
    assert!(
        answered_after_compressing > 0,
        "no window both compressed and answered"
    );
}
