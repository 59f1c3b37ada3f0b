//! The Debate screen through ratatui's TestBackend: a converged three-round session in
//! Chinese and English, one in progress, one streaming and one stopped, at 80x24,
//! 120x40 and 200x60, with the keys that pick a round, switch to the report and stop a
//! live session.

use crate::common;
#[path = "debate_screen/fixture.rs"]
mod fixture;

use common::screen::render;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use plexus::base::protocol::debate::AgentRole;
use plexus::model::event::debate::{DebateOutput, HostDecided, PositionsCompared, TurnOutcome};
use plexus::model::event::EngineEvent;
use plexus::model::state::RunState;
use plexus::run::engine::Control;
use plexus::tui::app::keymap::Keymap;
use plexus::tui::app::ui_state::{Overlay, Question};
use plexus::tui::app::{update, Action, Effect, UiState};
use serde_json::json;
use unicode_width::UnicodeWidthStr;

fn live_ui() -> UiState {
    UiState::new(true)
}

fn key(c: char) -> Action {
    Keymap::default_keys()
        .lookup(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
        .unwrap_or_else(|| panic!("no action on {c}"))
}

fn press(ui: &mut UiState, st: &RunState, a: Action) -> Vec<Effect> {
    update(ui, st, a)
}

fn assert_fits(text: &str, w: usize) {
    for (i, l) in text.lines().enumerate() {
        assert!(l.width() <= w, "line {i} is {} wide: {l}", l.width());
    }
    assert!(text.lines().count() > 0);
}

#[test]
fn converged_session_80x24() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    let text = render(&st, &mut ui, 80, 24);
    assert_fits(&text, 80);
    insta::assert_snapshot!("converged_80x24", text);
}

#[test]
fn converged_session_200x60() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    let text = render(&st, &mut ui, 200, 60);
    assert_fits(&text, 200);
    insta::assert_snapshot!("converged_200x60", text);
}

#[test]
fn report_tab_80x24() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    press(&mut ui, &st, key('w'));
    let text = render(&st, &mut ui, 80, 24);
    assert!(text.contains("Resolved concerns"), "{text}");
    assert!(text.contains("订单数据库分三阶段迁移"), "{text}");
    insta::assert_snapshot!("report_80x24", text);
    // Scrolling moves the report down.
    for _ in 0..5 {
        press(&mut ui, &st, key('j'));
    }
    let scrolled = render(&st, &mut ui, 80, 24);
    assert_ne!(text, scrolled);
    assert_fits(&scrolled, 80);
}

#[test]
fn in_progress_session() {
    let st = fixture::in_progress().state();
    let mut ui = live_ui();
    ui.tick = 0;
    let small = render(&st, &mut ui, 80, 24);
    assert_fits(&small, 80);
    assert!(small.contains("in_progress"), "{small}");
    assert!(
        small.contains("answering"),
        "the critic is marked in flight: {small}"
    );
    insta::assert_snapshot!("in_progress_80x24", small);
    let big = render(&st, &mut ui, 200, 60);
    assert_fits(&big, 200);
    assert!(big.contains("no report yet"), "{big}");
    assert!(big.contains("c stop"), "the stop key is offered: {big}");
    insta::assert_snapshot!("in_progress_200x60", big);
}

/// In round one a position is the first, whatever its answer says about a change, and
/// the critic that has not spoken yet waits for the planner (it has no output to miss).
#[test]
fn round_one_shows_a_first_position_and_a_critic_waiting_its_turn() {
    let st = fixture::round_one_planner_only().state();
    for (w, h) in [(80u16, 24u16), (200, 60)] {
        let mut ui = live_ui();
        let screen = render(&st, &mut ui, w, h);
        assert_fits(&screen, usize::from(w));
        assert!(!screen.contains("unchanged"), "{w}x{h}:\n{screen}");
        assert!(!screen.contains("(±0)"), "{w}x{h}:\n{screen}");
        assert!(
            !screen.contains("no output in this round"),
            "{w}x{h}:\n{screen}"
        );
    }
    let mut ui = live_ui();
    let big = render(&st, &mut ui, 200, 60);
    assert!(big.contains("first position"), "{big}");
    assert!(big.contains("waiting for the planner"), "{big}");
}

#[test]
fn the_selected_rounds_decision_is_shown() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    let last = render(&st, &mut ui, 200, 60);
    assert!(last.contains("converge · consensus 0.93"), "{last}");
    press(&mut ui, &st, key('h'));
    let second = render(&st, &mut ui, 200, 60);
    assert!(
        second.contains("force_opposition · consensus 0.64"),
        "{second}"
    );
    assert!(second.contains("the critic repeats itself"), "{second}");
    assert!(
        second.contains("argue that a big-bang cutover is safer"),
        "{second}"
    );
    assert!(
        second.contains("峰值时段的回滚步骤"),
        "must_address: {second}"
    );
    assert!(second.contains("stubborn critic"), "{second}");
    insta::assert_snapshot!("round2_200x60", second);
}

#[test]
fn threshold_lines_are_drawn() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    let text = render(&st, &mut ui, 200, 60);
    assert!(text.contains("converge 0.90"), "{text}");
    assert!(text.contains("continue 0.70"), "{text}");
    let dashed = text.lines().filter(|l| l.contains("┄┄┄┄┄┄")).count();
    assert!(dashed >= 2, "two threshold lines: {text}");
    // At 80x24 the one-line trend names them.
    let small = render(&st, &mut ui, 80, 24);
    assert!(small.contains("converge >0.90"), "{small}");
}

#[test]
fn the_previous_round_changes_the_heat_map() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    let r3 = render(&st, &mut ui, 80, 24);
    assert!(r3.contains("0.93◆"), "{r3}");
    assert!(!r3.contains("0.64◆"), "{r3}");
    press(&mut ui, &st, Action::Left);
    let r2 = render(&st, &mut ui, 80, 24);
    assert!(r2.contains("0.64◆"), "{r2}");
    assert!(!r2.contains("0.93◆"), "{r2}");
    assert!(r2.contains("critic 0.99"), "self-similarity: {r2}");
    press(&mut ui, &st, Action::Left);
    let r1 = render(&st, &mut ui, 80, 24);
    assert!(r1.contains("0.78◆"), "{r1}");
    // Back to the last round: following again.
    press(&mut ui, &st, key('l'));
    press(&mut ui, &st, key('l'));
    assert_eq!(ui.debate.round, None);
}

#[test]
fn the_stop_key_cancels_a_live_session_and_nothing_else() {
    let stop = key('c');
    let live = fixture::in_progress().state();
    let mut ui = live_ui();
    assert!(press(&mut ui, &live, stop).is_empty());
    assert_eq!(ui.overlay, Some(Overlay::Confirm(Question::Cancel)));
    let asked = render(&live, &mut ui, 80, 24);
    assert!(asked.contains("Stop the debate?"), "{asked}");
    let fx = press(&mut ui, &live, key('y'));
    assert!(
        matches!(fx.as_slice(), [Effect::Engine(Control::Cancel(_))]),
        "{fx:?}"
    );
    // A finished session: nothing is sent, nothing is asked.
    let done = fixture::converged().state();
    let mut ui = live_ui();
    assert!(press(&mut ui, &done, stop).is_empty());
    assert_eq!(ui.overlay, None);
    // A session opened from the log cannot be stopped either.
    let mut ro = UiState::new(false);
    assert!(press(&mut ro, &live, stop).is_empty());
    assert_eq!(ro.overlay, None);
    // Pause means nothing to a debate.
    let mut ui = live_ui();
    assert!(press(&mut ui, &live, Action::TogglePause).is_empty());
}

#[test]
fn chinese_text_keeps_the_layout() {
    let st = fixture::converged().state();
    for (w, h) in [(80, 24), (100, 30), (120, 40), (200, 60), (60, 20)] {
        for tab in [false, true] {
            let mut ui = live_ui();
            if tab {
                press(&mut ui, &st, Action::FocusNext);
            }
            let text = render(&st, &mut ui, w, h);
            assert_fits(&text, usize::from(w));
            assert_eq!(text.lines().count(), usize::from(h));
        }
    }
    let mut ui = live_ui();
    let wide = render(&st, &mut ui, 200, 60);
    assert!(wide.contains("三阶段迁移，双写前做压测"), "{wide}");
}

#[test]
fn the_tab_is_named_debate_and_other_runs_have_no_session() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    assert!(render(&st, &mut ui, 80, 24)
        .lines()
        .next()
        .unwrap_or("")
        .contains("1 Debate"));
    assert!(RunState::new().debate.is_none());
}

#[test]
fn seeking_back_refolds_the_session() {
    let log = fixture::converged();
    let end = log.state();
    let d = end.debate.as_deref().expect("a debate");
    assert_eq!(d.rounds.len(), 3);
    assert_eq!(d.consensus_trend, vec![0.78, 0.64, 0.93]);
    let early = log.state_at(12);
    let e = early.debate.as_deref().expect("a debate");
    assert!(e.rounds.len() < 3 && e.report.is_none());
    let mut ui = live_ui();
    let text = render(&early, &mut ui, 200, 60);
    assert!(text.contains("no report yet"), "{text}");
}

#[test]
fn malformed_outputs_render_as_unreadable() {
    let mut log = fixture::converged();
    log.events.truncate(2);
    log.push(EngineEvent::DebateOutput(DebateOutput {
        round: 0,
        agent: AgentRole::Planner,
        outcome: TurnOutcome::Invalid,
        attempts: 3,
        closing: false,
        output: Some(json!({"content": "\u{1b}[2Jnot json at all", "metadata": 5})),
        reused: false,
        output_tokens: 3,
        duration_ms: 1,
    }));
    log.push(EngineEvent::PositionsCompared(PositionsCompared {
        round: 0,
        agents: vec![
            AgentRole::Planner,
            AgentRole::Critic,
            AgentRole::Other("x".into()),
        ],
        similarity_matrix: vec![vec![1.0], vec![f64::NAN, 1.0, 2.0]],
        mean_similarity: f64::NAN,
        most_different_pair: [7, 9],
        most_different_similarity: 0.0,
        self_similarity: Default::default(),
        method: "keyword".into(),
        embedder: "builtin".into(),
        embedded: 0,
        cached: 0,
        duration_us: 0,
    }));
    log.push(EngineEvent::HostDecided(HostDecided {
        round: 0,
        output: json!("garbage"),
        directive: json!(null),
    }));
    let st = log.state();
    for (w, h) in [(80, 24), (200, 60)] {
        let mut ui = live_ui();
        let text = render(&st, &mut ui, w, h);
        assert_fits(&text, usize::from(w));
        assert!(text.contains("unreadable"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        press(&mut ui, &st, Action::FocusNext);
        assert_fits(&render(&st, &mut ui, w, h), usize::from(w));
    }
}

#[test]
fn a_logged_session_replays_and_seeks_back() {
    use plexus::data::store::{spawn_writer, RunRow, WriteOp};
    let log = fixture::converged();
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let (writer, thread) = spawn_writer(&db, None).expect("writer");
    let run_id = log.events[0].run_id.to_string();
    writer
        .send(WriteOp::CreateRun(Box::new(RunRow {
            run_id: run_id.clone(),
            plan_id: "debate".into(),
            plan_source: "debate".into(),
            plan_json: "{}".into(),
            provider: "simulated".into(),
            config_json: "{}".into(),
            created_at: "2025-03-01T10:00:00Z".into(),
            task_count: 0,
            tasks: vec![],
        })))
        .expect("create run");
    for e in &log.events {
        writer
            .send(WriteOp::Event(std::sync::Arc::new(e.clone())))
            .expect("event");
    }
    drop(writer);
    thread.join().expect("writer thread");
    let mut replay = plexus::data::replay::log::ReplayLog::open(&db, &run_id)
        .expect("open")
        .with_snapshots_every(5);
    let end = replay.seek(u64::MAX).expect("seek to the end");
    assert_eq!(end.debate, log.state().debate, "the replay folds as live");
    let back = replay.seek(12).expect("seek back");
    assert_eq!(back.debate, log.state_at(12).debate);
    let mut ui = live_ui();
    press(&mut ui, &back, Action::Left);
    assert_fits(&render(&back, &mut ui, 80, 24), 80);
}

#[test]
fn converged_session_120x40_sizes_the_panes_by_what_they_hold() {
    let st = fixture::converged().state();
    let mut ui = live_ui();
    let text = render(&st, &mut ui, 120, 40);
    assert_fits(&text, 120);
    insta::assert_snapshot!("converged_120x40", text);
    // The speakers' panes are wide enough for their titles and whole phrases; the
    // similarity pane is as wide as its matrix.
    press(&mut ui, &st, key('h'));
    let r2 = render(&st, &mut ui, 120, 40);
    assert!(r2.contains("planner · round 2 "), "{r2}");
    assert!(r2.contains("critic · round 2 "), "{r2}");
    assert!(r2.contains("The plan underestimates replication"), "{r2}");
    assert!(r2.contains("Keep three phases, add a load test"), "{r2}");
    let sim = r2
        .lines()
        .find(|l| l.contains("Similarity"))
        .expect("the similarity pane");
    let corner = sim.find("╭ Similarity").expect("its title");
    let sim_w = sim[corner..].chars().count();
    assert!(
        sim_w <= 40,
        "the similarity pane takes {sim_w} columns: {r2}"
    );
}

#[test]
fn the_closing_answers_show_in_the_last_round() {
    let st = fixture::converged().state();
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let mut ui = live_ui();
        let text = render(&st, &mut ui, w, h);
        assert_fits(&text, usize::from(w));
        assert!(text.contains("closing ✔ valid"), "{w}x{h}: {text}");
        assert!(text.contains("worst cases"), "{w}x{h}: {text}");
        assert!(
            text.contains("the cutover slips into the peak"),
            "{w}x{h}: {text}"
        );
        assert!(
            text.contains("closing ✔"),
            "the timeline marks them: {text}"
        );
    }
    // An earlier round has no closing answers.
    let mut ui = live_ui();
    press(&mut ui, &st, key('h'));
    let r2 = render(&st, &mut ui, 120, 40);
    assert!(!r2.contains("worst cases"), "{r2}");
}

#[test]
fn a_streaming_answer_shows_its_text_time_and_tokens() {
    let st = fixture::streaming().state();
    for (w, h, name) in [
        (80, 24, "streaming_80x24"),
        (120, 40, "streaming_120x40"),
        (200, 60, "streaming_200x60"),
    ] {
        let mut ui = live_ui();
        ui.tick = 0;
        let text = render(&st, &mut ui, w, h);
        assert_fits(&text, usize::from(w));
        assert!(
            text.contains("critic ◐ answering · 4.5 s ·"),
            "{w}x{h}: {text}"
        );
        assert!(text.contains(" tokens"), "{w}x{h}: {text}");
        assert!(text.contains("and the load test must"), "{w}x{h}: {text}");
        insta::assert_snapshot!(name, text);
    }
    // Once the turn has ended, its stream is gone.
    let done = fixture::stopped().state();
    let mut ui = live_ui();
    let text = render(&done, &mut ui, 120, 40);
    assert!(!text.contains("must replay"), "{text}");
}

#[test]
fn a_stopped_turn_reads_cancelled() {
    let st = fixture::stopped().state();
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let mut ui = live_ui();
        let text = render(&st, &mut ui, w, h);
        assert_fits(&text, usize::from(w));
        assert!(text.contains("critic – cancelled"), "{w}x{h}: {text}");
        assert!(!text.contains("unreadable"), "{w}x{h}: {text}");
    }
}

#[test]
fn the_report_lists_each_agreement_once() {
    let st = fixture::converged().state();
    let d = st.debate.as_deref().expect("a debate");
    let theme = plexus::tui::ui::theme::Theme::dark();
    let l = plexus::tui::ui::debate::report::lines(80, d, 0, 0, &theme);
    let text: String = l
        .out
        .iter()
        .map(|line| line.iter().map(|(t, _)| t.as_str()).collect::<String>() + "\n")
        .collect();
    for agreed in ["三阶段 three phases", "压测作为闸门 load test as the gate"] {
        assert_eq!(text.matches(agreed).count(), 1, "{agreed}: {text}");
    }
    // What the text does not list is still listed.
    assert!(text.contains("replication lag on peak days"), "{text}");
}
