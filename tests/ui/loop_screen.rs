//! A tool-using loop read whole: the output pane's observation lines give an error's
//! reason and a skill's text, Enter in the output pane opens a step (thought, action
//! with its arguments, observation, a spilled observation's stored file), and the
//! conversation view lists every message with its role and tokens. Snapshots at 80x24,
//! 120x40 and 200x60.

use crate::common;

use common::screen::render;
use plexus::model::event::Envelope;
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::docs::{Doc, DocKey};
use plexus::tui::app::ui_state::{Overlay, Pane};
use plexus::tui::app::{update, Action, Effect, Screen, UiState};
use serde_json::json;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];
const INV: &str = "INV_20261127_120000_RESEARCHER_001";
const DATA_FILE: &str = "tool_data/R1/call_3_file_search_0badf00d.json";
const REASON: &str = "cannot read `notes/diffusion.md`: the file does not exist in the workspace (searched from /work/ws); file_search lists what is there";

/// Folds JSON events of one task's loop (`seq`, `ts`, run, task and invocation filled in).
fn fold(events: Vec<serde_json::Value>) -> RunState {
    let mut st = RunState::new();
    for (i, mut e) in events.into_iter().enumerate() {
        e["run_id"] = json!("R20261127-120000-0001");
        e["seq"] = json!(i + 1);
        e["ts"] = json!(1_795_700_000_000i64 + i as i64 * 100);
        if e["kind"] != "run_started" {
            e["task_id"] = json!("TASK_LOOKUP_01");
            e["agent"] = json!("Researcher");
            if e["kind"] != "task_ready" && e["kind"] != "task_finished" {
                e["invocation_id"] = json!(INV);
            }
        }
        let env: Envelope =
            serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{e}: {err}"));
        reduce(&mut st, &env);
    }
    st
}

fn answered(step: u32, tool: &str, observation: &str, error: bool) -> serde_json::Value {
    json!({"kind": "tool_answered", "step": step, "tool_call_id": format!("call_{step}_{tool}"),
        "tool": tool, "observation": observation, "is_error": error, "output_level": "standard",
        "duration_ms": 3.2, "input_tokens": 8, "output_tokens": 40 + step})
}

fn called(step: u32, tool: &str, input: serde_json::Value, thought: &str) -> serde_json::Value {
    json!({"kind": "tool_called", "step": step, "tool_call_id": format!("call_{step}_{tool}"),
        "tool": tool, "input": input, "thought": thought, "message_tokens": 30 + step})
}

/// A finished loop of four steps: a skill activated, a tool that failed with a long
/// reason, a search whose data went to a file, a compression, the final answer.
fn loop_run() -> RunState {
    let skill = "\n# Literature review\n\n1. Search the workspace for notes (`file_search`).\n2. Read the most relevant ones.\n\n\nUses: citation-check";
    let error = format!(
        "Operation failed.\nError Type: not_found\nError Code: FILE_NOT_FOUND\nError Message: {REASON}\nTool Call ID: call_2_file_reader"
    );
    let mut spilled = answered(
        3,
        "file_search",
        &format!("Stored 2048 bytes in {DATA_FILE}.\nSummary: 12 files match `**/*.md`."),
        false,
    );
    spilled["data_file"] = json!(DATA_FILE);
    spilled["data_size_bytes"] = json!(2048);
    spilled["output_level"] = json!("full");
    fold(vec![
        json!({"kind": "run_started", "plan_id": "REACT_TOOLS_DEMO", "execution_mode": "Quick_Assessment",
            "provider": "simulated", "seed": 7, "concurrency": 8,
            "agents": [{"name": "Researcher", "max_input_tokens": 100000, "data_area_tokens": 80000}],
            "tasks": [{"task_id": "TASK_LOOKUP_01", "agent": "Researcher"}]}),
        json!({"kind": "task_ready"}),
        json!({"kind": "invocation_started", "attempt": 1, "prompt_tokens": 912,
            "constraints": {"timeout_seconds": 150.0, "max_tokens": 4000, "temperature": 0.1},
            "quality_threshold": "C"}),
        json!({"kind": "chunk", "text": "Thought: the skill literature-review fits; I activate it.\n"}),
        called(
            1,
            "activate_skill",
            json!({"skill_name": "literature-review"}),
            "Thought: the skill literature-review fits; I activate it.\n",
        ),
        json!({"kind": "skill_activated", "skill": "literature-review", "chain": ["literature-review"], "tokens": 90}),
        answered(1, "activate_skill", skill, false),
        json!({"kind": "chunk", "text": "Thought: I read the notes on diffusion planners.\n"}),
        called(
            2,
            "file_reader",
            json!({"path": "notes/diffusion.md", "start_line": 1}),
            "Thought: I read the notes on diffusion planners.\n",
        ),
        answered(2, "file_reader", &error, true),
        json!({"kind": "chunk", "text": "Thought: the file is not there; I search.\n"}),
        called(
            3,
            "file_search",
            json!({"pattern": "**/*.md", "output_level": "full"}),
            "Thought: the file is not there; I search.\n",
        ),
        spilled,
        json!({"kind": "context_compressed", "before_tokens": 81000, "after_tokens": 12000,
            "rounds_summarised": 2, "rounds_kept": 1}),
        json!({"kind": "chunk", "text": "{\"status\": \"success\", \"output\": {}}"}),
        json!({"kind": "loop_finished", "stop": "answer", "steps": 4, "tool_calls": 3, "compressions": 1,
            "total_tokens": 5210, "input_tokens": 5000, "output_tokens": 210, "answer_tokens": 64}),
    ])
}

fn ui_on_output() -> UiState {
    let mut ui = UiState::new(false);
    ui.screen = Screen::Run;
    ui.focus = Pane::Output;
    ui
}

#[test]
fn observation_lines_give_an_errors_reason_and_a_skills_text() {
    let st = loop_run();
    let out = &st.tasks[0].output;
    let lines: Vec<&str> = (0..out.len()).map(|i| out.line(i)).collect();
    let error = lines
        .iter()
        .find(|l| l.starts_with("◂ observation (error) · file_reader"))
        .expect("the error's line");
    assert!(
        error.contains(&format!("FILE_NOT_FOUND: {REASON}")),
        "{error}"
    );
    assert!(!error.contains("Operation failed"), "{error}");
    let skill = lines
        .iter()
        .find(|l| l.starts_with("◂ observation · activate_skill"))
        .expect("the skill's line");
    assert!(
        skill.contains(": # Literature review ⏎ 1. Search the workspace"),
        "{skill}"
    );
    let stored = lines
        .iter()
        .find(|l| l.starts_with("◂ observation · file_search"))
        .expect("the search's line");
    assert!(
        stored.contains("(stored in a file · Enter opens the step)"),
        "{stored}"
    );
    // At 80x24 the reason is on screen, wrapped, not cut to its first line.
    let mut ui = ui_on_output();
    ui.scroll.follow = false;
    ui.scroll.top = lines
        .iter()
        .position(|l| l.starts_with("▸ step 2"))
        .expect("step 2");
    let s = render(&st, &mut ui, 80, 24);
    assert!(s.contains("FILE_NOT_FOUND:"), "{s}");
    assert!(s.contains("exist in the workspace"), "{s}");
    assert!(s.contains("file_search lists"), "{s}");
}

#[test]
fn enter_in_the_output_opens_a_step_whole_at_every_size() {
    let st = loop_run();
    for (w, h) in SIZES {
        let mut ui = ui_on_output();
        // Scrolled to step 2: Enter opens the first step from the top of the pane.
        ui.scroll.follow = false;
        ui.scroll.top = (0..st.tasks[0].output.len())
            .position(|i| st.tasks[0].output.line(i).starts_with("▸ step 2"))
            .expect("step 2");
        let fx = update(&mut ui, &st, Action::Open);
        assert!(fx.is_empty(), "{fx:?}");
        assert!(
            matches!(&ui.overlay, Some(Overlay::LoopStep(p)) if p.step == 2),
            "{:?}",
            ui.overlay
        );
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("Step 2 (2/3)"), "{s}");
        assert!(s.contains("\"path\": \"notes/diffusion.md\""), "{s}");
        assert!(s.contains("Error Message: cannot read"), "{s}");
        insta::assert_snapshot!(format!("loop_step_error_{w}x{h}"), s);
        // → the next step: its stored file is asked for, and shown once read.
        let fx = update(&mut ui, &st, Action::Right);
        let key = DocKey::DataFile(INV.into(), DATA_FILE.into());
        assert_eq!(fx, vec![Effect::LoadDoc(key.clone())]);
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("loading…"), "{s}");
        ui.docs.insert(
            key.clone(),
            Doc::Ready("[\n  \"notes/a.md\",\n  \"notes/b.md\"\n]".into()),
        );
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("Stored file: tool_data/R1/"), "{s}");
        insta::assert_snapshot!(format!("loop_step_stored_{w}x{h}"), s);
        update(&mut ui, &st, Action::Bottom);
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("\"notes/b.md\""), "{s}");
        // A file that is gone says so.
        ui.docs.insert(
            key,
            Doc::Missing(format!(
                "the stored file {DATA_FILE} is gone (moved or deleted)"
            )),
        );
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("is gone"), "{s}");
        // Esc closes.
        update(&mut ui, &st, Action::Back);
        assert_eq!(ui.overlay, None);
    }
}

#[test]
fn a_long_step_scrolls_at_80x24() {
    let st = loop_run();
    let mut ui = ui_on_output();
    update(&mut ui, &st, Action::Open);
    // Following the tail, Enter opens the newest step.
    assert!(matches!(&ui.overlay, Some(Overlay::LoopStep(p)) if p.step == 3));
    ui.docs.insert(
        DocKey::DataFile(INV.into(), DATA_FILE.into()),
        Doc::Ready(
            (1..=60)
                .map(|i| format!("\"notes/{i}.md\"\n"))
                .collect::<String>()
                .into(),
        ),
    );
    let s = render(&st, &mut ui, 80, 24);
    assert!(!s.contains("notes/60.md"), "{s}");
    update(&mut ui, &st, Action::Bottom);
    let s = render(&st, &mut ui, 80, 24);
    assert!(s.contains("notes/60.md"), "{s}");
    update(&mut ui, &st, Action::Left);
    assert!(matches!(&ui.overlay, Some(Overlay::LoopStep(p)) if p.step == 2 && p.top == 0));
    // C from a step: the conversation, on that step's assistant message.
    update(&mut ui, &st, Action::LoopConversation);
    match &ui.overlay {
        Some(Overlay::Conversation(c)) => assert_eq!(c.selected, 3),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_conversation_lists_every_message_with_role_and_tokens_at_every_size() {
    let st = loop_run();
    let rows = st.tasks[0].loops[0].conversation();
    let roles: Vec<&str> = rows.iter().map(|r| r.role).collect();
    assert_eq!(
        roles,
        [
            "system + user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "summary",
            "assistant"
        ]
    );
    let tokens: Vec<Option<u64>> = rows.iter().map(|r| r.tokens).collect();
    assert_eq!(
        tokens,
        [
            Some(912),
            Some(31),
            Some(41),
            Some(32),
            Some(42),
            Some(33),
            Some(43),
            Some(12000),
            Some(64)
        ]
    );
    for (w, h) in SIZES {
        let mut ui = UiState::new(false);
        ui.screen = Screen::Run;
        update(&mut ui, &st, Action::LoopConversation);
        let s = render(&st, &mut ui, w, h);
        assert!(
            s.contains("Conversation · TASK_LOOKUP_01 · 9 messages"),
            "{s}"
        );
        assert!(s.contains("system + user"), "{s}");
        assert!(s.contains("file_reader (error)"), "{s}");
        insta::assert_snapshot!(format!("loop_conversation_{w}x{h}"), s);
        // Enter on a message opens its step; Esc goes back to the list, Esc closes.
        for _ in 0..4 {
            update(&mut ui, &st, Action::Up);
        }
        update(&mut ui, &st, Action::Open);
        assert!(
            matches!(&ui.overlay, Some(Overlay::LoopStep(p)) if p.step == 2),
            "{:?}",
            ui.overlay
        );
        update(&mut ui, &st, Action::Back);
        assert!(matches!(ui.overlay, Some(Overlay::Conversation(_))));
        update(&mut ui, &st, Action::Back);
        assert_eq!(ui.overlay, None);
    }
}

#[test]
fn enter_without_a_loop_says_why() {
    let mut st = loop_run();
    std::sync::Arc::make_mut(&mut st.tasks[0]).loops = Box::default();
    let mut ui = ui_on_output();
    update(&mut ui, &st, Action::Open);
    assert_eq!(ui.overlay, None);
    let flash = ui.flash.as_ref().expect("a message");
    assert!(flash.text.contains("no tool-using loop"), "{}", flash.text);
}
