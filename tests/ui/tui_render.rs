//! Snapshot tests of every pane and screen through ratatui's TestBackend, at 80x24 and
//! 200x60: a recorded demo run (fixtures/runs/demo.jsonl), plus a synthetic run with
//! Chinese text and a hostile string full of escape sequences.

use crate::common;

use common::screen::render;
use std::sync::Arc;

use plexus::base::protocol::{Constraints, Grade, GradeCounts, InvocationStatus};
use plexus::model::event::{
    AgentInfo, AtomGrade, AtomsGraded, Chunk, EngineEvent, Envelope, InvocationFinished,
    InvocationStarted, RunStarted, TaskFinished, TaskInfo, TaskStatus,
};
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::ui_state::{Doc, DocKey, OutputView, Overlay, Pane, Question};
use plexus::tui::app::{update, Action, Screen, UiState};

fn demo_state() -> RunState {
    let text = include_str!("../../fixtures/runs/demo.jsonl");
    let mut st = RunState::new();
    for (i, line) in text.lines().enumerate() {
        let env: Envelope =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("fixture line {}: {e}", i + 1));
        reduce(&mut st, &env);
    }
    st
}

fn ui_on(screen: Screen) -> UiState {
    let mut ui = UiState::new(true);
    ui.screen = screen;
    ui
}

fn env(
    seq: u64,
    task: Option<&str>,
    inv: Option<&str>,
    agent: Option<&str>,
    ev: EngineEvent,
) -> Envelope {
    Envelope {
        run_id: Arc::from("R-hostile"),
        seq,
        ts: 1_700_000_000_000 + seq as i64 * 250,
        task_id: task.map(Arc::from),
        invocation_id: inv.map(Arc::from),
        agent: agent.map(Arc::from),
        event: ev,
    }
}

const HOSTILE: &str = "evil\u{1b}[2J\u{1b}[H\u{1b}]0;pwned\u{7}\u{1b}]52;c;Y2xpcGJvYXJk\u{7} \u{202e}txet desrever\u{202c} \u{9b}31mred\tTAB\u{7}bell\r\n";

/// A run whose model wrote Chinese and a hostile string.
fn hostile_state() -> RunState {
    let agent = "Scholar_Internalizer";
    let mut st = RunState::new();
    let mut seq = 0;
    let mut push = |st: &mut RunState, task: Option<&str>, inv: Option<&str>, ev: EngineEvent| {
        seq += 1;
        reduce(st, &env(seq, task, inv, task.map(|_| agent), ev));
    };
    push(
        &mut st,
        None,
        None,
        EngineEvent::RunStarted(RunStarted {
            plan_id: "计划_中文".into(),
            execution_mode: "Deep_Internalization".into(),
            provider: "simulated".into(),
            seed: 1,
            concurrency: 2,
            agents: vec![AgentInfo {
                name: agent.into(),
                max_input_tokens: 100_000,
                data_area_tokens: 80_000,
            }],
            tasks: vec![
                TaskInfo {
                    task_id: "摘要任务".into(),
                    agent: agent.into(),
                    depends_on: vec![],
                },
                TaskInfo {
                    task_id: "evil\u{1b}[31m".into(),
                    agent: agent.into(),
                    depends_on: vec!["摘要任务".into()],
                },
            ],
        }),
    );
    let inv = Some("inv_Scholar_1");
    push(
        &mut st,
        Some("摘要任务"),
        inv,
        EngineEvent::InvocationStarted(InvocationStarted {
            attempt: 1,
            prompt_tokens: 4_321,
            constraints: Constraints::default(),
            quality_threshold: "B".into(),
        }),
    );
    for text in [
        "扩散模型的去噪公式：x_{t-1} = ",
        "μ_θ(x_t, t) + σ_t z。\n中文对齐测试：一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十\n",
        HOSTILE,
        "after\u{1b}[?1049l the end\n",
    ] {
        push(
            &mut st,
            Some("摘要任务"),
            inv,
            EngineEvent::Chunk(Chunk { text: text.into() }),
        );
    }
    push(
        &mut st,
        Some("摘要任务"),
        inv,
        EngineEvent::AtomsGraded(AtomsGraded {
            atoms: vec![AtomGrade {
                asset_id: "原子_01".into(),
                atom_type: "claim".into(),
                grade: Grade::A,
                score: 0.91,
                confidence: Some(0.9),
                issues: 0,
            }],
        }),
    );
    push(
        &mut st,
        Some("摘要任务"),
        inv,
        EngineEvent::InvocationFinished(InvocationFinished {
            status: Some(InvocationStatus::Success),
            execution_time_ms: 1200,
            output_tokens: 321,
            chunks: 4,
            atoms: 1,
            avg_score: 0.91,
            grades: GradeCounts {
                a: 1,
                b: 0,
                c: 0,
                d: 0,
            },
            issues: 0,
            errors: vec![],
            error_message: None,
            provider_usage: None,
            cost_usd: None,
            loop_prompt_tokens: None,
        }),
    );
    push(
        &mut st,
        Some("摘要任务"),
        None,
        EngineEvent::TaskFinished(TaskFinished {
            status: TaskStatus::Success,
            attempts: 1,
            atoms: 1,
            error_code: None,
            error_message: None,
        }),
    );
    st
}

/// No escape or control character reaches the screen.
fn assert_clean(screen: &str) {
    for c in screen.chars() {
        assert!(
            c == '\n'
                || !(c.is_control()
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
            "control character {:?} on screen:\n{screen}",
            c
        );
    }
}

#[test]
fn run_screen_80x24() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Run);
    ui.task = 2;
    let s = render(&st, &mut ui, 80, 24);
    assert_clean(&s);
    insta::assert_snapshot!(s);
}

#[test]
fn run_screen_200x60() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Run);
    ui.task = 2;
    let s = render(&st, &mut ui, 200, 60);
    assert_clean(&s);
    insta::assert_snapshot!(s);
}

#[test]
fn atoms_screen_both_sizes() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Atoms);
    insta::assert_snapshot!("atoms_80x24", render(&st, &mut ui, 80, 24));
    let mut ui = ui_on(Screen::Atoms);
    let _ = update(&mut ui, &st, Action::Sort);
    let _ = update(&mut ui, &st, Action::Sort);
    insta::assert_snapshot!("atoms_200x60_by_type", render(&st, &mut ui, 200, 60));
}

#[test]
fn help_overlay_lists_every_action() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Run);
    ui.overlay = Some(Overlay::Help { top: 0 });
    let s = render(&st, &mut ui, 200, 60);
    insta::assert_snapshot!("help_200x60", s);
    // Every action is listed; the help scrolls to the last of them.
    let mut seen = s;
    for _ in 0..10 {
        update(&mut ui, &st, Action::PageDown);
        seen.push_str(&render(&st, &mut ui, 200, 60));
    }
    for a in Action::ALL {
        assert!(
            seen.contains(plexus::tui::ui::help::describe(*a)),
            "help lacks {a:?}"
        );
    }
    let mut ui = ui_on(Screen::Run);
    ui.overlay = Some(Overlay::Help { top: 0 });
    insta::assert_snapshot!("help_80x24", render(&st, &mut ui, 80, 24));
}

#[test]
fn confirm_quit_dialog() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Run);
    ui.overlay = Some(Overlay::Confirm(Question::Quit));
    let s = render(&st, &mut ui, 80, 24);
    assert!(s.contains("stays resumable"));
    insta::assert_snapshot!("confirm_80x24", s);
}

#[test]
fn output_views_request_and_issues() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Run);
    ui.task = 1;
    let inv = st.tasks[1].invocation.clone().expect("invocation");
    ui.view = OutputView::Request;
    ui.focus = Pane::Output;
    ui.docs.insert(
        DocKey::Request(inv.clone()),
        Doc::Ready("{\n  \"task_id\": \"scholar\",\n  \"instruction\": \"分析去噪公式\"\n}".into()),
    );
    let s = render(&st, &mut ui, 80, 24);
    assert!(s.contains("分析去噪公式"), "{s}");
    insta::assert_snapshot!("output_request_80x24", s);
    ui.view = OutputView::Issues;
    ui.docs.insert(
        DocKey::Issues(inv),
        Doc::Missing("response: stored when the invocation ends; shown then".into()),
    );
    insta::assert_snapshot!("output_issues_200x60", render(&st, &mut ui, 200, 60));
}

#[test]
fn chinese_and_hostile_text_80x24() {
    let st = hostile_state();
    let mut ui = ui_on(Screen::Run);
    let s = render(&st, &mut ui, 80, 24);
    assert_clean(&s);
    assert!(s.contains("␛"), "escape sequences are shown as ␛:\n{s}");
    assert!(s.contains("摘要任务"));
    // Whole sequences are consumed: neither an OSC title nor a clipboard payload shows.
    assert!(!s.contains("pwned"), "{s}");
    assert!(!s.contains("Y2xpcGJvYXJk"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn chinese_and_hostile_text_200x60() {
    let st = hostile_state();
    let mut ui = ui_on(Screen::Run);
    let s = render(&st, &mut ui, 200, 60);
    assert_clean(&s);
    insta::assert_snapshot!(s);
    let mut ui = ui_on(Screen::Atoms);
    let s = render(&st, &mut ui, 200, 60);
    assert!(s.contains("原子_01"));
    insta::assert_snapshot!("hostile_atoms_200x60", s);
}

#[test]
fn chinese_lines_align_in_the_buffer() {
    // Every row of the rendered buffer is exactly the terminal width in display columns.
    let st = hostile_state();
    let mut ui = ui_on(Screen::Run);
    let s = render(&st, &mut ui, 80, 24);
    for line in s.lines() {
        assert!(
            unicode_width::UnicodeWidthStr::width(line) <= 80,
            "too wide: {line}"
        );
    }
    // The right border of the output pane is in the same column on every row.
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("中文对齐")).collect();
    assert!(!rows.is_empty(), "{s}");
    for r in rows {
        assert!(r.trim_end().ends_with('│'), "border misaligned: {r}");
        assert_eq!(unicode_width::UnicodeWidthStr::width(r), 80, "{r}");
    }
}

/// Draws every screen, overlay and output view of `st` at every size of a grid (from
/// 1x1 to 200x60); none may panic.
fn no_size_panics(st: &RunState) {
    let widths = [1u16, 2, 5, 10, 19, 20, 21, 25, 33, 34, 40, 60, 80, 120, 200];
    let heights = [1u16, 2, 3, 4, 5, 8, 10, 11, 12, 24, 60];
    for &w in &widths {
        for &h in &heights {
            for screen in [Screen::Run, Screen::Atoms, Screen::Runs] {
                for overlay in [
                    None,
                    Some(Overlay::Help { top: 3 }),
                    Some(Overlay::Confirm(Question::Cancel)),
                    Some(Overlay::AtomDetail { atom: 0, top: 0 }),
                ] {
                    for view in [OutputView::Raw, OutputView::Issues] {
                        let mut ui = ui_on(screen);
                        ui.overlay = overlay.clone();
                        ui.view = view;
                        ui.task = 1;
                        let _ = render(st, &mut ui, w, h);
                    }
                }
            }
        }
    }
}

// One test per state, so the harness draws them side by side.
#[test]
fn no_size_panics_any_screen_or_overlay_of_the_demo() {
    no_size_panics(&demo_state());
}

#[test]
fn no_size_panics_any_screen_or_overlay_of_hostile_text() {
    no_size_panics(&hostile_state());
}

#[test]
fn no_size_panics_any_screen_or_overlay_of_an_empty_run() {
    no_size_panics(&RunState::new());
}

#[test]
fn context_view_shows_the_report() {
    use plexus::model::event::ContextPlanned;
    use plexus::run::engine::context::plan::{plan, Input};
    use plexus::run::engine::context::select::DataType;
    let mut st = demo_state();
    let atoms: Vec<serde_json::Value> = (0..60)
        .map(|i| serde_json::json!({"asset_id": format!("A{i}"), "atom_type": if i % 4 == 3 { "background" } else { "claim" },
            "content": {"text": "the reverse process removes a little noise at each step ".repeat(30)}}))
        .collect();
    let inputs = vec![Input {
        name: "task_output:TASK_SCHOLAR_DIFF_01".into(),
        data: serde_json::json!({ "atoms": atoms }),
        priority: 1,
        data_type: DataType::Atoms,
        configured: Some(plexus::base::protocol::context::TransferMode::Full),
        reference: serde_json::Value::Null,
        tokens: None,
    }];
    let p = plan(
        "TASK_CODE_DIFF_01",
        "Code_Architect",
        20_000,
        1_000,
        300,
        &inputs,
        &Default::default(),
        &Default::default(),
    );
    let task = st.tasks[2].id.clone();
    reduce(
        &mut st,
        &env(
            999,
            Some(&task),
            None,
            Some("Code_Architect"),
            EngineEvent::ContextPlanned(ContextPlanned {
                inputs: p.inputs,
                report: p.report,
                effective_data_limit: 20_000,
            }),
        ),
    );
    let mut ui = ui_on(Screen::Run);
    ui.task = 2;
    ui.view = OutputView::Context;
    let s = render(&st, &mut ui, 200, 60);
    assert!(s.contains("filter_by_priority"), "{s}");
    assert!(s.contains("within limit: yes"), "{s}");
    insta::assert_snapshot!("context_view_200x60", s);
    assert_eq!(st.agents[st.tasks[2].agent].trims, 1);
    // At 120 columns the table fits its pane, and the total is set against the prompt
    // as it was sent.
    let s = render(&st, &mut ui, 120, 40);
    let prompt = st.tasks[2].prompt_tokens;
    assert!(
        s.contains(&format!("the prompt as sent: {prompt} tokens")),
        "{s}"
    );
    for line in s
        .lines()
        .filter(|l| l.contains("task_output:") || l.contains("system_prompt"))
    {
        assert!(line.trim_end().ends_with('│'), "cut: {line}");
    }
    insta::assert_snapshot!("context_view_120x40", s);
}

/// Two agents called through a real provider: one whose reported usage agrees with our
/// counts, one whose provider counts twice as many tokens.
fn usage_state() -> RunState {
    priced_usage_state(None)
}

/// [`usage_state`] with each call costing `cost` (the second agent's twice that).
fn priced_usage_state(cost: Option<f64>) -> RunState {
    let agents = ["Scholar_Internalizer", "Code_Architect"];
    let mut st = RunState::new();
    let tasks = agents
        .iter()
        .enumerate()
        .map(|(i, a)| TaskInfo {
            task_id: format!("T{i}"),
            agent: (*a).into(),
            depends_on: vec![],
        })
        .collect();
    reduce(
        &mut st,
        &env(
            1,
            None,
            None,
            None,
            EngineEvent::RunStarted(RunStarted {
                plan_id: "P".into(),
                execution_mode: "Deep_Internalization".into(),
                provider: "openai:gpt-4o@openai".into(),
                seed: 1,
                concurrency: 2,
                agents: agents
                    .iter()
                    .map(|a| AgentInfo {
                        name: (*a).into(),
                        max_input_tokens: 100_000,
                        data_area_tokens: 80_000,
                    })
                    .collect(),
                tasks,
            }),
        ),
    );
    let mut seq = 1;
    for (i, (agent, factor)) in agents.iter().zip([1.04_f64, 2.0]).enumerate() {
        let task = format!("T{i}");
        let inv = format!("inv{i}");
        let mut push = |ev| {
            seq += 1;
            reduce(&mut st, &env(seq, Some(&task), Some(&inv), Some(agent), ev));
        };
        push(EngineEvent::InvocationStarted(InvocationStarted {
            attempt: 1,
            prompt_tokens: 5_000,
            constraints: Constraints::default(),
            quality_threshold: "B".into(),
        }));
        push(EngineEvent::InvocationFinished(InvocationFinished {
            status: Some(InvocationStatus::Success),
            execution_time_ms: 900,
            output_tokens: 1_000,
            chunks: 10,
            atoms: 1,
            avg_score: 0.9,
            grades: GradeCounts::default(),
            issues: 0,
            errors: vec![],
            error_message: None,
            provider_usage: Some(plexus::data::provider::Usage {
                prompt_tokens: (5_000.0 * factor) as u64,
                completion_tokens: (1_000.0 * factor) as u64,
                cached_prompt_tokens: 0,
            }),
            cost_usd: cost.map(|c| c * factor.round()),
            loop_prompt_tokens: None,
        }));
    }
    st
}

#[test]
fn budget_pane_shows_provider_usage_and_flags_disagreement() {
    let st = usage_state();
    assert!(
        !st.agents[0].reported.disagrees(),
        "4% apart is not flagged"
    );
    assert!(st.agents[1].reported.disagrees(), "2x apart is flagged");
    let wide = render(&st, &mut ui_on(Screen::Run), 200, 60);
    assert!(wide.contains("Token budget · cost — · ≠ provider count >25% off"));
    let row = |name: &str| {
        wide.lines()
            .find(|l| l.contains(name) && l.contains("5k/"))
            .unwrap_or_else(|| panic!("no budget row for {name}:\n{wide}"))
            .to_string()
    };
    let scholar = row("Scholar_Internalizer");
    let code = row("Code_Architect");
    assert!(
        !scholar.contains('≠') && scholar.contains("5.2k/1k"),
        "{scholar}"
    );
    assert!(code.contains('≠') && code.contains("10k/2k"), "{code}");
    insta::assert_snapshot!("budget_provider_usage_200x60", wide);
    // At 80 columns the provider column does not fit; the flag still shows.
    let narrow = render(&st, &mut ui_on(Screen::Run), 80, 24);
    assert_clean(&narrow);
    assert!(
        narrow.contains("Token budget · cost — · ≠ >25% off"),
        "{narrow}"
    );
    assert!(narrow
        .lines()
        .any(|l| l.contains("Code_Ar") && l.contains('≠')));
}

#[test]
fn budget_pane_shows_what_each_agent_s_calls_cost_and_the_run_s_total() {
    let st = priced_usage_state(Some(0.0125));
    let wide = render(&st, &mut ui_on(Screen::Run), 250, 60);
    assert!(wide.contains("Token budget · cost $0.038"), "{wide}");
    let row = |name: &str| {
        wide.lines()
            .find(|l| l.contains(name) && l.contains("5k/"))
            .unwrap_or_else(|| panic!("no budget row for {name}:\n{wide}"))
            .to_string()
    };
    // One call each: the scholar's cost 0.0125, the architect's 0.025, in all and (on a
    // pane this wide) per call.
    assert_eq!(row("Scholar_Internalizer").matches("$0.013").count(), 2);
    assert_eq!(row("Code_Architect").matches("$0.025").count(), 2);
    let narrow = render(&st, &mut ui_on(Screen::Run), 80, 24);
    assert_clean(&narrow);
    assert!(
        narrow.contains("cost $0.038"),
        "the run's cost fits at 80x24:\n{narrow}"
    );
}

/// While an agent's latest call streams, the output gauge shows an estimate of its
/// output so far (`~1.5k`, where it stayed at the last call's `1k` until the end), and the
/// count once the call ends; at 80x24 and 200x60.
#[test]
fn the_output_gauge_moves_while_a_call_streams() {
    let mut st = priced_usage_state(None);
    let mut seq = 100;
    let mut push = |st: &mut RunState, ev| {
        seq += 1;
        reduce(
            st,
            &env(
                seq,
                Some("T0"),
                Some("inv0b"),
                Some("Scholar_Internalizer"),
                ev,
            ),
        );
    };
    push(
        &mut st,
        EngineEvent::InvocationStarted(InvocationStarted {
            attempt: 2,
            prompt_tokens: 5_000,
            constraints: Constraints::default(),
            quality_threshold: "B".into(),
        }),
    );
    for _ in 0..40 {
        push(
            &mut st,
            EngineEvent::Chunk(Chunk {
                text: "x".repeat(150),
            }),
        );
    }
    let row = |screen: &str| {
        screen
            .lines()
            .find(|l| l.contains("Scholar") && l.contains("5k/"))
            .unwrap_or_else(|| panic!("no budget row:\n{screen}"))
            .to_string()
    };
    for (w, h) in [(80, 24), (200, 60)] {
        let screen = render(&st, &mut ui_on(Screen::Run), w, h);
        // 6,000 bytes streamed: about 1,500 tokens.
        assert!(row(&screen).contains("~1.5k/"), "{w}: {}", row(&screen));
    }
    push(
        &mut st,
        EngineEvent::InvocationFinished(InvocationFinished {
            status: Some(InvocationStatus::Success),
            execution_time_ms: 900,
            output_tokens: 1_380,
            chunks: 40,
            atoms: 1,
            avg_score: 0.9,
            grades: GradeCounts::default(),
            issues: 0,
            errors: vec![],
            error_message: None,
            provider_usage: None,
            cost_usd: None,
            loop_prompt_tokens: None,
        }),
    );
    let screen = render(&st, &mut ui_on(Screen::Run), 200, 60);
    let ended = row(&screen);
    assert!(ended.contains("1.4k/") && !ended.contains('~'), "{ended}");
}

/// The status bar counts tasks as the DAG draws them: a partial task (`◑`) is `1
/// partial`, not one of the `ok` (it read `2 ok`), at 80x24 and 200x60.
#[test]
fn the_status_bar_counts_partial_tasks_apart_from_ok() {
    let mut st = priced_usage_state(None);
    for (seq, task, status) in [
        (200, "T0", TaskStatus::Partial),
        (201, "T1", TaskStatus::Success),
    ] {
        reduce(
            &mut st,
            &env(
                seq,
                Some(task),
                None,
                None,
                EngineEvent::TaskFinished(TaskFinished {
                    status,
                    attempts: 1,
                    atoms: 1,
                    error_code: None,
                    error_message: None,
                }),
            ),
        );
    }
    for (w, h) in [(80, 24), (200, 60)] {
        let screen = render(&st, &mut ui_on(Screen::Run), w, h);
        let bar = screen.lines().last().unwrap_or_default();
        assert!(bar.contains("1 ok · 1 partial"), "{w}: {bar}");
        assert!(screen.contains('◑'), "{screen}");
    }
}
