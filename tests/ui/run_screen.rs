//! The Run screen tells the truth at a glance: snapshots at 80x24, 120x40 and 200x60 of
//! a failed 200-task run, a cancelled demo and a stalled live invocation, with the
//! status bar's counts by outcome, the DAG title's counts, the stall counters and the
//! context view checked in words.

use crate::common;

use common::screen::render;
use plexus::model::event::Envelope;
use plexus::model::state::{reduce, RunState};
use plexus::tui::app::{Screen, UiState};
use serde_json::json;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// Folds JSON envelopes (`seq` and `ts` filled in).
fn fold(events: Vec<serde_json::Value>) -> RunState {
    let mut st = RunState::new();
    for (i, mut e) in events.into_iter().enumerate() {
        e["run_id"] = json!("R20261126-120000-f00d");
        e["seq"] = json!(i + 1);
        if e.get("ts").is_none() {
            e["ts"] = json!(1_795_650_000_000i64 + i as i64 * 50);
        }
        let env: Envelope =
            serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{e}: {err}"));
        reduce(&mut st, &env);
    }
    st
}

fn started(tasks: &[serde_json::Value]) -> serde_json::Value {
    json!({"kind": "run_started", "plan_id": "GEN_200", "execution_mode": "Deep_Internalization",
        "provider": "simulated", "seed": 1, "concurrency": 8,
        "agents": [{"name": "Code_Architect", "max_input_tokens": 100000, "data_area_tokens": 75000},
                   {"name": "Knowledge_Vault_With_A_Long_Name", "max_input_tokens": 11200, "data_area_tokens": 8000}],
        "tasks": tasks})
}

/// 200 tasks in ten layers of twenty; one fails, the 63 after it on its chain are
/// blocked, the rest succeed.
fn failed_200() -> RunState {
    let id = |i: usize| format!("T{i:05}");
    let tasks: Vec<serde_json::Value> = (0..200)
        .map(|i| {
            let agent = if i % 2 == 0 {
                "Code_Architect"
            } else {
                "Knowledge_Vault_With_A_Long_Name"
            };
            if i < 20 {
                json!({"task_id": id(i), "agent": agent})
            } else {
                json!({"task_id": id(i), "agent": agent, "depends_on": [id(i - 20)]})
            }
        })
        .collect();
    let mut ev = vec![started(&tasks)];
    let mut blocked = 0;
    for i in 0..200 {
        let t = id(i);
        if i == 5 {
            ev.push(json!({"kind": "task_finished", "task_id": t, "status": "failed", "attempts": 3, "atoms": 0,
                "error_code": "E002", "error_message": "the JSON object in the response does not parse"}));
        } else if i % 20 == 5 || blocked < 63 && i > 20 && i % 20 < 8 {
            blocked += 1;
            ev.push(json!({"kind": "task_blocked", "task_id": t, "error_code": "E006", "upstream": id(5),
                "message": format!("dependency `{}` ended failed", id(5))}));
        } else {
            ev.push(json!({"kind": "task_finished", "task_id": t, "status": "success", "attempts": 1, "atoms": 2}));
        }
    }
    ev.push(
        json!({"kind": "run_finished", "status": "failed", "tasks": {}, "atoms": 0,
        "grades": {"A": 0, "B": 0, "C": 0, "D": 0}}),
    );
    fold(ev)
}

fn demo_events() -> Vec<serde_json::Value> {
    include_str!("../../fixtures/runs/demo.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture"))
        .collect()
}

/// The demo cancelled part-way: what had not finished ends cancelled.
fn cancelled_demo() -> RunState {
    let mut ev: Vec<serde_json::Value> = demo_events().into_iter().take(150).collect();
    let ts = ev.last().and_then(|e| e["ts"].as_i64()).unwrap_or(0);
    let mut st = fold(ev.clone());
    ev.push(
        json!({"kind": "cancel_requested", "reason": "cancelled from the terminal", "ts": ts + 10}),
    );
    for t in st.tasks.iter().filter(|t| !t.status.is_final()) {
        ev.push(
            json!({"kind": "task_finished", "task_id": &*t.id, "status": "cancelled",
            "attempts": t.attempts, "atoms": 0, "ts": ts + 20}),
        );
    }
    ev.push(
        json!({"kind": "run_finished", "status": "cancelled", "tasks": {}, "atoms": 0,
        "grades": {"A": 0, "B": 0, "C": 0, "D": 0}, "ts": ts + 30}),
    );
    st = fold(ev);
    st
}

fn ui_at(task: usize) -> UiState {
    let mut ui = UiState::new(false);
    ui.screen = Screen::Run;
    ui.task = task;
    ui
}

#[test]
fn a_failed_200_task_run_counts_by_outcome_at_every_size() {
    let st = failed_200();
    for (w, h) in SIZES {
        let mut ui = ui_at(5);
        let s = render(&st, &mut ui, w, h);
        let status = s.lines().last().expect("status bar");
        assert!(status.contains("failed"), "{status}");
        assert!(!status.contains("200/200"), "{status}");
        if w >= 120 {
            let blocked = st.count(plexus::model::event::TaskStatus::Blocked);
            assert!(blocked > 60);
            let ok = 200 - 1 - blocked;
            assert!(
                status.contains(&format!("{ok} ok · 1 failed · {blocked} blocked")),
                "{status}"
            );
        }
        if w >= 120 {
            assert!(s.contains("✘1"), "the DAG title counts the failure:\n{s}");
        }
        insta::assert_snapshot!(format!("failed_200_{w}x{h}"), s);
    }
}

#[test]
fn a_cancelled_demo_says_cancelled_not_done() {
    let st = cancelled_demo();
    for (w, h) in SIZES {
        let mut ui = ui_at(2);
        let s = render(&st, &mut ui, w, h);
        let status = s.lines().last().expect("status bar");
        assert!(status.contains("cancelled"), "{status}");
        assert!(!status.contains("done"), "{status}");
        insta::assert_snapshot!(format!("cancelled_demo_{w}x{h}"), s);
    }
}

#[test]
fn a_stalled_invocation_shows_how_long_it_has_been_quiet_and_its_time_limit() {
    let tasks = vec![json!({"task_id": "TASK_SLOW_01", "agent": "Code_Architect"})];
    let t0 = 1_795_650_000_000i64;
    let st = fold(vec![
        {
            let mut s = started(&tasks);
            s["ts"] = json!(t0);
            s
        },
        json!({"kind": "invocation_started", "task_id": "TASK_SLOW_01", "invocation_id": "INV_SLOW_001",
            "attempt": 1, "prompt_tokens": 507, "ts": t0 + 1_000,
            "constraints": {"timeout_seconds": 150.0, "max_tokens": 4000, "temperature": 0.1},
            "quality_threshold": "C"}),
        json!({"kind": "chunk", "task_id": "TASK_SLOW_01", "invocation_id": "INV_SLOW_001",
            "text": "{\"atoms\": [", "ts": t0 + 2_000}),
    ]);
    for (w, h) in SIZES {
        let mut ui = ui_at(0);
        ui.read_only = false;
        ui.engine_attached = true;
        ui.now_ms = t0 + 42_000;
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains("no output for 40 s · timeout in 109 s"), "{s}");
        assert!(s.contains("⏸"), "the DAG glyph says it is stalled:\n{s}");
        // With room after the keys, the status bar counts the call in flight and names
        // the slowest; narrower, the keys stay and `1 running` says it.
        assert_eq!(s.contains("1 call"), w >= 200, "{s}");
        if w >= 200 {
            assert!(s.contains("1 call · slowest TASK_SLOW_01 0:41"), "{s}");
        }
        insta::assert_snapshot!(format!("stalled_{w}x{h}"), s);
    }
    // Before the threshold it only counts.
    let mut ui = ui_at(0);
    ui.engine_attached = true;
    ui.read_only = false;
    ui.now_ms = t0 + 5_000;
    let s = render(&st, &mut ui, 120, 40);
    assert!(
        s.contains("running 4 s · output 3 s ago · timeout in 146 s"),
        "{s}"
    );
}

/// Every `timeout in …` on screen ends in ` s` right after its digits (never cut inside
/// the figure), and the DAG's quiet time shows whole.
#[test]
fn figures_show_whole_with_their_units_or_not_at_all_at_every_size() {
    let tasks = vec![json!({"task_id": "T00", "agent": "Code_Architect"})];
    let t0 = 1_795_650_000_000i64;
    let st = fold(vec![
        {
            let mut s = started(&tasks);
            s["ts"] = json!(t0);
            s
        },
        json!({"kind": "invocation_started", "task_id": "T00", "invocation_id": "INV_T00_001",
            "attempt": 1, "prompt_tokens": 507, "ts": t0,
            "constraints": {"timeout_seconds": 150.0, "max_tokens": 4000, "temperature": 0.1},
            "quality_threshold": "C"}),
    ]);
    let figure = regex::Regex::new(r"timeout in (\d+)(.?.?)").expect("a valid pattern");
    for (w, h) in SIZES {
        for (quiet_s, dag) in [(1, None), (125, Some("⏸ T00 2m"))] {
            let mut ui = ui_at(0);
            ui.read_only = false;
            ui.engine_attached = true;
            ui.now_ms = t0 + quiet_s * 1_000;
            let s = render(&st, &mut ui, w, h);
            for c in figure.captures_iter(&s) {
                assert_eq!(&c[2], " s", "a cut figure `{}` at {w}x{h}:\n{s}", &c[0]);
                assert_eq!(c[1].parse::<i64>().ok(), Some(150 - quiet_s), "{s}");
            }
            if let Some(dag) = dag {
                assert!(s.contains(dag), "{w}x{h}:\n{s}");
                assert!(s.contains(&format!("no output for {quiet_s} s")), "{s}");
            }
            // The running form is 47 columns: at 80 the time left goes whole.
            let running = "running 1 s · output 1 s ago · timeout in 149 s";
            if quiet_s == 1 {
                assert_eq!(s.contains(running), w > 80, "{w}x{h}:\n{s}");
                assert!(s.contains("running 1 s · output 1 s ago"), "{s}");
            }
            insta::assert_snapshot!(format!("figures_whole_{quiet_s}s_{w}x{h}"), s);
        }
    }
}

#[test]
fn the_atoms_header_counts_the_rows_kept_and_the_atom_detail_wraps_at_every_size() {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        reduce(&mut st, &e);
    }
    let total = st.atoms.len();
    for (w, h) in SIZES {
        let mut ui = ui_at(0);
        ui.screen = Screen::Atoms;
        ui.atoms.grade = Some(plexus::base::protocol::Grade::A);
        let shown = plexus::tui::app::atoms_view::atom_view(&st, &ui.atoms).len();
        assert!(shown > 0 && shown < total);
        let s = render(&st, &mut ui, w, h);
        assert!(s.contains(&format!("{shown} of {total} atoms")), "{s}");
        insta::assert_snapshot!(format!("atoms_filtered_{w}x{h}"), s);
        // The atom detail: a long string wraps inside the overlay instead of being cut.
        let atom = plexus::tui::app::atoms_view::atom_view(&st, &ui.atoms)[0];
        let inv = st.atoms[atom].invocation.clone().expect("inv");
        let id = st.atoms[atom].id.clone();
        let long = format!(
            "\"content\": \"{}END\"",
            "the reverse process removes a little noise at each step ".repeat(6)
        );
        ui.docs.insert(
            plexus::tui::app::ui_state::DocKey::Atom(inv, id),
            plexus::tui::app::ui_state::Doc::Ready(long.into()),
        );
        ui.overlay = Some(plexus::tui::app::ui_state::Overlay::AtomDetail { atom, top: 0 });
        let s = render(&st, &mut ui, w, h);
        if h >= 40 {
            assert!(
                s.contains("END"),
                "the end of the long string is shown:\n{s}"
            );
        }
        insta::assert_snapshot!(format!("atom_detail_{w}x{h}"), s);
    }
}

#[test]
fn the_reason_prompt_and_the_titles_fit_at_every_size() {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        reduce(&mut st, &e);
    }
    let code = st
        .tasks
        .iter()
        .position(|t| &*t.id == "TASK_CODE_DIFF_01")
        .expect("task");
    assert!(st.tasks[code].invocations.len() >= 3);
    for (w, h) in SIZES {
        let mut ui = ui_at(code);
        ui.attempt = Some(1);
        ui.reason_for = Some((st.run_id.clone(), "TASK_VALIDATOR_DIFF_01".into()));
        ui.input = Some("it cites assets that do not exist".into());
        let s = render(&st, &mut ui, w, h);
        let status = s.lines().last().expect("status bar");
        assert!(
            status.contains("why reject") && status.contains("do not exist▏"),
            "{status}"
        );
        let titles = s.lines().nth(1).expect("titles");
        assert!(
            titles.contains("✔5"),
            "the DAG title keeps its counts: {titles}"
        );
        if w >= 120 {
            assert!(titles.contains("attempt 2/"), "{titles}");
        }
        assert!(!titles.contains('…'), "a title was cut: {titles}");
        insta::assert_snapshot!(format!("reason_prompt_{w}x{h}"), s);
        // Without a prompt the hints are whole keys, never a cut word.
        ui.input = None;
        ui.reason_for = None;
        let s = render(&st, &mut ui, w, h);
        let status = s.lines().last().expect("status bar");
        assert!(status.contains("? help · q quit"), "{status}");
        assert!(!status.contains('…'), "{status}");
    }
}

#[test]
fn with_no_run_open_the_status_bar_says_so_at_every_size() {
    let st = RunState::new();
    for (w, h) in SIZES {
        let mut ui = UiState::new(false);
        ui.screen = Screen::Runs;
        let s = render(&st, &mut ui, w, h);
        let status = s.lines().last().expect("status bar");
        assert!(status.contains("no run open"), "{status}");
        assert!(
            !status.contains("starting") && !status.contains("0:00"),
            "{status}"
        );
        insta::assert_snapshot!(format!("no_run_open_{w}x{h}"), s);
    }
}

#[test]
fn a_message_from_before_the_run_ended_gives_way_to_the_keys() {
    let mut st = RunState::new();
    for l in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let e: Envelope = serde_json::from_str(l).expect("fixture");
        reduce(&mut st, &e);
    }
    let end = st.finished_ts.expect("the demo ended");
    let flash = |at_ms: i64| plexus::tui::app::ui_state::Flash {
        text: "retrying TASK_CODE_DIFF_01".into(),
        warn: false,
        at_ms,
    };
    let mut ui = ui_at(0);
    ui.flash = Some(flash(end - 2_000));
    let s = render(&st, &mut ui, 80, 24);
    let status = s.lines().last().expect("status bar");
    assert!(!status.contains("retrying"), "{status}");
    assert!(status.contains("? help"), "{status}");
    // Said after the end, it shows.
    ui.flash = Some(flash(end + 2_000));
    let s = render(&st, &mut ui, 80, 24);
    let status = s.lines().last().expect("status bar");
    assert!(status.contains("retrying TASK_CODE_DIFF_01"), "{status}");
}
