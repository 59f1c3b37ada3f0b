//! The Eval screen drawn through TestBackend from a model made here (not from our own
//! engine): the progress line, the check table against a parent, the sample list and
//! its filters, a sample opened side by side, the help; and how keys change the state.

use crate::common;

use common::screen::buffer_text;

use plexus::features::eval::record::EvalRow;
use plexus::features::eval::stats::{wilson, Interval, Z95};
use plexus::tui::app::input::InputKey;
use plexus::tui::app::Action;
use plexus::tui::eval_ui::detail::{CheckSide, Detail};
use plexus::tui::eval_ui::model::{CheckLine, Flip, ParentDiff, SampleLine, Status};
use plexus::tui::eval_ui::state::{Request, Show};
use plexus::tui::eval_ui::{EvalModel, EvalScreen};
use plexus::tui::ui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn row(id: &str, status: &str, iteration: u32) -> EvalRow {
    EvalRow {
        eval_id: id.into(),
        name: "support-answers".into(),
        eval_key: "k".into(),
        kind: "run".into(),
        run_id: Some("R1".into()),
        parent_id: None,
        iteration,
        spec_path: "support.eval.json".into(),
        spec_json: "{}".into(),
        dataset_path: "support.jsonl".into(),
        out_dir: Some("evals".into()),
        status: status.into(),
        created_at: "2026-11-28T12:00:00Z".into(),
        finished_at: None,
        sample_count: 40,
    }
}

/// 40 samples: checks `answer`, `cites_source`, `json`; every fifth pending, every
/// seventh an error, some failures, some flips against the parent.
fn model(status: &str) -> EvalModel {
    let scoring = serde_json::from_value(serde_json::json!({
        "checks": [
            {"name": "answer", "kind": "json_valid"},
            {"name": "cites_source", "kind": "json_valid"},
            {"name": "json", "kind": "json_valid"}],
        "epochs": 1, "reducer": "mean", "plan_tasks": ["t"], "output_task": "t",
        "fail_under": {"answer": 0.9}}))
    .expect("scoring");
    let mut samples = Vec::new();
    let mut counts = [0u64; 4];
    for i in 0..40u64 {
        let (status, marks): (Status, &[u8]) = if i % 5 == 4 {
            (Status::Pending, b"")
        } else if i % 7 == 6 {
            (Status::Error, b"eee")
        } else if i % 3 == 0 {
            (Status::Failed, b"pfp")
        } else if i % 11 == 1 {
            (Status::Failed, b"fpp")
        } else {
            (Status::Passed, b"ppp")
        };
        counts[status as usize] += 1;
        samples.push(SampleLine {
            id: format!("ticket-{i:03}"),
            ord: i,
            status,
            score: (status != Status::Pending).then_some(if status == Status::Passed {
                1.0
            } else {
                0.5
            }),
            marks: marks.into(),
            inherited: false,
            flip: match i % 9 {
                0 if status == Status::Failed => Flip::Regressed,
                2 if status == Status::Passed => Flip::Improved,
                _ => Flip::None,
            },
            check_flipped: i % 9 == 0 || i % 9 == 2,
        });
    }
    let line = |name: &str, passed: u64, of: u64, errors: u64, d: Option<ParentDiff>| CheckLine {
        name: name.into(),
        passed,
        of,
        errors,
        rate: wilson(passed, of, Z95),
        gate: (name == "answer").then_some(0.9),
        parent: d,
    };
    let diff = |e: f64, lo: f64, hi: f64, down: u64, up: u64| ParentDiff {
        parent_rate: 0.7,
        difference: Interval {
            estimate: e,
            lo,
            hi,
        },
        regressed: down,
        improved: up,
    };
    EvalModel {
        row: EvalRow {
            parent_id: None,
            ..row("E20261128-120500-beef", status, 2)
        },
        scoring,
        parent: Some(row("E20261127-090000-aaaa", "finished", 1)),
        parent_side: None,
        samples,
        checks: vec![
            line("answer", 27, 32, 4, Some(diff(0.031, -0.042, 0.105, 2, 3))),
            line(
                "cites_source",
                22,
                32,
                4,
                Some(diff(-0.125, -0.231, -0.018, 5, 1)),
            ),
            line("json", 28, 32, 4, None),
        ],
        counts,
        tokens: 184_220,
        cost_usd: Some(0.4183),
    }
}

fn render(s: &mut EvalScreen, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    let theme = Theme::dark();
    term.draw(|f| {
        let area = f.area();
        plexus::tui::eval_ui::draw::draw(f.buffer_mut(), area, s, &theme)
    })
    .expect("draw");
    buffer_text(term.backend().buffer())
}

fn detail() -> Detail {
    Detail {
        sample_id: "ticket-003".into(),
        status: "failed".into(),
        tab: 0,
        scroll: 0,
        sides: vec![
            CheckSide {
                check: "cites_source".into(),
                epoch: 1,
                passed: Some(false),
                at: "$.sources[0].url".into(),
                why: "no match".into(),
                expected: vec!["https://help.example/refunds".into()],
                found: vec!["https://help.example/returns".into()],
            },
            CheckSide {
                check: "answer".into(),
                epoch: 1,
                passed: Some(true),
                at: "$.answer".into(),
                why: "contains".into(),
                expected: vec!["refund".into()],
                found: vec!["refund".into()],
            },
        ],
        docs: [
            vec![
                "{".into(),
                "  \"sample_id\": \"ticket-003\"".into(),
                "}".into(),
            ],
            vec!["{}".into()],
            vec!["{}".into()],
            vec!["{}".into()],
        ],
    }
}

#[test]
fn eval_screen_snapshots_at_80x24_and_200x60() {
    let mut s = EvalScreen::new(model("running"));
    s.rate = Some(41.5);
    insta::assert_snapshot!("eval_list_80x24", render(&mut s, 80, 24));
    insta::assert_snapshot!("eval_list_200x60", render(&mut s, 200, 60));
    s.act(Action::FocusNext);
    s.act(Action::Down);
    insta::assert_snapshot!("eval_checks_focus_80x24", render(&mut s, 80, 24));
    s.act(Action::FocusNext);
    s.detail = Some(detail());
    insta::assert_snapshot!("eval_detail_80x24", render(&mut s, 80, 24));
    s.detail = None;
    s.act(Action::Help);
    insta::assert_snapshot!("eval_help_80x24", render(&mut s, 80, 24));
}

#[test]
fn the_progress_line_says_the_rate_time_left_and_spend_or_how_to_go_on() {
    let mut s = EvalScreen::new(model("running"));
    let screen = render(&mut s, 80, 24);
    assert!(screen.contains("measuring the rate"), "{screen}");
    s.rate = Some(2.0);
    let screen = render(&mut s, 80, 24);
    // 8 pending at 2 a second: four seconds left.
    assert!(screen.contains("2/s · ~0:04 left"), "{screen}");
    assert!(screen.contains("184.2k tokens · $0.4183"), "{screen}");
    let mut s = EvalScreen::new(model("interrupted"));
    let screen = render(&mut s, 80, 24);
    assert!(
        screen.contains("stopped with 8 pending (plexus eval resume)"),
        "{screen}"
    );
}

#[test]
fn filters_compose_and_a_new_reading_keeps_the_selected_sample() {
    let mut s = EvalScreen::new(model("running"));
    assert_eq!(s.rows.len(), 40);
    s.act(Action::FilterGrade); // failed
    assert_eq!(s.filter.show, Show::Failed);
    let failed = s.rows.len();
    assert!(failed > 0);
    assert!(s
        .rows
        .iter()
        .all(|&r| s.model.samples[r as usize].status == Status::Failed));
    s.act(Action::FilterType); // and missed `answer`
    assert!(s.rows.len() < failed);
    assert!(s
        .rows
        .iter()
        .all(|&r| s.model.samples[r as usize].misses(0)));
    s.act(Action::ClearFilters);
    // An error misses every check: it is among the misses of `json`, which no failure
    // misses.
    for _ in 0..3 {
        s.act(Action::FilterType);
    }
    assert_eq!(s.filter.check, Some(2));
    assert!(s
        .rows
        .iter()
        .all(|&r| s.model.samples[r as usize].status == Status::Error));
    s.act(Action::ClearFilters);
    s.act(Action::Compare);
    assert!(s.rows.iter().all(|&r| {
        let l = &s.model.samples[r as usize];
        l.flip != Flip::None || l.check_flipped
    }));
    s.act(Action::ClearFilters);
    // Search: typed after `/`; `meta.K=V` asks the loop to read the field.
    s.act(Action::Search);
    for c in "ticket-01".chars() {
        s.input_key(InputKey::Char(c));
    }
    s.input_key(InputKey::Enter);
    assert_eq!(s.rows.len(), 10);
    s.act(Action::ClearFilters);
    s.act(Action::Search);
    for c in "meta.tier=gold".chars() {
        s.input_key(InputKey::Char(c));
    }
    s.input_key(InputKey::Enter);
    assert_eq!(
        s.request.take(),
        Some(Request::Meta("tier".into(), "gold".into()))
    );
    let values = (0..40)
        .map(|i| Some(if i < 4 { "gold" } else { "free" }.to_string()))
        .collect();
    s.meta_values = Some(("tier".into(), values));
    s.refresh();
    assert_eq!(s.rows, [0, 1, 2, 3]);
    // A new reading of a running eval keeps the selection and measures the rate.
    s.act(Action::ClearFilters);
    s.act(Action::Bottom);
    let id = s.model.samples[s.selected_sample().expect("selected")]
        .id
        .clone();
    let mut newer = model("running");
    newer.counts[1] += 3;
    newer.counts[0] -= 3;
    s.replace(newer, 1.5);
    assert_eq!(s.rate, Some(2.0));
    assert_eq!(
        s.model.samples[s.selected_sample().expect("selected")].id,
        id
    );
}

#[test]
fn enter_opens_a_scored_sample_r_marks_and_h_asks_for_the_handoff() {
    let mut s = EvalScreen::new(model("finished"));
    // ticket-004 is pending: it does not open.
    for _ in 0..4 {
        s.act(Action::Down);
    }
    s.act(Action::Open);
    assert_eq!(s.request, None);
    assert!(s.flash.as_ref().is_some_and(|f| f.0.contains("not scored")));
    s.act(Action::Up);
    s.act(Action::Open);
    assert_eq!(s.request.take(), Some(Request::Open(3)));
    s.act(Action::Retry);
    assert_eq!(s.request.take(), Some(Request::SaveMarks));
    assert!(s.marked.contains("ticket-003"));
    assert_eq!(s.selected, 4, "r moves to the next sample");
    s.act(Action::ExportHandoff);
    assert_eq!(s.request.take(), Some(Request::Handoff));
    // In a sample: 1-4 pick a document, esc goes back to the list.
    s.detail = Some(detail());
    s.act(Action::ScreenRuns);
    assert_eq!(s.detail.as_ref().map(|d| d.tab), Some(3));
    s.act(Action::Back);
    assert!(s.detail.is_none());
}
