//! Handoffs say only what is true: a tree laid out as the protocol shows it (documents
//! without `sample_id`, no `failure_summary.json`, the protocol's own problems report)
//! handed off through the browser's `E`: counts from the documents, `final_quality`
//! the mean evaluation score or null, unknown index fields null, the trigger reason
//! typed or the rule that fired; a trace's top-level tool calls drawn; the Init→Execute
//! context written by `plexus init-context` and opened like the other one.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use plexus::data::failures::{self, DocKind, DocStatus};
use plexus::tui::app::input::InputKey;
use plexus::tui::app::Action;
use plexus::tui::tree_ui::{Browser, View};

/// `scenarios/leave_application/execution_outputs/iteration_12` under `root`, with three
/// samples (BS_MT_001 and BS_MT_003 failed, BS_MT_007 passed), their traces,
/// evaluations (scores from `scores`, or none) and attributions as the protocol
/// describes them, the protocol's example problems report, and no summary.
fn protocol_tree(root: &Path, scores: Option<[f64; 3]>) -> PathBuf {
    let it = root.join("scenarios/leave_application/execution_outputs/iteration_12");
    for d in [
        "samples",
        "execution_traces",
        "evaluation_results",
        "attribution_analysis",
    ] {
        std::fs::create_dir_all(it.join(d)).expect("mkdir");
    }
    let put = |rel: String, v: Value| {
        std::fs::write(it.join(rel), serde_json::to_vec_pretty(&v).expect("json")).expect("w");
    };
    for (k, id) in ["BS_MT_001", "BS_MT_003", "BS_MT_007"].iter().enumerate() {
        let failed = k < 2;
        put(
            format!("samples/{id}.json"),
            json!({"scenario": "leave_application", "task_description": "王芳申请3天年假"}),
        );
        put(
            format!("execution_traces/{id}_trace.json"),
            json!({
                "conversation_history": [
                    {"role": "user", "content": "我想请3天年假"},
                    {"role": "assistant", "content": "好的，我先查询余额。"},
                    {"role": "user", "content": "好的"},
                    {"role": "assistant", "content": "申请已提交。"}
                ],
                "tool_calls": [
                    {"turn": 2, "tool_name": "get_leave_balance", "arguments": {"employee_id": "E1"},
                     "result": {"annual": 10}},
                    {"tool_name": "audit_log_write", "arguments": {"event": "submitted"}, "result": "ok"}
                ],
                "states": [{"turn": 4, "state": {"leave_balance": 10}}]
            }),
        );
        let mut eval = json!({
            "checker_results": [
                {"checker": "leave_balance_deducted", "passed": !failed},
                {"checker": "application_status_correct", "passed": true}
            ],
            "llm_judgment": {"verdict": if failed {"fail"} else {"pass"}, "reasoning": "…"}
        });
        if let Some(s) = scores {
            eval["overall_score"] = json!(s[k]);
        }
        put(format!("evaluation_results/{id}_eval.json"), eval);
        if failed {
            put(
                format!("attribution_analysis/{id}_attribution.json"),
                json!({"failure_type": "Layer1_BusinessRule",
                       "checkers_failed": ["leave_balance_deducted"],
                       "root_cause": "余额扣减时机未明确"}),
            );
        }
    }
    let report = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/protocol/seed002_report_layer1_problems_report.json");
    std::fs::copy(report, it.join("layer1_problems_report.json")).expect("report");
    root.join("scenarios/leave_application")
}

/// Marks every sample, presses `E`, writes to `out` with the reason left as offered
/// (`None`) or replaced by `typed`; returns the reason offered and the file.
fn hand_off(tree: &Path, out: &Path, typed: Option<&str>) -> (String, Value) {
    let mut b = Browser::new(failures::open(tree).expect("open"), 40_000);
    for _ in 0..b.rows.len() {
        b.act(Action::ViewContext);
    }
    b.act(Action::ExportHandoff);
    while b.input.as_ref().is_some_and(|(_, t)| !t.is_empty()) {
        b.input_key(InputKey::Backspace);
    }
    for c in out.to_string_lossy().chars() {
        b.input_key(InputKey::Char(c));
    }
    b.input_key(InputKey::Enter);
    b.serve_now();
    let offered = b.input.as_ref().map(|(_, t)| t.clone()).expect("asked why");
    if let Some(t) = typed {
        while b.input.as_ref().is_some_and(|(_, t)| !t.is_empty()) {
            b.input_key(InputKey::Backspace);
        }
        for c in t.chars() {
            b.input_key(InputKey::Char(c));
        }
    }
    b.input_key(InputKey::Enter);
    b.serve_now();
    let (said, _) = b.flash.clone().expect("said");
    assert!(said.starts_with("wrote "), "{said}");
    let text = std::fs::read_to_string(out).expect("written");
    (offered, serde_json::from_str(&text).expect("json"))
}

#[test]
fn counts_come_from_the_documents_not_from_the_report() {
    let d = tempfile::tempdir().expect("tmp");
    let tree = protocol_tree(d.path(), Some([0.37, 0.42, 0.91]));
    let (_, v) = hand_off(&tree, &d.path().join("ctx.json"), None);
    let s = &v["iteration_summary"];
    // Three samples on disk, two whose evaluations failed — not the report's 27 and 18.
    assert_eq!(s["total_samples"], 3, "{s}");
    assert_eq!(s["failed_samples"], 2, "{s}");
    assert_eq!(s["total_iterations"], 12, "{s}");
}

#[test]
fn final_quality_is_the_mean_evaluation_score_or_null() {
    let d = tempfile::tempdir().expect("tmp");
    let tree = protocol_tree(&d.path().join("a"), Some([0.37, 0.42, 0.91]));
    let (_, v) = hand_off(&tree, &d.path().join("a.json"), None);
    let q = v["iteration_summary"]["final_quality"].as_f64();
    assert_eq!(q, Some(0.57), "(0.37 + 0.42 + 0.91) / 3: {v}");
    // Evaluations without a score: the quality is not known, and says so.
    let tree = protocol_tree(&d.path().join("b"), None);
    let (_, v) = hand_off(&tree, &d.path().join("b.json"), None);
    let s = &v["iteration_summary"];
    assert!(
        s.get("final_quality").is_some_and(Value::is_null),
        "null, never a number made up: {s}"
    );
    assert_eq!(s["total_samples"], 3);
}

#[test]
fn index_fields_the_index_lacks_come_from_the_documents_or_are_null() {
    let d = tempfile::tempdir().expect("tmp");
    let tree = protocol_tree(d.path(), Some([0.37, 0.42, 0.91]));
    let (_, v) = hand_off(&tree, &d.path().join("ctx.json"), None);
    let entries = v["failure_samples_index"].as_array().expect("index");
    assert_eq!(entries.len(), 3);
    let e1 = &entries[0];
    assert_eq!(e1["sample_id"], "BS_MT_001");
    assert_eq!(e1["failure_type"], "Layer1_BusinessRule", "{e1}");
    assert_eq!(e1["checkers_failed"], json!(["leave_balance_deducted"]));
    assert_eq!(e1["conversation_turns"], 4);
    // No document gives a priority: null, not `medium`.
    assert!(e1["priority"].is_null(), "{e1}");
    // The passing sample has no attribution: no failure type, and its evaluation
    // says no checker failed.
    let e7 = &entries[2];
    assert!(e7["failure_type"].is_null(), "{e7}");
    assert_eq!(e7["checkers_failed"], json!([]));
    for e in entries {
        assert_ne!(e["failure_type"], "Unknown");
        assert_ne!(e["priority"], "medium");
    }
}

#[test]
fn the_trigger_reason_is_what_the_person_typed_or_the_rule_that_fired() {
    let d = tempfile::tempdir().expect("tmp");
    let tree = protocol_tree(d.path(), Some([0.37, 0.42, 0.91]));
    // The report's critical problem touches more than 30% of the samples: the rule
    // that fired is offered, and kept when the person leaves it.
    let (offered, v) = hand_off(&tree, &d.path().join("a.json"), None);
    assert!(
        offered.starts_with("critical problems affect 100% of the samples (3 of 3)"),
        "{offered}"
    );
    assert_eq!(v["trigger_reason"], offered.as_str());
    // What the person types is what the file says.
    let (_, v) = hand_off(&tree, &d.path().join("b.json"), Some("余额规则要Init明确"));
    assert_eq!(v["trigger_reason"], "余额规则要Init明确");
    // Cleared: nobody said why, so the file does not either.
    let (_, v) = hand_off(&tree, &d.path().join("c.json"), Some(""));
    assert!(
        v.get("trigger_reason").is_some_and(Value::is_null),
        "{}",
        v["trigger_reason"]
    );
}

#[test]
fn documents_without_a_sample_id_take_it_from_their_file_names() {
    let d = tempfile::tempdir().expect("tmp");
    let tree = failures::open(&protocol_tree(d.path(), Some([0.37, 0.42, 0.91]))).expect("open");
    let ids: Vec<&str> = tree.samples.iter().map(|s| &*s.id).collect();
    assert_eq!(ids, ["BS_MT_001", "BS_MT_003", "BS_MT_007"]);
    for s in &tree.samples[..2] {
        for doc in tree.load_all(s) {
            assert_eq!(doc.status, DocStatus::Ok, "{}", doc.path.display());
        }
    }
    // The passing sample has no attribution, and that is all that is amiss.
    let last = tree.load_all(&tree.samples[2]);
    assert_eq!(
        last[DocKind::Attribution.index()].status,
        DocStatus::Missing
    );
    assert_eq!(last[DocKind::Sample.index()].status, DocStatus::Ok);
}

#[test]
fn a_traces_top_level_tool_calls_are_drawn() {
    let d = tempfile::tempdir().expect("tmp");
    let mut b = Browser::new(
        failures::open(&protocol_tree(d.path(), None)).expect("open"),
        40_000,
    );
    b.open_sample(0);
    b.serve_now();
    let detail = b.detail.as_ref().expect("opened");
    assert_eq!(detail.tab, DocKind::Trace.index());
    let lines: Vec<String> = detail.lines().into_iter().map(|(l, _)| l).collect();
    let text = lines.join("\n");
    // The one tied to turn 2 under that turn, with its result…
    assert!(
        text.contains("→ get_leave_balance({\"employee_id\":\"E1\"})"),
        "{text}"
    );
    assert!(text.contains("← {\"annual\":10}"), "{text}");
    // …and the one tied to no turn after the conversation, not lost.
    assert!(
        text.contains("→ audit_log_write({\"event\":\"submitted\"})"),
        "{text}"
    );
    assert!(text.contains("← \"ok\""), "{text}");
    assert!(text.contains("2 tool calls"), "{text}");
}

#[test]
fn an_init_to_execute_context_is_written_and_opened_like_the_other_one() {
    let d = tempfile::tempdir().expect("tmp");
    let dir = d.path();
    let design = dir.join("scenarios/leave_application");
    std::fs::create_dir_all(&design).expect("mkdir");
    std::fs::write(
        design.join("BusinessRules.md"),
        "## 请假申请流程\n1. 查询余额\n",
    )
    .expect("w");
    std::fs::write(
        design.join("unified_scenario_design.yaml"),
        "scenario: leave_application\n",
    )
    .expect("w");
    std::fs::write(
        design.join("format_specifications.json"),
        "{\"sample\": {\"sample_id\": \"string\"}}",
    )
    .expect("w");
    let out = common::bin::output(common::bin::plexus(dir).args([
        "init-context",
        "生成请假申请场景的评测样本",
        "--design",
        "unified_scenario_design_path=scenarios/leave_application/unified_scenario_design.yaml",
        "--design",
        "business_rules_path=scenarios/leave_application/BusinessRules.md",
        "--design",
        "format_specifications_path=scenarios/leave_application/format_specifications.json",
        "-o",
        "handoff/init.json",
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("3 design file(s)"), "{}", out.stdout);
    let file = dir.join("handoff/init.json");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    assert_eq!(v["handoff_type"], "init_to_execute");
    assert_eq!(v["version"], "2.0");
    assert_eq!(v["user_requirement"], "生成请假申请场景的评测样本");
    // Paths relative to the file's folder, so they resolve from where it is.
    assert_eq!(
        v["design_artifacts"]["business_rules_path"],
        "../scenarios/leave_application/BusinessRules.md"
    );
    // It parses as the protocol's type.
    let _: plexus::base::protocol::handoff::InitToExecuteContext =
        serde_json::from_value(v.clone()).expect("the protocol's shape");

    // A design file that is not there is refused, naming it; nothing is written.
    let bad = common::bin::output(common::bin::plexus(dir).args([
        "init-context",
        "x",
        "--design",
        "business_rules_path=nowhere/Rules.md",
        "-o",
        "bad.json",
    ]));
    assert_ne!(bad.code, Some(0));
    assert!(bad.stderr.contains("nowhere/Rules.md"), "{}", bad.stderr);
    assert!(!dir.join("bad.json").exists());

    // Opened: the browser shows its requirement and design files; a file opens with its
    // tokens counted against the budget.
    let tree = failures::open(&file).expect("an Init→Execute context opens");
    let init = tree.init.as_ref().expect("read as one");
    assert!(init.warnings.is_empty(), "{:?}", init.warnings);
    assert_eq!(init.design.len(), 3);
    assert!(init.design.iter().all(|f| f.found.is_some()));
    let mut b = Browser::new(tree, 40_000);
    assert_eq!(b.view, View::Design);
    let screen = render(&mut b);
    for shown in [
        "Init→Execute context · 3 design file(s)",
        "requirement: 生成请假申请场景的评测样本",
        "business_rules_path           ../scenarios/leave_application/",
    ] {
        assert!(screen.contains(shown), "{shown}:\n{screen}");
    }
    let rules = init_row(&b, "business_rules_path");
    b.design.selected = rules;
    b.act(Action::Open);
    b.serve_now();
    let doc = b.design.open.as_ref().expect("opened");
    assert_eq!(doc.status, DocStatus::Ok);
    assert!(doc.tokens > 0);
    assert_eq!(b.budget.total(), doc.tokens);
    assert!(b.design.lines().iter().any(|l| l.contains("1. 查询余额")));
    assert!(render(&mut b).contains("1. 查询余额"));
    b.act(Action::Back);
    assert!(b.design.open.is_none());
    // And for scripts.
    let json = common::bin::output(common::bin::plexus(dir).args([
        "failures",
        "handoff/init.json",
        "--json",
    ]));
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let j: Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(
        j["init_context"]["user_requirement"],
        "生成请假申请场景的评测样本"
    );
    assert_eq!(
        j["init_context"]["design_files"].as_array().map(Vec::len),
        Some(3)
    );
}

fn init_row(b: &Browser, role: &str) -> usize {
    b.tree
        .init
        .as_ref()
        .and_then(|c| c.design.iter().position(|f| f.role == role))
        .expect(role)
}

fn render(b: &mut Browser) -> String {
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).expect("terminal");
    let (theme, keys) = (
        plexus::tui::ui::theme::Theme::dark(),
        plexus::tui::app::keymap::Keymap::default_keys(),
    );
    term.draw(|f| {
        let area = f.area();
        plexus::tui::tree_ui::draw::draw(f.buffer_mut(), area, b, &theme, &keys)
    })
    .expect("draw");
    common::screen::buffer_text(term.backend().buffer())
}
