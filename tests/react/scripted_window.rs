//! The window holds at every step, and compression keeps what the next step needs: a
//! scripted model whose long thoughts fill a 3,000-token window is compressed before a
//! call would pass 80% of it (the tool schemas counted); a prompt that cannot fit ends
//! the task with E008 and the numbers before any call; after compression the model still
//! reads its active skill's instructions and its earlier `file_search` result whole (the
//! script's last turns answer only when the request carries them), and does not loop.

use std::path::Path;

use serde_json::{json, Value};

use super::scripted_levels::final_answer;
use super::scripted_run::{run_scripted, run_scripted_to, Scripted};
use plexus::base::protocol::ErrorCode;
use plexus::dev::mock_server::script::Script;
use plexus::model::event::EngineEvent;

/// The agent's window.
const WINDOW: u64 = 3_000;
/// A marker far into the skill's text (no extract of it keeps it).
const SKILL_MARK: &str = "SKILLMARK-ALPHA-4411";
/// A file name listed last by `file_search` (no extract of its result keeps it).
const FILE_MARK: &str = "zebra-7731";

/// Words of one token each, for thoughts that do not repeat themselves (a thought
/// saying the same few words again and again is a runaway, stopped as E009).
const WORDS: [&str; 40] = [
    " planners",
    " denoise",
    " whole",
    " paths",
    " quickly",
    " the",
    " model",
    " reads",
    " notes",
    " about",
    " noise",
    " and",
    " steps",
    " which",
    " keep",
    " each",
    " car",
    " safe",
    " near",
    " lanes",
    " while",
    " cost",
    " stays",
    " low",
    " over",
    " time",
    " maps",
    " show",
    " where",
    " goals",
    " move",
    " with",
    " speed",
    " then",
    " data",
    " gets",
    " clean",
    " from",
    " every",
    " test",
];

/// A thought of about `words` tokens.
fn thought(step: usize, words: usize) -> String {
    let mut t = format!("Step {step}: I go on looking.");
    for i in 0..words {
        // Words picked by a hash of their place: no span comes back soon.
        let h = ((i + 31 * step) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        t.push_str(WORDS[(h % WORDS.len() as u64) as usize]);
    }
    t
}

/// A plan of one task for an agent with four tools (and `skills`), and the window.
fn write_plan(dir: &Path, window: u64, skills: &[&str]) {
    let plan = json!({
        "plan_id": "WINDOW",
        "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {
            "tools": ["file_search", "get_now", "file_reader", "calculate_date"],
            "skills": skills,
            "max_input_tokens": window
        }},
        "tasks": [{
            "task_id": "TASK_WINDOW_01",
            "agent": "Researcher",
            "instruction": "Find the notes and say what they claim.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}
        }]
    });
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
}

fn small_workspace(dir: &Path) {
    write_plan(dir, WINDOW, &[]);
}

fn tiny_window(dir: &Path) {
    write_plan(dir, 900, &[]);
}

fn skill_workspace(dir: &Path) {
    write_plan(dir, WINDOW, &["alpha"]);
    let d = dir.join("skills/alpha");
    std::fs::create_dir_all(&d).expect("skill dir");
    std::fs::write(
        d.join("SKILL.md"),
        format!(
            "---\nname: alpha\ndescription: The alpha way.\n---\n\n# alpha\n\n\
             Read every note before you write. Quote the note's own words. Name the file \
             each claim comes from, and never claim what no note says. When two notes \
             disagree, say so. Keep to one atom. The check word is {SKILL_MARK}.\n"
        ),
    )
    .expect("SKILL.md");
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    for i in 0..12 {
        std::fs::write(dir.join(format!("notes/aaa-{i:02}.md")), "A note.\n").expect("note");
    }
    std::fs::write(dir.join(format!("notes/{FILE_MARK}.md")), "Zebras.\n").expect("note");
}

fn get_now(step: usize, words: usize) -> Value {
    json!({"text": thought(step, words), "tool_calls": [{"name": "get_now", "arguments": {}}]})
}

fn compressions(ran: &Scripted) -> Vec<(u64, u64, u32)> {
    ran.events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ContextCompressed(c) => {
                Some((c.before_tokens, c.after_tokens, c.rounds_summarised))
            }
            _ => None,
        })
        .collect()
}

fn loop_stop(ran: &Scripted) -> (String, u32) {
    ran.events
        .iter()
        .find_map(|e| match e {
            EngineEvent::LoopFinished(f) => Some((f.stop.clone(), f.steps)),
            _ => None,
        })
        .expect("loop_finished")
}

/// The task's error code and the message of the error (the invocation's when there was
/// one, else the task's).
fn task_error(ran: &Scripted) -> (Option<ErrorCode>, String) {
    let invocation = ran.events.iter().find_map(|e| match e {
        EngineEvent::InvocationFinished(i) => i.error_message.clone(),
        _ => None,
    });
    ran.events
        .iter()
        .find_map(|e| match e {
            EngineEvent::TaskFinished(t) => Some((
                t.error_code,
                invocation
                    .clone()
                    .or_else(|| t.error_message.clone())
                    .unwrap_or_default(),
            )),
            _ => None,
        })
        .expect("task_finished")
}

#[test]
fn long_thoughts_are_compressed_before_the_prompt_passes_eighty_percent_on_either_api() {
    let mut turns: Vec<Value> = (1..=7).map(|s| get_now(s, 420)).collect();
    turns.push(json!({"text": final_answer()}));
    let script: Script = serde_json::from_value(json!({ "turns": turns })).expect("script");
    let threshold = WINDOW * 8 / 10;
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let what = format!("{kind} stream={stream}");
            let ran = run_scripted(&script, kind, stream, small_workspace);
            let done = compressions(&ran);
            assert!(!done.is_empty(), "{what}: no compression");
            for (before, after, rounds) in &done {
                assert!(*before >= threshold, "{what}: {done:?}");
                assert!(*after < threshold, "{what}: {done:?}");
                assert!(*rounds > 0, "{what}: {done:?}");
            }
            assert_eq!(loop_stop(&ran), ("answer".to_string(), 8), "{what}");
            assert_eq!(ran.server.seen().len(), 8, "{what}");
        }
    }
}

#[test]
fn a_prompt_that_cannot_fit_ends_the_task_with_the_numbers_before_any_call() {
    // Before the first call: the tool schemas push the prompt over a 900-token window.
    let script: Script =
        serde_json::from_value(json!({"turns": [{"text": final_answer()}]})).expect("script");
    let ran = run_scripted_to(&script, "openai", true, tiny_window, 3);
    let (code, message) = task_error(&ran);
    assert_eq!(code, Some(ErrorCode::E008), "{message}");
    assert!(
        message.contains("tool schemas") && message.contains("900"),
        "{message}"
    );
    assert!(message.contains("nothing was sent"), "{message}");
    assert!(ran.server.seen().is_empty(), "a call was made");
    // Mid-run: one round larger than the window cannot be compressed away.
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let what = format!("{kind} stream={stream}");
            let script: Script = serde_json::from_value(json!({"turns": [
                get_now(1, 2_600),
                {"text": final_answer()}
            ]}))
            .expect("script");
            let ran = run_scripted_to(&script, kind, stream, small_workspace, 3);
            let (code, message) = task_error(&ran);
            assert_eq!(code, Some(ErrorCode::E008), "{what}: {message}");
            assert!(
                message.contains("step 2") && message.contains("3,000 tokens"),
                "{what}: {message}"
            );
            assert_eq!(loop_stop(&ran).0, "context_window", "{what}");
            assert_eq!(ran.server.seen().len(), 1, "{what}: step 2 was sent");
        }
    }
}

/// The script of a skill activated, a listing, six long thoughts, then two turns that
/// answer only a request carrying the skill's text and the listing's last file.
fn skill_then_long_thoughts() -> Vec<Value> {
    let mut turns = vec![
        json!({"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "alpha"}}]}),
        json!({"text": "I list the notes.", "tool_calls": [{"name": "file_search", "arguments": {"pattern": "notes/*.md"}}]}),
    ];
    turns.extend((3..=8).map(|s| get_now(s, 420)));
    // The last two turns answer only a request that carries the texts.
    turns.push(json!({
        "when": {"contains": FILE_MARK},
        "text": "The listing had the zebra note; I read it.",
        "tool_calls": [{"name": "file_reader", "arguments": {"path": format!("notes/{FILE_MARK}.md")}}]
    }));
    turns.push(json!({"when": {"contains": SKILL_MARK}, "text": final_answer()}));
    turns
}

#[test]
fn after_compression_the_model_reads_its_skill_and_its_earlier_result_and_does_not_loop() {
    let script: Script =
        serde_json::from_value(json!({ "turns": skill_then_long_thoughts() })).expect("script");
    assert_reads_skill_and_listing(&script);
}

#[test]
fn an_active_skill_stays_pinned_when_the_server_reuses_or_omits_call_ids() {
    // Servers that number each reply's calls from 0, or give no id at all: the skill's
    // activation and a later call arrive under the same id.
    for id in ["call_0", "0", ""] {
        let mut turns = skill_then_long_thoughts();
        for turn in &mut turns {
            if let Some(calls) = turn.get_mut("tool_calls").and_then(Value::as_array_mut) {
                for call in calls {
                    call["id"] = json!(id);
                }
            }
        }
        let script: Script = serde_json::from_value(json!({ "turns": turns })).expect("script");
        assert_reads_skill_and_listing(&script);
    }
}

/// Runs `script` on both APIs, streamed and not: compressions summarise at least two
/// rounds, the skill is activated once, and the loop answers after reading the note.
fn assert_reads_skill_and_listing(script: &Script) {
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let what = format!("{kind} stream={stream}");
            let ran = run_scripted(script, kind, stream, skill_workspace);
            let summarised: u32 = compressions(&ran).iter().map(|c| c.2).sum();
            assert!(summarised >= 2, "{what}: {:?}", compressions(&ran));
            let activations = ran
                .events
                .iter()
                .filter(|e| matches!(e, EngineEvent::SkillActivated(_)))
                .count();
            assert_eq!(activations, 1, "{what}");
            assert_eq!(loop_stop(&ran), ("answer".to_string(), 10), "{what}");
            let read = ran.events.iter().any(|e| {
                matches!(e, EngineEvent::ToolAnswered(a)
                    if a.tool == "file_reader" && !a.is_error && a.observation.contains(FILE_MARK))
            });
            let answers: Vec<String> = ran
                .events
                .iter()
                .filter_map(|e| match e {
                    EngineEvent::ToolAnswered(a) => Some(format!("{}: {}", a.tool, a.observation)),
                    _ => None,
                })
                .collect();
            assert!(read, "{what}: the zebra note was not read: {answers:#?}");
        }
    }
}
