//! Popups at 80x24, 120x40 and 200x60: the help and the message log wrap their lines
//! (no word or figure cut), an open popup brings its own keys to the status bar instead
//! of the screen's, and `q` inside a popup quits as it does from the screen.

use std::sync::Arc;

use crate::common;

use common::screen::render;
use plexus::model::event::Envelope;
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::ui_state::{Overlay, Question};
use plexus::tui::app::{update, Action, Effect, Screen, UiState};
use serde_json::json;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// A finished run whose second task waits for review.
fn waiting_run() -> RunState {
    let events = vec![
        json!({"kind": "run_started", "plan_id": "POPUPS", "execution_mode": "Deep_Internalization",
            "provider": "simulated", "seed": 1, "concurrency": 2,
            "agents": [{"name": "Scenario_Validator", "max_input_tokens": 6000, "data_area_tokens": 4000}],
            "tasks": [{"task_id": "TASK_A", "agent": "Scenario_Validator"},
                      {"task_id": "TASK_B", "agent": "Scenario_Validator", "depends_on": ["TASK_A"]}]}),
        json!({"kind": "task_finished", "task_id": "TASK_A", "status": "success", "attempts": 1, "atoms": 2}),
        json!({"kind": "task_finished", "task_id": "TASK_B", "status": "failed", "attempts": 1, "atoms": 0,
            "error_code": "E007"}),
        json!({"kind": "run_finished", "status": "awaiting_review", "tasks": {}, "atoms": 2,
            "grades": {"A": 2, "B": 0, "C": 0, "D": 0}}),
    ];
    let mut st = RunState::new();
    for (i, mut e) in events.into_iter().enumerate() {
        e["run_id"] = json!("R20261203-120000-cafe");
        e["seq"] = json!(i + 1);
        e["ts"] = json!(1_795_650_000_000i64 + i as i64 * 50);
        let env: Envelope =
            serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{e}: {err}"));
        reduce(&mut st, &env);
    }
    st
}

fn ui_with(overlay: Overlay) -> UiState {
    let mut ui = UiState::new(true);
    ui.screen = Screen::Run;
    ui.overlay = Some(overlay);
    ui
}

/// The screens shown while paging through the open overlay to its end.
fn paged(st: &RunState, ui: &mut UiState, w: u16, h: u16) -> String {
    let mut seen = render(st, ui, w, h);
    for _ in 0..12 {
        update(ui, st, Action::PageDown);
        seen.push_str(&render(st, ui, w, h));
    }
    seen
}

/// Every word of `text` that has five characters or more is somewhere in `seen` whole.
fn assert_words_whole(text: &str, seen: &str, at: &str) {
    for word in text.split_whitespace().filter(|w| w.chars().count() >= 5) {
        assert!(seen.contains(word), "`{word}` of {text:?} is cut at {at}");
    }
}

#[test]
fn help_lines_wrap_without_cutting_a_word_at_every_size() {
    let st = waiting_run();
    for (w, h) in SIZES {
        let mut ui = ui_with(Overlay::Help { top: 0 });
        insta::assert_snapshot!(format!("help_{w}x{h}"), render(&st, &mut ui, w, h));
        let seen = paged(&st, &mut ui, w, h);
        for a in Action::ALL {
            assert_words_whole(
                plexus::tui::ui::help::describe(*a),
                &seen,
                &format!("{w}x{h}"),
            );
        }
        // The seek line's figures (the examples) are whole.
        assert!(seen.contains("(14:03:21,"), "{w}x{h}");
    }
}

#[test]
fn the_message_log_shows_long_messages_whole_at_every_size() {
    let st = waiting_run();
    let long = "the command line takes any action by name: :retry TASK_B, :theme light, \
                :goto TASK_A, :filter grade=D; a retry at 14:03:21 resumed the run from \
                event 1737 of 2017";
    for (w, h) in SIZES {
        let mut ui = UiState::new(true);
        ui.screen = Screen::Run;
        ui.flash("first message", false);
        ui.flash(long, true);
        // Fixed times (12:00:00 UTC), so the snapshot holds.
        for (k, m) in ui.messages.iter_mut().enumerate() {
            m.0 = 1_796_299_200_000 + k as i64 * 1_000;
        }
        update(&mut ui, &st, Action::Messages);
        let s = render(&st, &mut ui, w, h);
        insta::assert_snapshot!(format!("messages_{w}x{h}"), s);
        assert_words_whole(long, &s, &format!("{w}x{h}"));
        assert!(s.contains(":retry TASK_B,") && s.contains("2017"), "{s}");
    }
}

/// The bottom line of a screen.
fn bar(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("")
}

#[test]
fn a_popup_brings_its_own_keys_to_the_status_bar_at_every_size() {
    let st = waiting_run();
    let evidence = Overlay::Evidence {
        lines: Arc::new(vec![
            "TASK_B · Scenario_Validator · flagged for human review: 2 references to \
             assets that do not exist (VAULT_X9, VAULT_Y2)"
                .into(),
        ]),
        top: 0,
    };
    for (w, h) in SIZES {
        // Without a popup the screen's next step leads the keys.
        let mut ui = UiState::new(true);
        ui.screen = Screen::Run;
        let s = render(&st, &mut ui, w, h);
        assert!(bar(&s).contains("4 v review"), "{w}x{h}: {}", bar(&s));
        let mut ui = ui_with(evidence.clone());
        let s = render(&st, &mut ui, w, h);
        let line = bar(&s);
        // The decision leads; closing and quitting follow where there is room.
        assert!(line.contains("Y accept · X reject"), "{w}x{h}: {line}");
        if w >= 120 {
            assert!(line.contains("esc close · q quit"), "{w}x{h}: {line}");
        }
        assert!(
            !line.contains("4 v review") && !line.contains("? help"),
            "the screen's keys do not reach under a popup: {line}"
        );
        // The evidence is wrapped, whole.
        assert!(s.contains("flagged for human review"), "{w}x{h}:\n{s}");
        assert!(
            s.contains("(VAULT_X9,") && s.contains("VAULT_Y2)"),
            "{w}x{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("evidence_{w}x{h}"), s);
        // The help's keys are its own too.
        let mut ui = ui_with(Overlay::Help { top: 0 });
        let line = bar(&render(&st, &mut ui, w, h)).to_string();
        assert!(line.contains("esc close · q quit · ↑ ↓ scroll"), "{line}");
    }
}

#[test]
fn q_inside_a_popup_quits_as_from_the_screen_and_esc_only_closes_it() {
    let st = waiting_run();
    for overlay in [
        Overlay::Help { top: 0 },
        Overlay::Text {
            title: " Messages ".into(),
            lines: Arc::new(vec!["no messages yet".into()]),
            top: 0,
        },
        Overlay::Evidence {
            lines: Arc::new(vec!["evidence".into()]),
            top: 0,
        },
    ] {
        // A review still waits: q asks, as on the screen.
        let mut ui = ui_with(overlay.clone());
        let fx = update(&mut ui, &st, Action::Quit);
        assert!(fx.is_empty(), "{fx:?}");
        assert_eq!(
            ui.overlay,
            Some(Overlay::Confirm(Question::QuitWithReviews(1))),
            "{overlay:?}"
        );
        // Nothing waits: q quits at once.
        let mut done = st.clone();
        done.awaiting_review = 0;
        let mut ui = ui_with(overlay.clone());
        let fx = update(&mut ui, &done, Action::Quit);
        assert!(fx.contains(&Effect::Quit), "{overlay:?}: {fx:?}");
        // Esc only closes the popup.
        let mut ui = ui_with(overlay.clone());
        let fx = update(&mut ui, &done, Action::Back);
        assert!(fx.is_empty() && ui.overlay.is_none(), "{overlay:?}");
    }
}
