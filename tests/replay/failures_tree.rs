//! Failure trees (seed 002): damaged documents are shown, not fatal; queries, folding,
//! token totals and the handoff's size check; plexus's own run written as a tree reads
//! back; `plexus failures --json` parses.

use crate::common;

use std::path::{Path, PathBuf};

use plexus::base::protocol::handoff::{FailurePriority, ProblemSeverity};
use plexus::base::tokens::TokenCounter;
use plexus::data::failures::{
    self, build_handoff, check_size, key_turns, parse_trace, write_handoff, DocKind, DocStatus,
    Filter, Folding, HandoffSpec, Row, Selector, SizeVerdict, Sort, SortKey, TokenBudget,
    DEFAULT_KEEP,
};
use plexus::data::store::Store;
use plexus::dev::gen_failures::{generate_tree, GenSpec, CONTEXT_FILE};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/failures/leave_application")
}

fn generated(dir: &Path, samples: usize, broken: usize) -> PathBuf {
    let p = dir.join("tree");
    generate_tree(
        &p,
        &GenSpec {
            samples,
            turns: 20,
            seed: 5,
            broken,
            iteration: 12,
        },
    )
    .expect("generate");
    p
}

#[test]
fn damaged_documents_are_statuses_not_errors() {
    let tree = failures::open(&fixture()).expect("open the fixture");
    assert_eq!(tree.samples.len(), 9);
    assert!(tree.warnings.is_empty(), "{:?}", tree.warnings);
    let status = |id: &str, k: DocKind| {
        let s = &tree.samples[tree.find(id).expect(id)];
        tree.load(s, k).status
    };
    assert!(matches!(
        status("BS_MT_001", DocKind::Trace),
        DocStatus::Truncated { .. }
    ));
    assert!(matches!(
        status("BS_MT_014", DocKind::Evaluation),
        DocStatus::Broken { .. }
    ));
    assert_eq!(
        status("BS_MT_010", DocKind::Attribution),
        DocStatus::Missing
    );
    assert!(
        matches!(status("BS_MT_007", DocKind::Evaluation), DocStatus::Partial { ref missing } if missing == &["checker_results"])
    );
    // Every other document is fine, and none of them stops the reader.
    let mut ok = 0;
    for s in &tree.samples {
        for d in tree.load_all(s) {
            ok += usize::from(d.status == DocStatus::Ok);
            assert!(!d.status.describe().is_empty());
        }
    }
    assert_eq!(ok, 9 * 4 - 4);

    let report = tree.load_report(None).expect("report");
    assert_eq!(report.status(), &DocStatus::Ok);
    assert!(!report.problems.is_empty());
    assert_eq!(
        report.by_severity()[0].severity,
        Some(ProblemSeverity::Critical)
    );
    let affected: u32 = report.problems.iter().map(|p| p.affected_count).sum();
    assert!(affected <= tree.samples.len() as u32);
    for p in &report.problems {
        let typical = p.typical_case_id.as_deref().expect("typical case");
        assert!(tree.find(typical).is_some(), "{typical} is in the index");
        assert_eq!(p.affected_samples.len() as u32, p.affected_count);
    }
    assert_eq!(report.modification_priority[0].priority, 1);
}

#[test]
fn a_broken_index_falls_back_to_file_names_and_bad_paths_are_refused() {
    let d = tempfile::tempdir().expect("tmp");
    let root = generated(d.path(), 12, 0);
    let it = root.join("execution_outputs/iteration_12");
    std::fs::write(
        it.join("failure_summary.json"),
        "{\"failure_samples_index\": [",
    )
    .expect("w");
    let tree = failures::open(&root).expect("open");
    assert_eq!(tree.samples.len(), 12, "every sample, from samples/");
    assert_eq!(tree.warnings.len(), 1);
    assert!(tree.warnings[0].contains("failure_summary.json"));

    let ctx = d.path().join("ctx.json");
    std::fs::write(
        &ctx,
        r#"{"handoff_type": "execute_to_init", "execution_output_dir": "nowhere",
            "failure_samples_index": [{"sample_id": "X", "sample_path": "../../etc/passwd"}, {"priority": "high"}]}"#,
    )
    .expect("w");
    let tree = failures::open(&ctx).expect("a context whose directory is gone still opens");
    assert_eq!(tree.samples.len(), 1);
    assert_eq!(tree.warnings.len(), 2, "{:?}", tree.warnings);
    let doc = tree.load(&tree.samples[0], DocKind::Sample);
    assert!(matches!(doc.status, DocStatus::Unreadable { .. }));
    assert!(failures::open(&d.path().join("missing")).is_err());
    std::fs::write(d.path().join("x.json"), "[1, 2").expect("w");
    assert!(failures::open(&d.path().join("x.json")).is_err());
}

#[test]
fn queries_filter_and_sort() {
    let d = tempfile::tempdir().expect("tmp");
    let tree = failures::open(&generated(d.path(), 300, 0)).expect("open");
    let mut q = Selector::new();
    let all = q.run(&tree, &Filter::default(), Sort::default()).to_vec();
    assert_eq!(all.len(), tree.samples.len());
    let f = Filter {
        checker: Some("leave_balance_deducted".into()),
        ..Filter::default()
    };
    let rows = q
        .run(
            &tree,
            &f,
            Sort {
                key: SortKey::Turns,
                descending: true,
            },
        )
        .to_vec();
    assert!(!rows.is_empty() && rows.len() < all.len());
    let turns: Vec<u32> = rows
        .iter()
        .map(|&r| tree.samples[r as usize].conversation_turns.unwrap_or(0))
        .collect();
    assert!(turns.windows(2).all(|w| w[0] >= w[1]));
    assert!(rows
        .iter()
        .all(|&r| tree.samples[r as usize].failed_checker("leave_balance_deducted")));
    let f = Filter {
        priority: Some(FailurePriority::High),
        search: "LAYER1_business".into(),
        ..Filter::default()
    };
    let rows = q
        .run(
            &tree,
            &f,
            Sort {
                key: SortKey::Priority,
                descending: false,
            },
        )
        .to_vec();
    assert!(rows.iter().all(|&r| {
        let s = &tree.samples[r as usize];
        s.priority == Some(FailurePriority::High)
            && s.failure_type.as_deref() == Some("Layer1_BusinessRule")
    }));
    let facets = tree.facets();
    assert_eq!(facets.priorities.iter().sum::<usize>(), tree.samples.len());
}

#[test]
fn a_long_trace_folds_to_its_ends_and_the_turns_checkers_point_at() {
    let tree = failures::open(&fixture()).expect("open");
    let s = tree
        .samples
        .iter()
        .find(|s| {
            s.conversation_turns.unwrap_or(0) >= 14
                && &*s.id != "BS_MT_001"
                && &*s.id != "BS_MT_014"
                && &*s.id != "BS_MT_010"
        })
        .expect("a long sample");
    let docs = tree.load_all(s);
    let conv = parse_trace(docs[1].value.as_ref().expect("trace"));
    assert_eq!(
        conv.turns.len() as u32,
        s.conversation_turns.expect("turns")
    );
    assert!(conv.tool_call_count() > 0);
    let keys = key_turns(&[docs[2].value.as_ref(), docs[3].value.as_ref()]);
    assert!(!keys.is_empty());
    let mut f = Folding::new(&conv, &keys, DEFAULT_KEEP);
    let visible: Vec<usize> = f.visible().collect();
    let n = conv.turns.len();
    for i in [0, 1, 2, n - 3, n - 2, n - 1] {
        assert!(visible.contains(&i), "turn position {i} visible");
    }
    for k in &keys {
        let p = conv.position(k.turn).expect("pointed turn exists");
        assert!(visible.contains(&p), "key turn {} visible", k.turn);
    }
    assert!(f.hidden() > 0);
    let folded = f
        .rows
        .iter()
        .position(|r| matches!(r, Row::Folded { .. }))
        .expect("a fold");
    assert!(f.unfold(folded));
    f.unfold_all();
    assert_eq!(f.visible().count(), n);
}

#[test]
fn token_totals_add_up_against_the_budget() {
    let tree = failures::open(&fixture()).expect("open");
    let counter = TokenCounter::default();
    let mut budget = TokenBudget::default();
    assert_eq!(budget.limit, 40_000);
    let mut expected = 0;
    for s in tree.samples.iter().take(3) {
        for d in tree.load_all(s) {
            if d.status != DocStatus::Missing {
                let text = std::fs::read(&d.path).expect("read");
                assert_eq!(d.tokens, counter.count(&String::from_utf8_lossy(&text)));
            }
            if budget.open(&d) {
                expected += d.tokens;
            }
            assert!(!budget.open(&d), "counted once");
        }
    }
    assert_eq!(budget.total(), expected);
    assert!(budget.total() > 0);
    assert_eq!(budget.remaining(), 40_000 - expected);
}

#[test]
fn a_handoff_is_built_checked_and_read_back() {
    let d = tempfile::tempdir().expect("tmp");
    let root = generated(d.path(), 200, 0);
    let tree = failures::open(&root).expect("open");
    let report = tree.load_report(None).expect("report");
    let out = d.path().join("handoff/ctx.json");
    let spec = HandoffSpec::for_tree(
        &tree,
        Some(&report),
        &out,
        Some("Critical问题占比超过30%阈值"),
    );
    assert_eq!(spec.suggestions.len(), report.problems.len().min(5));
    assert_eq!(spec.iteration_summary.total_samples, Some(200));
    let typical: Vec<u32> = report
        .problems
        .iter()
        .filter_map(|p| tree.find(p.typical_case_id.as_deref()?))
        .map(|i| i as u32)
        .collect();
    let counter = TokenCounter::default();
    let small = build_handoff(&tree, &typical, &spec);
    assert_eq!(check_size(&small, &counter).verdict, SizeVerdict::Under);
    let rows: Vec<u32> = (0..20).collect();
    let ctx = build_handoff(&tree, &rows, &spec);
    let check = write_handoff(&out, &ctx, &counter).expect("write");
    assert_eq!(check.verdict, SizeVerdict::Ok, "{check:?}");
    let all: Vec<u32> = (0..tree.samples.len() as u32).collect();
    let big = check_size(&build_handoff(&tree, &all, &spec), &counter);
    assert_eq!(big.verdict, SizeVerdict::Over);
    assert!(big.warning.expect("warning").contains("5000"));

    let back = failures::open(&out).expect("the context opens");
    assert!(back.context.as_ref().expect("context").dir_found);
    assert_eq!(back.samples.len(), 20);
    for (a, b) in back.samples.iter().zip(&tree.samples) {
        assert_eq!(a.id, b.id);
        assert_eq!(
            back.load(a, DocKind::Trace).value,
            tree.load(b, DocKind::Trace).value
        );
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("read")).expect("json");
    for k in [
        "version",
        "handoff_type",
        "timestamp",
        "execution_output_dir",
        "trigger_reason",
        "iteration_summary",
        "failure_samples_index",
        "layer1_problems_report_path",
        "modification_suggestions_summary",
    ] {
        assert!(v.get(k).is_some(), "{k}");
    }
    assert_eq!(v["handoff_type"], "execute_to_init");
    // The generator's own context file opens too.
    assert!(!failures::open(&root.join(CONTEXT_FILE))
        .expect("open")
        .samples
        .is_empty());
}

#[test]
fn a_run_written_as_a_tree_reads_back_and_json_lists_parse() {
    let d = tempfile::tempdir().expect("tmp");
    let dir = d.path();
    let out = common::bin::output(common::bin::plexus(dir).args([
        "--db",
        "a.db",
        "demo",
        "--chunk-ms",
        "0",
        "--headless",
    ]));
    // The demo ends awaiting review: its validator stops for a person (E007).
    assert_eq!(out.code, Some(6), "demo: {}", out.stderr);
    let out = common::bin::output(common::bin::plexus(dir).args([
        "--db",
        "a.db",
        "export-failures",
        "latest",
        "tree",
    ]));
    assert_eq!(out.code, Some(0), "export: {}", out.stderr);
    let said = out.stdout.clone();
    let again = common::bin::output(common::bin::plexus(dir).args([
        "--db",
        "a.db",
        "export-failures",
        "latest",
        "tree",
    ]));
    assert_ne!(again.code, Some(0), "an existing tree is not overwritten");

    let store = Store::open(&dir.join("a.db")).expect("store");
    let run = store.run("latest").expect("run");
    // The Failures screen's rows of the run: failed, timed out or partial (a retried
    // attempt is always one of those).
    let rows = store.failed_invocations(Some(&run.run_id)).expect("rows");
    assert!(!rows.is_empty(), "the demo has failures");
    let tree = failures::open(&dir.join("tree")).expect("open the export");
    assert!(tree.warnings.is_empty(), "{:?}", tree.warnings);
    // Samples are named by task and attempt, so two of them never look alike.
    let mut got: Vec<String> = tree.samples.iter().map(|s| s.id.to_string()).collect();
    let mut want: Vec<String> = rows
        .iter()
        .map(|r| format!("{}_attempt{}", r.task_id, r.attempt))
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    // The command counts samples, and the invocations they come from.
    assert!(
        said.contains(&format!("{} sample(s)", rows.len())),
        "{said}"
    );
    for s in &tree.samples {
        for doc in tree.load_all(s) {
            assert_eq!(doc.status, DocStatus::Ok, "{}", doc.path.display());
        }
        let trace = tree.load(s, DocKind::Trace);
        let conv = parse_trace(trace.value.as_ref().expect("trace"));
        assert_eq!(conv.turns.len(), 3);
        assert_eq!(conv.turns[2].role, "assistant");
        assert!(trace.value.as_ref().expect("v").get("request").is_some());
    }
    let report = tree.load_report(None).expect("report");
    assert_eq!(report.status(), &DocStatus::Ok);
    let affected: u32 = report.problems.iter().map(|p| p.affected_count).sum();
    assert_eq!(
        affected as usize,
        rows.len(),
        "every failure is under one cause"
    );
    // The demo's plan is written mostly in English: so is its problems report.
    let raw: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.join("tree/execution_outputs/iteration_1/layer1_problems_report.json"),
        )
        .expect("the report"),
    )
    .expect("JSON");
    let problems = raw["layer1_problems"].as_array().expect("problems");
    for p in problems {
        let text = format!("{}{}", p["title"], p["description"]);
        assert!(
            !text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{text}"
        );
        assert!(
            want.iter().any(|w| p["typical_case_id"] == w.as_str()),
            "{}",
            p["typical_case_id"]
        );
    }
    assert_eq!(
        tree.current().and_then(|i| i.failed_samples),
        Some(rows.len() as u32)
    );

    let json = |args: &[&str]| -> serde_json::Value {
        let out = common::bin::output(common::bin::plexus(dir).args(args));
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        serde_json::from_str(&out.stdout).expect("JSON")
    };
    let v = json(&["failures", "tree", "--json"]);
    assert_eq!(v["samples"].as_array().expect("samples").len(), rows.len());
    let v = json(&["--db", "a.db", "failures", &run.run_id, "--json"]);
    assert_eq!(v["run_id"], run.run_id.as_str());
    let listed = v["failures"].as_array().expect("failures");
    assert_eq!(listed.len(), rows.len());
    for k in [
        "run_id",
        "task_id",
        "attempt",
        "attempts",
        "agent",
        "status",
        "error_codes",
        "message",
        "grade",
        "started_at",
        "retried",
    ] {
        assert!(listed[0].get(k).is_some(), "{k}");
    }
    // The same rows as the Failures screen, in its order (newest first).
    assert_eq!(
        v["failures"],
        serde_json::to_value(&rows).expect("rows as JSON")
    );
    let v = json(&["--db", "a.db", "failures", "--json"]);
    assert!(v["run_id"].is_null());
    assert_eq!(
        v["failures"],
        serde_json::to_value(store.failed_invocations(None).expect("all")).expect("JSON")
    );
    let screen =
        common::bin::output(common::bin::plexus(dir).args(["--db", "a.db", "failures", "tree"]));
    // Without a terminal the browser cannot open; it says what to use instead.
    assert_ne!(screen.code, Some(0));
    assert!(
        screen.stderr.contains("needs a terminal"),
        "{}",
        screen.stderr
    );
}

/// Handing back from a context file keeps the figures that file gives: its layer counts
/// (no file of the iteration says them), and a quality (here the evaluations' own mean,
/// as every sample has one).
#[test]
fn a_handoff_read_from_a_context_keeps_its_layer_counts_and_a_quality() {
    let d = tempfile::tempdir().expect("tmp");
    let root = generated(d.path(), 40, 0);
    let tree = failures::open(&root).expect("open");
    let out = d.path().join("handoff/ctx.json");
    let mut spec = HandoffSpec::for_tree(&tree, None, &out, Some("three layers tried"));
    spec.iteration_summary.final_quality = Some(0.67);
    spec.iteration_summary.layer2_iterations = Some(2);
    spec.iteration_summary.layer3_iterations = Some(1);
    let rows: Vec<u32> = (0..10).collect();
    write_handoff(
        &out,
        &build_handoff(&tree, &rows, &spec),
        &TokenCounter::default(),
    )
    .expect("write");
    let back = failures::open(&out).expect("the context opens");
    let again = HandoffSpec::for_tree(&back, None, &d.path().join("ctx2.json"), None);
    let s = &again.iteration_summary;
    assert_eq!(
        (s.layer2_iterations, s.layer3_iterations),
        (Some(2), Some(1)),
        "{s:?}"
    );
    assert!(s.final_quality.is_some(), "{s:?}");
    assert_eq!(s.total_samples, spec.iteration_summary.total_samples);
}
