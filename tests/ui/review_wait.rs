//! A run stopped only by a review waiting reads as one on the Run screen at every size:
//! the status bar names the state (`awaiting review`, not `failed`) and counts the task
//! to review apart from failures, the next step (`4 v review`) is among the hints, and
//! the DAG draws the waiting task as `?` and counts it as such in its title.

use crate::common;

use common::screen::render;
use plexus::model::event::Envelope;
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::{Screen, UiState};
use serde_json::json;

/// A succeeds; B's answer cites an asset that does not exist (E007) and waits for
/// review; C, below B, is blocked; the run ends awaiting review.
fn waiting_run() -> RunState {
    let events = vec![
        json!({"kind": "run_started", "plan_id": "REVIEW_WAIT", "execution_mode": "Deep_Internalization",
            "provider": "simulated", "seed": 1, "concurrency": 2,
            "agents": [{"name": "Scenario_Validator", "max_input_tokens": 6000, "data_area_tokens": 4000}],
            "tasks": [{"task_id": "TASK_A", "agent": "Scenario_Validator"},
                      {"task_id": "TASK_B", "agent": "Scenario_Validator", "depends_on": ["TASK_A"]},
                      {"task_id": "TASK_C", "agent": "Scenario_Validator", "depends_on": ["TASK_B"]}]}),
        json!({"kind": "task_finished", "task_id": "TASK_A", "status": "success", "attempts": 1, "atoms": 2}),
        // As the engine logs it: a code, no message.
        json!({"kind": "task_finished", "task_id": "TASK_B", "status": "failed", "attempts": 1, "atoms": 0,
            "error_code": "E007"}),
        json!({"kind": "task_blocked", "task_id": "TASK_C", "error_code": "E006", "upstream": "TASK_B",
            "message": "dependency `TASK_B` ended failed"}),
        json!({"kind": "run_finished", "status": "awaiting_review", "tasks": {}, "atoms": 2,
            "grades": {"A": 2, "B": 0, "C": 0, "D": 0}}),
    ];
    let mut st = RunState::new();
    for (i, mut e) in events.into_iter().enumerate() {
        e["run_id"] = json!("R20261127-120000-beef");
        e["seq"] = json!(i + 1);
        e["ts"] = json!(1_795_650_000_000i64 + i as i64 * 50);
        let env: Envelope =
            serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{e}: {err}"));
        reduce(&mut st, &env);
    }
    st
}

/// The blocked task's pane says why once: its code and reason, `blocked` not twice.
#[test]
fn a_blocked_task_says_why_once() {
    let st = waiting_run();
    for (w, h) in [(80u16, 24u16), (120, 40), (200, 60)] {
        let mut ui = UiState::new(false);
        ui.screen = Screen::Run;
        ui.task = 2;
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("E006: blocked:"), "{w}x{h}:\n{s}");
        assert!(!s.contains("blocked: E006"), "{w}x{h}:\n{s}");
        // Wrapped, not cut: the whole reason is on screen.
        let pane: String = s
            .lines()
            .filter_map(|l| l.split("││").nth(1))
            .collect::<Vec<_>>()
            .join(" ");
        let pane = pane.replace('│', " ");
        let pane = pane.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            pane.contains("E006: blocked: dependency `TASK_B` ended failed"),
            "{w}x{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("blocked_reason_{w}x{h}"), s);
    }
}

#[test]
fn a_review_wait_is_named_counted_and_its_next_step_shown_at_every_size() {
    let st = waiting_run();
    assert_eq!(st.awaiting_review, 1);
    for (w, h) in [(80u16, 24u16), (120, 40), (200, 60)] {
        let mut ui = UiState::new(false);
        ui.screen = Screen::Run;
        ui.task = 1;
        let s = render(&st, &mut ui, w, h);
        let status = s.lines().last().expect("status bar");
        assert!(status.contains("awaiting review"), "{w}x{h}: {status}");
        assert!(
            !status.contains(" failed │") && !status.contains("1 failed"),
            "{w}x{h}: not called a failure: {status}"
        );
        assert!(
            s.contains("4 v review"),
            "{w}x{h}: the next step is shown:\n{s}"
        );
        // The DAG's row of the task (not the output pane's title, which names it too).
        let dag = s
            .lines()
            .find(|l| l.contains("TASK_B") && !l.contains("Output"))
            .expect("TASK_B drawn");
        assert!(dag.contains("? TASK_B"), "{w}x{h}: {dag}");
        if w >= 120 {
            assert!(s.contains("1 to review"), "{w}x{h}: {status}");
            assert!(s.contains("?1"), "{w}x{h}: the DAG title counts it:\n{s}");
            assert!(!s.contains("✘1"), "{w}x{h}: not counted as a failure:\n{s}");
        }
        insta::assert_snapshot!(format!("review_wait_{w}x{h}"), s);
    }
}

#[test]
fn after_a_retry_the_earlier_hallucination_stays_in_the_task_notes() {
    let mut st = waiting_run();
    for (i, e) in [
        json!({"kind": "task_reset", "task_id": "TASK_B", "reason": "retry of `TASK_B` requested"}),
        json!({"kind": "task_finished", "task_id": "TASK_B", "status": "success", "attempts": 2, "atoms": 3}),
    ]
    .into_iter()
    .enumerate()
    {
        let mut e = e;
        e["run_id"] = json!("R20261127-120000-beef");
        e["seq"] = json!(10 + i);
        e["ts"] = json!(1_795_650_001_000i64 + i as i64);
        reduce(&mut st, &serde_json::from_value::<Envelope>(e).expect("envelope"));
    }
    let b = &st.tasks[1];
    assert_eq!(st.awaiting_review, 0);
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("attempt 1 ended failed · E007: hallucination detected")),
        "{:?}",
        b.notes
    );
    assert!(b.notes.iter().any(|n| n.contains("retry")), "{:?}", b.notes);
}
