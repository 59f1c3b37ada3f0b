//! The Runs screen through ratatui's TestBackend: runs told apart by how long they took,
//! their tasks by outcome and the reviews waiting, at 80x24, 120x40 and 200x60, and the
//! `/` filter.

use crate::common;

use common::screen::render;

use plexus::model::event::Envelope;
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::{update, Action, Effect, Screen, UiState};

fn demo_state() -> RunState {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        reduce(&mut st, &e);
    }
    st
}

fn ui_on(screen: Screen) -> UiState {
    let mut ui = UiState::new(false);
    ui.screen = screen;
    ui
}

/// Runs that differ the way a day of demos does: outcomes, lengths, a review waiting.
fn runs_rows(ui: &mut UiState) {
    use plexus::tui::app::runs_list::RunFacts;
    let run = |id: &str, status: &str, start: &str, end: Option<&str>, atoms: i64| {
        plexus::data::store::RunSummary {
            run_id: id.into(),
            plan_id: "AVP_E2E_20260203_001".into(),
            plan_source: "demo".into(),
            provider: "simulated".into(),
            status: status.into(),
            created_at: format!("2026-11-{start}Z"),
            finished_at: end.map(|e| format!("2026-11-{e}Z")),
            active_ms: None,
            ticking_since: None,
            task_count: 5,
            events: 171 + atoms * 10,
            atoms,
            cost_usd: None,
            spend: Default::default(),
        }
    };
    ui.runs.rows = Some(vec![
        run(
            "R20261126-010802-7fe5",
            "succeeded",
            "26T01:08:02",
            Some("26T01:08:09"),
            9,
        ),
        run(
            "R20261126-005512-c3a0",
            "failed",
            "26T00:55:12",
            Some("26T00:57:40"),
            6,
        ),
        run(
            "R20261126-003001-91bd",
            "cancelled",
            "26T00:30:01",
            Some("26T00:30:05"),
            2,
        ),
        run(
            "R20261125-223011-0b1c",
            "partial",
            "25T22:30:11",
            Some("25T23:41:02"),
            7,
        ),
    ]);
    let facts = |o: &[(&str, i64)], reviews| RunFacts {
        outcomes: o.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        reviews_waiting: reviews,
    };
    ui.runs.facts = [
        ("R20261126-010802-7fe5", facts(&[("success", 5)], 0)),
        (
            "R20261126-005512-c3a0",
            facts(&[("success", 3), ("failed", 1), ("blocked", 1)], 1),
        ),
        (
            "R20261126-003001-91bd",
            facts(&[("success", 1), ("cancelled", 4)], 0),
        ),
        (
            "R20261125-223011-0b1c",
            facts(&[("success", 3), ("partial", 1), ("timeout", 1)], 0),
        ),
    ]
    .into_iter()
    .map(|(id, f)| (id.to_string(), f))
    .collect();
}

#[test]
fn runs_screen_three_sizes() {
    let st = demo_state();
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let mut ui = ui_on(Screen::Runs);
        runs_rows(&mut ui);
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("1 waiting") && s.contains("2:28"), "{s}");
        insta::assert_snapshot!(format!("runs_{w}x{h}"), s);
    }
}

#[test]
fn slash_filters_the_runs_screen() {
    let st = demo_state();
    let mut ui = ui_on(Screen::Runs);
    runs_rows(&mut ui);
    update(&mut ui, &st, Action::Search);
    for c in "fail".chars() {
        plexus::tui::app::input::input(&mut ui, &st, plexus::tui::app::input::InputKey::Char(c));
    }
    let s = render(&st, &mut ui, 80, 24);
    assert!(s.contains("1 of 4 runs"), "{s}");
    assert!(
        s.contains("│R20261126-005512-c3a0") && !s.contains("│R20261126-010802-7fe5"),
        "{s}"
    );
    insta::assert_snapshot!("runs_filtered_80x24", s);
    // Enter on the one row left opens it.
    plexus::tui::app::input::input(&mut ui, &st, plexus::tui::app::input::InputKey::Enter);
    let fx = update(&mut ui, &st, Action::Open);
    assert_eq!(fx, vec![Effect::OpenRun("R20261126-005512-c3a0".into())]);
    update(&mut ui, &st, Action::ClearFilters);
    assert_eq!(ui.runs.view().len(), 4);
}

/// A run's time on the Runs screen is its own clock's, as the Run screen shows it: a
/// run that ran 6 s, then waited a minute for a review before it ended, reads 0:06
/// (it read 1:08, from its start to its end); a run whose clock was not read (no start
/// in its log) keeps its start-to-end time. At 80x24 and 120x40.
#[test]
fn the_runs_screen_shows_each_run_s_own_clock() {
    let st = demo_state();
    for (w, h) in [(80, 24), (120, 40)] {
        let mut ui = ui_on(Screen::Runs);
        runs_rows(&mut ui);
        let rows = ui.runs.rows.as_mut().expect("rows");
        // 26T01:08:02 → 26T01:09:10 from start to end; 6 s of running.
        rows[0].finished_at = Some("2026-11-26T01:09:10Z".into());
        rows[0].active_ms = Some(6_000);
        let screen = render(&st, &mut ui, w, h);
        let row = |id: &str| {
            screen
                .lines()
                .find(|l| l.contains(id) && l.starts_with('│'))
                .unwrap_or_else(|| panic!("no row {id}:\n{screen}"))
                .to_string()
        };
        let first = row("R20261126-010802-7fe5");
        assert!(
            first.contains(" 0:06 ") && !first.contains(" 1:08 "),
            "{first}"
        );
        // 00:55:12 → 00:57:40, no clock read: 2:28.
        assert!(row("R20261126-005512-c3a0").contains("2:28"), "{screen}");
    }
}
