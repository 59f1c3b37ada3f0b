//! The Failures screen: its rows from the database (one per failed, timed-out, partial
//! or retried invocation), filters, sort, search, `n` / `N`, the attempt overlay, and
//! snapshots at 80x24 and 200x60 through ratatui's TestBackend.

use crate::common;

use common::screen::render;
use std::sync::Arc;

use common::bin::{output, plexus};
use plexus::data::store::{FailedInvocation, Store};
use plexus::model::event::{EngineEvent, Envelope};
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::failures_list::FailureSort;
use plexus::tui::app::ui_state::{Doc, DocKey, OutputView, Overlay, Question};
use plexus::tui::app::{update, Action, Effect, Screen, UiState};

fn demo_state() -> RunState {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        reduce(&mut st, &e);
    }
    st
}

/// Rows shaped like the demo's failures, with fixed ids and times.
fn rows() -> Vec<FailedInvocation> {
    let row = |run: &str,
               task: &str,
               attempt: u32,
               attempts: u32,
               agent: &str,
               status: &str,
               codes: &[&str],
               msg: Option<&str>,
               score: Option<f64>,
               t: &str| FailedInvocation {
        run_id: run.into(),
        task_id: task.into(),
        attempt,
        attempts,
        agent: agent.into(),
        status: status.into(),
        error_codes: codes.iter().map(|c| c.to_string()).collect(),
        message: msg.map(str::to_string),
        score,
        grade: score.map(|s| {
            if s >= 0.7 {
                "B"
            } else if s >= 0.5 {
                "C"
            } else {
                "D"
            }
            .to_string()
        }),
        started_at: format!("{t}Z"),
        execution_time_ms: Some(812),
        invocation_id: format!("INV_{task}_{attempt:03}"),
        retried: attempt < attempts,
    };
    let r1 = "R20261126-010802-7fe5";
    let r2 = "R20261125-223011-0b1c";
    vec![
        row(r1, "TASK_CRITIC_DIFF_01", 1, 2, "Critic", "failed", &["E003"], Some("the answer took 30000 ms, over the task's 20000 ms timeout"), None, "2026-11-26T01:08:08"),
        row(r1, "TASK_CODE_DIFF_01", 2, 3, "Code_Architect", "partial", &[], None, Some(0.62), "2026-11-26T01:08:05"),
        row(r1, "TASK_CODE_DIFF_01", 1, 3, "Code_Architect", "failed", &["E002"], Some("the JSON object in the response does not parse: EOF while parsing a list at line 66 column 7"), None, "2026-11-26T01:08:04"),
        row(r1, "TASK_VAULT_CHECK_01", 1, 2, "Knowledge_Vault", "failed", &["E007"], Some("2 referenced assets do not exist: VAULT_X9, VAULT_Y2 (知识库中不存在)"), Some(0.41), "2026-11-26T01:08:02"),
        row(r2, "TASK_SCHOLAR_DIFF_01", 1, 1, "Scholar", "timeout", &["E003"], Some("no chunk for 150 s"), None, "2026-11-25T22:30:15"),
    ]
}

fn ui_with_rows(all_runs: bool) -> UiState {
    let mut ui = UiState::new(false);
    ui.screen = Screen::Failures;
    ui.failures.this_run_only = !all_runs;
    ui.failures.set_rows(rows(), 1_795_650_000_000);
    ui
}

#[test]
fn failures_screen_snapshots() {
    let st = demo_state();
    let mut ui = ui_with_rows(false);
    insta::assert_snapshot!("failures_80x24", render(&st, &mut ui, 80, 24));
    let mut ui = ui_with_rows(true);
    insta::assert_snapshot!("failures_200x60", render(&st, &mut ui, 200, 60));
}

#[test]
fn attempt_overlay_snapshots() {
    let st = demo_state();
    let mut ui = ui_with_rows(true);
    update(&mut ui, &st, Action::Down);
    update(&mut ui, &st, Action::Down);
    let fx = update(&mut ui, &st, Action::Open);
    let inv: Arc<str> = "INV_TASK_CODE_DIFF_01_001".into();
    assert_eq!(fx, vec![Effect::LoadDoc(DocKey::Issues(inv.clone()))]);
    // The issues view of a parse error: the error first, then the retry decision, the
    // empty quality check in one line, the stored errors last.
    let resp = serde_json::json!({
        "errors": [{"error_code": "E002", "error_type": "parse_error",
            "message": "the JSON object in the response does not parse: EOF while parsing a list at line 66 column 7",
            "recoverable": true, "suggested_action": "fix the output format and retry"}],
        "quality_check": {"atoms_generated": 0, "avg_quality_score": 0.0,
            "grades": {"A": 0, "B": 0, "C": 0, "D": 0}, "issues": []}
    });
    let text = plexus::tui::issues_doc::issues_text(
        &resp,
        "retried as attempt 2 after 250 ms (E002): a stricter format reminder was added to the prompt",
    );
    ui.docs
        .insert(DocKey::Issues(inv.clone()), Doc::Ready(text.into()));
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let s = render(&st, &mut ui, w, h);
        let error = s.find("✘ E002 parse_error").expect("the error is shown");
        let check = s
            .find("quality check: no atoms")
            .expect("the check in one line");
        assert!(error < check, "the error leads:\n{s}");
        assert!(!s.contains("\"A\": 0"), "no all-zero block:\n{s}");
        insta::assert_snapshot!(format!("failure_attempt_{w}x{h}"), s);
    }
    // `e` switches to the request, `]` to the task's next failed attempt.
    let fx = update(&mut ui, &st, Action::ViewRequest);
    assert_eq!(fx, vec![Effect::LoadDoc(DocKey::Request(inv))]);
    let fx = update(&mut ui, &st, Action::NextAttempt);
    assert_eq!(
        fx,
        vec![Effect::LoadDoc(DocKey::Request(
            "INV_TASK_CODE_DIFF_01_002".into()
        ))]
    );
    match &ui.overlay {
        Some(Overlay::Attempt(v)) => {
            assert_eq!(v.view, OutputView::Request);
            assert!(v.title.contains("attempt 2/3"), "{}", v.title);
        }
        o => panic!("{o:?}"),
    }
    // `[` `]` say which attempts they visit, and why the last one is not listed.
    let said = |ui: &UiState| {
        ui.flash
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default()
    };
    assert_eq!(said(&ui), "attempt 2/3 · listed attempts 1, 2");
    assert!(update(&mut ui, &st, Action::NextAttempt).is_empty());
    assert!(
        said(&ui).starts_with("attempt 3 of 3 not listed: it did not fail"),
        "{}",
        said(&ui)
    );
    update(&mut ui, &st, Action::PrevAttempt);
    assert_eq!(said(&ui), "attempt 1/3 · listed attempts 1, 2");
    update(&mut ui, &st, Action::PrevAttempt);
    assert_eq!(
        said(&ui),
        "attempt 1/3 is the first listed · listed attempts 1, 2"
    );
    update(&mut ui, &st, Action::Back);
    assert_eq!(ui.overlay, None);
}

#[test]
fn filters_sort_search_and_n_move_through_the_rows() {
    let st = demo_state();
    let mut ui = ui_with_rows(true);
    let ids = |ui: &UiState| -> Vec<String> {
        let rows = ui.failures.rows.clone().expect("rows");
        ui.failures
            .view
            .iter()
            .map(|&i| format!("{}#{}", rows[i].task_id, rows[i].attempt))
            .collect()
    };
    assert_eq!(ids(&ui).len(), 5);
    // Newest first.
    assert_eq!(ids(&ui)[0], "TASK_CRITIC_DIFF_01#1");
    // f cycles the error codes: E002, E003, E007, then none.
    update(&mut ui, &st, Action::FilterGrade);
    assert_eq!(ids(&ui), vec!["TASK_CODE_DIFF_01#1"]);
    update(&mut ui, &st, Action::FilterGrade);
    assert_eq!(
        ids(&ui),
        vec!["TASK_CRITIC_DIFF_01#1", "TASK_SCHOLAR_DIFF_01#1"]
    );
    update(&mut ui, &st, Action::ClearFilters);
    // t cycles statuses.
    update(&mut ui, &st, Action::FilterType);
    assert_eq!(ui.failures.query.status.as_deref(), Some("failed"));
    assert_eq!(ids(&ui).len(), 3);
    update(&mut ui, &st, Action::FilterType);
    assert_eq!(ids(&ui), vec!["TASK_CODE_DIFF_01#2"]);
    update(&mut ui, &st, Action::ClearFilters);
    // A agent.
    update(&mut ui, &st, Action::FilterAgent);
    assert_eq!(ui.failures.query.agent.as_deref(), Some("Code_Architect"));
    assert_eq!(ids(&ui).len(), 2);
    update(&mut ui, &st, Action::ClearFilters);
    // T: the last hour of a fixed clock keeps nothing of a day earlier.
    update(&mut ui, &st, Action::FilterTime);
    assert!(ids(&ui).len() < 5, "{:?}", ids(&ui));
    update(&mut ui, &st, Action::ClearFilters);
    // R: each run of the list in turn, then back to the run on screen (read again).
    update(&mut ui, &st, Action::FilterRun);
    assert_eq!(ids(&ui), vec!["TASK_SCHOLAR_DIFF_01#1"]);
    update(&mut ui, &st, Action::FilterRun);
    assert_eq!(ids(&ui).len(), 4);
    let fx = update(&mut ui, &st, Action::FilterRun);
    assert_eq!(fx, vec![Effect::LoadFailures(Some(st.run_id.clone()))]);
    assert!(ui.failures.this_run_only);
    let fx = update(&mut ui, &st, Action::FilterRun);
    assert_eq!(fx, vec![Effect::LoadFailures(None)], "then every run");
    assert!(!ui.failures.this_run_only);
    // s sorts by run, then task; S reverses.
    update(&mut ui, &st, Action::Sort);
    assert_eq!(ui.failures.query.sort, FailureSort::Run);
    assert_eq!(ids(&ui)[0], "TASK_SCHOLAR_DIFF_01#1");
    update(&mut ui, &st, Action::SortReverse);
    assert_eq!(ids(&ui)[0], "TASK_VAULT_CHECK_01#1");
    update(&mut ui, &st, Action::ClearFilters);
    // / searches ids and messages, as you type.
    update(&mut ui, &st, Action::Search);
    for c in "知识库".chars() {
        plexus::tui::app::input::input(&mut ui, &st, plexus::tui::app::input::InputKey::Char(c));
    }
    assert_eq!(ids(&ui), vec!["TASK_VAULT_CHECK_01#1"]);
    plexus::tui::app::input::input(&mut ui, &st, plexus::tui::app::input::InputKey::Esc);
    assert_eq!(ids(&ui).len(), 5);
    // n and N step and wrap.
    update(&mut ui, &st, Action::NextFailure);
    assert_eq!(ui.failures.selected, 1);
    update(&mut ui, &st, Action::PrevFailure);
    update(&mut ui, &st, Action::PrevFailure);
    assert_eq!(ui.failures.selected, 4);
}

#[test]
fn the_demo_database_lists_every_failed_and_retried_attempt_with_its_code_and_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let out = output(plexus(dir).args(["--db", "p.db", "demo", "--chunk-ms", "0", "--headless"]));
    // The demo ends awaiting review headless: one task waits for a person.
    assert_eq!(out.code, Some(6), "{}", out.stderr);
    let store = Store::open(&dir.join("p.db")).expect("db");
    let run = store.list_runs().expect("runs")[0].run_id.clone();
    let rows = store.failed_invocations(Some(&run)).expect("rows");
    // What the log says: every invocation that did not succeed, or was followed by
    // another attempt of its task.
    let (last, _) = store.last_event(&run).expect("last");
    let mut started: Vec<(String, String, u32)> = Vec::new();
    let mut bad: Vec<String> = Vec::new();
    for e in store.events(&run, 1, last).expect("events") {
        match e.event {
            Ok(EngineEvent::InvocationStarted(s)) => started.push((
                e.invocation_id.clone().expect("inv"),
                e.task_id.clone().expect("task"),
                s.attempt,
            )),
            Ok(EngineEvent::InvocationFinished(f))
                if f.status != Some(plexus::base::protocol::InvocationStatus::Success) =>
            {
                bad.push(e.invocation_id.clone().expect("inv"))
            }
            _ => {}
        }
    }
    let mut expected: Vec<String> = started
        .iter()
        .filter(|(inv, task, a)| {
            bad.contains(inv) || started.iter().any(|(_, t, b)| t == task && b > a)
        })
        .map(|(inv, _, _)| inv.clone())
        .collect();
    expected.sort();
    let mut got: Vec<String> = rows.iter().map(|r| r.invocation_id.clone()).collect();
    got.sort();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
    for r in &rows {
        if r.status == "failed" {
            assert!(!r.error_codes.is_empty() && r.message.is_some(), "{r:?}");
        }
        assert!(r.attempt <= r.attempts);
    }
    // Every run's list holds this run's rows too.
    assert_eq!(
        store.failed_invocations(None).expect("all").len(),
        rows.len()
    );
}

fn review_item(task: &str, decided: bool) -> plexus::run::review::ReviewItem {
    plexus::run::review::ReviewItem {
        run_id: "R20261126-010802-7fe5".into(),
        task_id: task.into(),
        agent: "Scenario_Validator".into(),
        status: if decided { "success" } else { "failed" }.into(),
        invocation_id: format!("INV_{task}_001"),
        attempt: 1,
        message: Some("1 reference(s) to assets that do not exist".into()),
        fabricated: vec![plexus::run::review::FabricatedRef {
            atom_id: "VALID_TA_01".into(),
            reference: "CODE_TA_99".into(),
        }],
        atoms: vec![
            serde_json::json!({"asset_id": "VALID_TA_01", "atom_type": "TA", "content": "验证通过：时间复杂度 O(n log n)"}),
        ],
        summary: "one scenario validated".into(),
        avg_score: 0.78,
        grades: plexus::base::protocol::GradeCounts {
            a: 0,
            b: 1,
            c: 0,
            d: 0,
        },
        issues: vec![],
        decision: decided.then(|| plexus::run::review::Decision {
            decision: plexus::run::review::DecisionKind::Accepted,
            reviewer: "ada".into(),
            note: None,
            decided_at: "2026-11-26T01:09:00Z".into(),
            seq: 340,
        }),
        retried: false,
    }
}

/// The queue is a trail: an answer whose task was retried stays in it as retried (with
/// nothing to decide), and rows of several runs name their run by its tag; the title
/// counts each kind and says whose rows they are, at 80x24 and 120x40.
#[test]
fn the_review_trail_keeps_a_retried_answer_and_names_each_run() {
    let st = demo_state();
    let mut ui = ui_with_rows(false);
    // Every run's queue (no run open).
    ui.failures.this_run_only = false;
    ui.failures_run = None;
    let fx = update(&mut ui, &st, Action::ReviewQueue);
    assert_eq!(fx, vec![Effect::LoadReviews(None)]);
    let mut retried = review_item("TASK_VALIDATOR_DIFF_01", false);
    retried.retried = true;
    let mut other_run = review_item("TASK_VALIDATOR_DIFF_01", false);
    other_run.run_id = "R20261126-020000-a1b2".into();
    ui.failures.queue = Some(vec![
        retried,
        review_item("TASK_VALIDATOR_DIFF_02", true),
        other_run,
    ]);
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = render(&st, &mut ui, w, h);
        assert!(
            screen.contains("Review queue · 1 waiting · 1 decided · 1 retried · 2 runs"),
            "{screen}"
        );
        let rows: Vec<&str> = screen
            .lines()
            .filter(|l| l.contains("TASK_VALIDATOR"))
            .collect();
        assert_eq!(rows.len(), 3, "{screen}");
        assert!(
            rows[0].contains("7fe5") && rows[0].contains("retried after try 1"),
            "{screen}"
        );
        assert!(
            rows[2].contains("a1b2") && rows[2].contains("waiting"),
            "{screen}"
        );
        if w == 80 {
            insta::assert_snapshot!("review_trail_80x24", screen);
        }
    }
    // Its evidence offers no decision; the waiting answer's does.
    let bar = |ui: &mut UiState| {
        let screen = render(&st, ui, 80, 24);
        screen.lines().last().unwrap_or_default().to_string()
    };
    ui.failures.queue_selected = 0;
    update(&mut ui, &st, Action::Open);
    let retried_bar = bar(&mut ui);
    assert!(
        !retried_bar.contains("Y accept") && retried_bar.contains("esc close"),
        "{retried_bar}"
    );
    update(&mut ui, &st, Action::Back);
    ui.failures.queue_selected = 2;
    update(&mut ui, &st, Action::Open);
    let waiting_bar = bar(&mut ui);
    assert!(waiting_bar.contains("Y accept · X reject"), "{waiting_bar}");
    update(&mut ui, &st, Action::Back);
    // Y on the retried answer decides nothing and says why.
    ui.failures.queue_selected = 0;
    assert!(update(&mut ui, &st, Action::ReviewAccept).is_empty());
    let screen = render(&st, &mut ui, 120, 40);
    assert!(screen.contains("the later attempt stands"), "{screen}");
    assert_eq!(ui.overlay, None);
}

#[test]
fn the_review_queue_shows_the_evidence_and_accepts_or_rejects_with_a_reason() {
    let st = demo_state();
    let mut ui = ui_with_rows(false);
    ui.failures_run = Some("R20261126-010802-7fe5".into());
    let fx = update(&mut ui, &st, Action::ReviewQueue);
    assert_eq!(
        fx,
        vec![Effect::LoadReviews(Some("R20261126-010802-7fe5".into()))]
    );
    ui.failures.queue = Some(vec![
        review_item("TASK_VALIDATOR_DIFF_01", false),
        review_item("TASK_VALIDATOR_DIFF_02", true),
    ]);
    insta::assert_snapshot!("review_queue_80x24", render(&st, &mut ui, 80, 24));
    insta::assert_snapshot!("review_queue_200x60", render(&st, &mut ui, 200, 60));
    // Enter shows the evidence: the reference that does not exist and the atoms.
    update(&mut ui, &st, Action::Open);
    match &ui.overlay {
        Some(Overlay::Evidence { lines, .. }) => {
            let text = lines.join("\n");
            assert!(text.contains("VALID_TA_01 names CODE_TA_99"), "{text}");
            assert!(text.contains("验证通过"), "{text}");
        }
        o => panic!("{o:?}"),
    }
    // Y inside the evidence asks first; n sends nothing and keeps nothing pending.
    assert!(update(&mut ui, &st, Action::ReviewAccept).is_empty());
    assert_eq!(ui.overlay, Some(Overlay::Confirm(Question::Accept)));
    assert!(update(&mut ui, &st, Action::Back).is_empty());
    assert_eq!(ui.accept_pending, None);
    // Y from the list, then y: accepted.
    assert!(update(&mut ui, &st, Action::ReviewAccept).is_empty());
    let fx = update(&mut ui, &st, Action::Confirm);
    assert_eq!(
        fx,
        vec![Effect::Review {
            run: "R20261126-010802-7fe5".into(),
            task: "TASK_VALIDATOR_DIFF_01".into(),
            verdict: plexus::run::review::Verdict::Accept { note: None },
        }]
    );
    // X asks for a reason; an empty one rejects nothing, a reason rejects.
    use plexus::tui::app::input::{input, InputKey};
    assert!(update(&mut ui, &st, Action::ReviewReject).is_empty());
    assert!(input(&mut ui, &st, InputKey::Enter).is_empty());
    update(&mut ui, &st, Action::ReviewReject);
    for c in "CODE_TA_99 is real".chars() {
        input(&mut ui, &st, InputKey::Char(c));
    }
    let fx = input(&mut ui, &st, InputKey::Enter);
    assert_eq!(
        fx,
        vec![Effect::Review {
            run: "R20261126-010802-7fe5".into(),
            task: "TASK_VALIDATOR_DIFF_01".into(),
            verdict: plexus::run::review::Verdict::Reject {
                reason: "CODE_TA_99 is real".into()
            },
        }]
    );
    // A decided item is refused: a decision is final.
    update(&mut ui, &st, Action::Down);
    assert!(update(&mut ui, &st, Action::ReviewAccept).is_empty());
    assert!(ui
        .flash
        .as_ref()
        .is_some_and(|f| f.text.contains("already accepted")));
    // v goes back to the list.
    update(&mut ui, &st, Action::ReviewQueue);
    assert!(!ui.failures.review);
}

#[test]
fn enter_in_the_overlay_finds_the_attempt_in_another_run_by_opening_it() {
    let st = demo_state();
    let mut ui = ui_with_rows(true);
    // The last row is of another run than the demo's.
    update(&mut ui, &st, Action::Bottom);
    update(&mut ui, &st, Action::Open);
    let fx = update(&mut ui, &st, Action::Open);
    assert_eq!(fx, vec![Effect::FindInRun("R20261125-223011-0b1c".into())]);
    assert_eq!(ui.overlay, None);
    let find = ui
        .failures
        .find
        .clone()
        .expect("kept until the run is open");
    assert_eq!(find.task_id, "TASK_SCHOLAR_DIFF_01");
    assert_eq!(find.view, OutputView::Issues);
    // Not this run: nothing is selected yet.
    let mut fx = Vec::new();
    assert!(!plexus::tui::app::failures_keys::find_in_run(
        &mut ui, &st, &find, &mut fx
    ));
}

#[test]
fn the_title_says_whose_rows_and_s_sorts_by_shown_columns_at_every_size() {
    let st = demo_state();
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        // Rows from two runs while "this run" was asked (a load on its way): two runs.
        let mut ui = ui_with_rows(false);
        let s = render(&st, &mut ui, w, h);
        let title = s.lines().nth(1).unwrap_or("");
        assert!(title.contains("· 2 runs"), "{title}");
        assert!(!title.contains("this run"), "{title}");
        insta::assert_snapshot!(format!("failures_two_runs_{w}x{h}"), s);
        // `s` cycles through the columns drawn.
        let mut seen = Vec::new();
        for _ in 0..10 {
            update(&mut ui, &st, Action::Sort);
            seen.push(ui.failures.query.sort);
        }
        // The list's width is the terminal's less the pane's borders; rows of two runs
        // name their run at every width (its tag where the id does not fit).
        let agent_shown = w - 2 >= 100;
        assert!(seen.contains(&FailureSort::Run), "{w}: {seen:?}");
        assert_eq!(
            seen.contains(&FailureSort::Agent),
            agent_shown,
            "{w}: {seen:?}"
        );
        // A one-run filter: the title names the run.
        ui.failures.query.run = Some("R20261125-223011-0b1c".into());
        ui.failures.refilter(1_795_650_000_000);
        let s = render(&st, &mut ui, w, h);
        let title = s.lines().nth(1).unwrap_or("");
        assert!(title.contains("run R20261125-223011-0b1c"), "{title}");
        assert!(!title.contains("every run"), "{title}");
    }
}
