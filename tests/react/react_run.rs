//! A plan with tool-using tasks runs offline on the simulated provider and against a
//! local server speaking OpenAI tool calls and Anthropic tool_use blocks, streamed;
//! every step is in the log; a rerun from the recording shows no difference.

use crate::common;

use std::path::Path;

use common::bin::{output, plexus, run_fast};
use plexus::data::store::Store;
use plexus::model::event::EngineEvent;

/// A workspace with notes and two skills, the second using the first back (a cycle).
pub(super) fn workspace(dir: &Path) {
    let skill = |name: &str, uses: &str, body: &str| {
        let d = dir.join("skills").join(name);
        std::fs::create_dir_all(&d).expect("skill dir");
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {body}\nuses: [{uses}]\n---\n\n# {name}\n\n{body}\n"),
        )
        .expect("SKILL.md");
    };
    skill(
        "literature-review",
        "citation-check",
        "Read the notes first, then check every citation.",
    );
    skill(
        "citation-check",
        "literature-review",
        "Check each citation against the notes.",
    );
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    std::fs::write(
        dir.join("notes/diffusion.md"),
        "# Diffusion planners\n\nThey denoise trajectories.\n",
    )
    .expect("note");
    let plan = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plans/react_tools.json"),
    )
    .expect("fixture");
    std::fs::write(dir.join("plan.json"), plan).expect("plan");
}

/// Runs `plan` into `db` on the simulated provider at full speed; it must succeed.
pub(super) fn run_offline(dir: &Path, db: &str, plan: &str) {
    let out = run_fast(dir, Path::new(db), plan);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
}

/// Reruns `run` of `db` from its recording; it must match it exactly.
fn rerun_matches(dir: &Path, db: &str, run: &str) {
    let re = output(plexus(dir).args([
        "--db",
        db,
        "rerun",
        run,
        "--instant",
        "--json",
        "--headless",
    ]));
    assert_eq!(re.code, Some(0), "{}\n{}", re.stdout, re.stderr);
    let report: serde_json::Value = serde_json::from_str(&re.stdout).expect("report");
    assert_eq!(report["mismatches"], 0, "{report:#}");
}

/// Every event of the newest run in `db`.
fn events(db: &Path) -> (String, Vec<(Option<String>, EngineEvent)>) {
    let store = Store::open(db).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let evs = store
        .events(&run, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .map(|r| (r.task_id, r.event.expect("decodes")))
        .collect();
    (run, evs)
}

fn check_loop(evs: &[(Option<String>, EngineEvent)]) {
    let called: Vec<String> = evs
        .iter()
        .filter_map(|(t, e)| match e {
            EngineEvent::ToolCalled(c) => {
                Some(format!("{} {}", t.as_deref().unwrap_or(""), c.tool))
            }
            _ => None,
        })
        .collect();
    for want in [
        "TASK_LOOKUP_01 activate_skill",
        "TASK_LOOKUP_01 file_search",
        "TASK_LOOKUP_01 file_reader",
        "TASK_LOOKUP_01 get_now",
        "TASK_SCHEDULE_01 calculate_date",
        "TASK_SCHEDULE_01 atom_query",
    ] {
        assert!(
            called.iter().any(|c| c == want),
            "{want} missing: {called:?}"
        );
    }
    let answered = evs
        .iter()
        .filter(|(_, e)| matches!(e, EngineEvent::ToolAnswered(_)))
        .count();
    assert_eq!(answered, called.len(), "every call is answered");
    // Both skills activate (the second from the first) and the way back is refused.
    let activated: Vec<Vec<String>> = evs
        .iter()
        .filter_map(|(_, e)| match e {
            EngineEvent::SkillActivated(s) => Some(s.chain.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        activated,
        [
            vec!["literature-review".to_string()],
            vec![
                "literature-review".to_string(),
                "citation-check".to_string()
            ],
        ]
    );
    let refused: Vec<&EngineEvent> = evs
        .iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, EngineEvent::SkillRefused(_)))
        .collect();
    match refused.as_slice() {
        [EngineEvent::SkillRefused(r)] => {
            assert_eq!(
                r.chain,
                ["literature-review", "citation-check", "literature-review"]
            );
        }
        other => panic!("one refusal expected: {other:?}"),
    }
    let ends: Vec<String> = evs
        .iter()
        .filter_map(|(_, e)| match e {
            EngineEvent::LoopFinished(f) => Some(f.stop.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["answer", "answer"]);
    // The whole answer is logged before the loop's end: no chunk of a task comes after
    // its `loop_finished` until it starts another invocation.
    let mut ended: std::collections::HashSet<&str> = Default::default();
    for (t, e) in evs {
        let t = t.as_deref().unwrap_or("");
        match e {
            EngineEvent::LoopFinished(_) => {
                ended.insert(t);
            }
            EngineEvent::InvocationStarted(_) => {
                ended.remove(t);
            }
            EngineEvent::Chunk(c) => {
                assert!(
                    !ended.contains(t),
                    "{t}: a chunk after loop_finished: {c:?}"
                )
            }
            _ => {}
        }
    }
    // The log holds each step's message tokens and the final answer's, so the
    // conversation view can list every message with its tokens.
    for (_, e) in evs {
        match e {
            EngineEvent::ToolCalled(c) => {
                assert!(c.message_tokens.is_some_and(|t| t > 0), "{c:?}");
            }
            EngineEvent::LoopFinished(f) => {
                let a = f.answer_tokens.expect("the answer's tokens");
                assert!(a > 0 && a <= f.output_tokens, "{f:?}");
            }
            _ => {}
        }
    }
    let finished = evs
        .iter()
        .filter(
            |(_, e)| matches!(e, EngineEvent::TaskFinished(f) if f.status.as_str() == "success"),
        )
        .count();
    assert_eq!(finished, 2, "both tasks succeed");
}

#[test]
fn a_tool_using_plan_runs_offline_and_reruns_without_difference() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir);
    run_offline(dir, "r.db", "plan.json");
    let (run, evs) = events(&dir.join("r.db"));
    check_loop(&evs);
    // The Run screen draws the loop: each action and observation with its metrics,
    // the skills, the refusal and the loop's end, between the streamed thoughts.
    let store = Store::open(&dir.join("r.db")).expect("db");
    let st = plexus::tui::loader::fold_run(&store, &run, Some(0), None).expect("fold");
    let mut ui = plexus::tui::app::UiState::new(false);
    ui.task = 0;
    let screen = common::screen::render(&st, &mut ui, 200, 200);
    for want in [
        "Thought: the skill literature-review fits this task",
        "▸ step 1 · action: activate_skill",
        "✦ skill literature-review activated",
        "⚠ skill literature-review refused: ",
        "▸ step 4 · action: file_search(",
        "▸ step 5 · action: file_reader({\"end_line\":40,\"path\":\"notes/diffusion.md\"",
        "◂ observation · get_now · standard",
        "■ loop ended (answer)",
    ] {
        assert!(
            screen.contains(want),
            "`{want}` not on the screen:\n{screen}"
        );
    }
    // Each step folds from the command line (`:fold N`, `:fold all`, `:unfold …`).
    plexus::tui::app::command_line::run(&mut ui, &st, "fold 1");
    let screen = common::screen::render(&st, &mut ui, 200, 200);
    let folded_line = screen
        .lines()
        .find(|l| l.contains("▸ step 1 · action: activate_skill("))
        .expect("step 1's action line");
    assert!(folded_line.contains(" line(s) folded"), "{screen}");
    assert!(
        !screen.contains("Thought: the skill literature-review fits this task"),
        "{screen}"
    );
    assert!(
        screen.contains("▸ step 4 · action: file_search("),
        "{screen}"
    );
    plexus::tui::app::command_line::run(&mut ui, &st, "fold all");
    let all = common::screen::render(&st, &mut ui, 200, 200);
    assert!(!all.contains("◂ observation · get_now"), "{all}");
    assert!(
        all.contains("■ loop ended (answer)"),
        "the answer stays: {all}"
    );
    plexus::tui::app::command_line::run(&mut ui, &st, "unfold all");
    let open = common::screen::render(&st, &mut ui, 200, 200);
    assert!(
        open.contains("Thought: the skill literature-review fits this task"),
        "{open}"
    );
    drop(store);
    // `show --json` carries each loop's metrics and every tool call's.
    let show = output(plexus(dir).args(["--db", "r.db", "show", &run, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
    let loops = v["tool_loops"].as_array().expect("tool_loops");
    assert_eq!(loops.len(), 2, "{v:#}");
    let lookup = &loops[0];
    assert_eq!(lookup["task_id"], "TASK_LOOKUP_01");
    assert_eq!(lookup["stop"], "answer");
    assert_eq!(lookup["skills"].as_array().map(Vec::len), Some(2));
    assert_eq!(lookup["refusals"].as_array().map(Vec::len), Some(1));
    let calls = lookup["tool_calls"].as_array().expect("calls");
    // Three activations, file_search, file_reader, get_now, and the active skill's
    // files listed (read_skill_file).
    assert_eq!(calls.len(), 7, "{lookup:#}");
    let listed = calls
        .iter()
        .find(|c| c["tool_name"] == "read_skill_file")
        .expect("read_skill_file called");
    assert_eq!(listed["success"], true, "{lookup:#}");
    for c in calls {
        for field in [
            "tool_name",
            "duration_ms",
            "input_tokens",
            "output_tokens",
            "success",
            "retry_count",
            "output_level",
            "cached",
        ] {
            assert!(c.get(field).is_some(), "{field} missing in {c}");
        }
    }
    rerun_matches(dir, "r.db", &run);
    let (_, again) = events(&dir.join("r.db"));
    check_loop(&again);
}

#[test]
fn a_tool_using_plan_runs_against_a_local_server_of_either_api() {
    use plexus::dev::mock_server::{MockConfig, MockServer};
    let server = MockServer::start(
        MockConfig {
            stream_ms: 10,
            chunks: 4,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    for (kind, base) in [
        ("openai", format!("{}/v1", server.url())),
        ("anthropic", server.url()),
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        workspace(dir);
        std::fs::write(
            dir.join("plexus.toml"),
            format!("[providers.local]\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"m\"\n"),
        )
        .expect("config");
        let out = output(plexus(dir).args([
            "--db",
            "h.db",
            "--config",
            "plexus.toml",
            "run",
            "plan.json",
            "--provider",
            "local",
            "--headless",
        ]));
        assert_eq!(out.code, Some(0), "{kind}: {}\n{}", out.stdout, out.stderr);
        let (_, evs) = events(&dir.join("h.db"));
        check_loop(&evs);
    }
}

#[test]
fn a_long_loop_in_a_small_window_is_compressed_and_every_prompt_fits_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir);
    let plan = serde_json::json!({
        "plan_id": "REACT_SMALL_WINDOW",
        "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {
            "max_input_tokens": 3_000,
            "tools": ["file_search", "file_reader", "atom_query", "get_now", "calculate_date"],
            "skills": ["literature-review"]
        }},
        "tasks": [{
            "task_id": "T",
            "agent": "Researcher",
            "instruction": "Look everything up, then answer.",
            "token_budget": 100000,
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}
        }]
    });
    std::fs::write(dir.join("small.json"), plan.to_string()).expect("plan");
    run_offline(dir, "s.db", "small.json");
    let (run, evs) = events(&dir.join("s.db"));
    let compressions: Vec<_> = evs
        .iter()
        .filter_map(|(_, e)| match e {
            EngineEvent::ContextCompressed(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert!(
        !compressions.is_empty(),
        "no compression: {:?}",
        evs.iter().map(|(_, e)| e.kind()).collect::<Vec<_>>()
    );
    // The whole prompt (tool schemas included) was at 80% of the window or more, and
    // fits it after: the last rounds stay whole, as many as fit (five at most).
    for c in &compressions {
        assert!((1..=5).contains(&c.rounds_kept), "{c:?}");
        assert!(c.before_tokens >= 3_000 * 8 / 10, "{c:?}");
        assert!(
            c.rounds_summarised >= 1 && c.after_tokens < c.before_tokens && c.after_tokens <= 3_000,
            "{c:?}"
        );
    }
    // Every tool was still called exactly once: the summary keeps what was done.
    let mut called: Vec<String> = evs
        .iter()
        .filter_map(|(_, e)| match e {
            EngineEvent::ToolCalled(c) if c.tool != "activate_skill" => Some(c.tool.clone()),
            _ => None,
        })
        .collect();
    called.sort();
    assert_eq!(
        called,
        [
            "atom_query",
            "calculate_date",
            "file_reader",
            "file_search",
            "get_now",
            "read_skill_file"
        ]
    );
    rerun_matches(dir, "s.db", &run);
}
