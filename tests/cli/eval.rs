//! `plexus eval` end to end on the real binary: the fixture eval scored, its tree written
//! while it runs and equal to `eval export-tree` after; a kill -9 and the same command
//! again with no finished sample invoked twice; rerun, rescore and compare; a spec whose
//! placeholders cannot be resolved refused before anything runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::common::bin::{output, plexus, Running};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture eval copied into `dir`.
fn fixture(dir: &Path) -> PathBuf {
    for f in ["arith.eval.json", "answer_plan.json", "arith.jsonl"] {
        std::fs::copy(root().join("fixtures/eval").join(f), dir.join(f)).expect("copy fixture");
    }
    dir.join("arith.eval.json")
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn db(dir: &Path) -> Connection {
    Connection::open(dir.join("e.db")).expect("open the database")
}

fn count(dir: &Path, sql: &str) -> i64 {
    db(dir).query_row(sql, [], |r| r.get(0)).unwrap_or(-1)
}

fn eval_cmd(dir: &Path, pace: &[&str], extra: &[&str]) -> std::process::Command {
    let mut c = plexus(dir);
    c.args(["--db", "e.db", "eval", "arith.eval.json", "--out", "tree"])
        .args(pace)
        .args(extra);
    c
}

/// The fixture eval started at a slow pace, once `n` attempts are stored.
fn slow_eval_scored(dir: &Path, n: i64) -> Running {
    let mut run = Running::spawn(&mut eval_cmd(dir, &SLOW, &[]), dir.join("1.err"));
    let end = Instant::now() + Duration::from_secs(60);
    while count(dir, "SELECT COUNT(*) FROM eval_attempts") < n {
        assert!(run.running(), "ended early: {}", run.stderr());
        assert!(Instant::now() < end, "nothing scored: {}", run.stderr());
        std::thread::sleep(Duration::from_millis(10));
    }
    run
}

const FAST: [&str; 4] = ["--chunk-ms", "0", "--first-chunk-ms", "0"];
const SLOW: [&str; 6] = [
    "--chunk-ms",
    "30",
    "--first-chunk-ms",
    "150",
    "--concurrency",
    "2",
];

#[test]
fn an_eval_writes_its_tree_as_samples_finish_and_export_tree_writes_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let mut run = Running::spawn(
        &mut eval_cmd(dir.path(), &SLOW, &["--json"]),
        dir.path().join("eval.err"),
    );
    let it = dir.path().join("tree/execution_outputs/iteration_1");
    // Mid-run: some samples are scored and their documents are on disk, others not yet.
    let end = Instant::now() + Duration::from_secs(60);
    let mid = loop {
        let evals = std::fs::read_dir(it.join("evaluation_results"))
            .map(|d| d.count())
            .unwrap_or(0);
        if (1..12).contains(&evals) {
            break evals;
        }
        assert!(run.running(), "the eval ended before it was seen mid-way");
        assert!(Instant::now() < end, "no sample scored: {}", run.stderr());
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(mid < 12);
    assert_eq!(
        std::fs::read_dir(it.join("samples"))
            .map(|d| d.count())
            .unwrap_or(0),
        12,
        "every sample's document is written when it is dispatched"
    );
    let one = std::fs::read_dir(it.join("evaluation_results"))
        .expect("dir")
        .flatten()
        .next()
        .expect("one evaluation");
    let doc = json_of(&std::fs::read_to_string(one.path()).expect("read"));
    assert!(doc["sample_id"].is_string() && doc["epochs"][0]["checker_results"].is_array());
    let status = run.wait(Duration::from_secs(120));
    assert_eq!(status.code(), Some(0), "{}", run.stderr());
    let report = json_of(&run.stdout());
    let counts = &report["counts"];
    let failed = counts["failed"].as_u64().unwrap_or(99);
    assert_eq!(
        counts["passed"].as_u64().unwrap_or(0) + failed + counts["error"].as_u64().unwrap_or(0),
        12
    );
    // The tree: every sample has its three documents, every failed one an attribution,
    // and the summary lists exactly the failed ones.
    let tree = crate::common::bin::tree_files(&it);
    for kind in ["samples", "execution_traces", "evaluation_results"] {
        assert_eq!(
            tree.keys().filter(|k| k.starts_with(kind)).count(),
            12,
            "{kind}"
        );
    }
    let attributions = tree
        .keys()
        .filter(|k| k.starts_with("attribution_analysis"))
        .count();
    assert_eq!(attributions as u64, failed);
    let summary = json_of(&String::from_utf8_lossy(&tree["failure_summary.json"]));
    assert_eq!(summary["failed_samples"].as_u64(), Some(failed));
    assert_eq!(
        summary["failure_samples_index"].as_array().map(Vec::len),
        Some(failed as usize)
    );
    let handoff = json_of(
        &std::fs::read_to_string(dir.path().join("tree/execute_to_init_context.json"))
            .expect("handoff"),
    );
    let quality = handoff["iteration_summary"]["final_quality"]
        .as_f64()
        .unwrap_or(-1.0);
    assert!((quality - (12 - failed) as f64 / 12.0).abs() < 1e-9);
    // The same tree, written again from the database.
    let o =
        output(plexus(dir.path()).args(["--db", "e.db", "eval", "export-tree", "latest", "again"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let whole = crate::common::bin::tree_files(&dir.path().join("tree"));
    let again = crate::common::bin::tree_files(&dir.path().join("again"));
    assert_eq!(
        whole.keys().collect::<Vec<_>>(),
        again.keys().collect::<Vec<_>>()
    );
    for (k, v) in &whole {
        assert!(again[k] == *v, "{k} differs");
    }
    // `plexus failures DIR` opens it.
    let o = output(plexus(dir.path()).args(["failures", "tree", "--json"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        json_of(&o.stdout)["samples"].as_array().map(Vec::len),
        Some(failed as usize)
    );
}

#[test]
fn kill_9_mid_eval_then_the_same_command_goes_on_without_invoking_a_finished_sample_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let mut run = slow_eval_scored(dir.path(), 3);
    nix::sys::signal::kill(run.pid(), nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    run.wait(Duration::from_secs(10));
    let calls_of = |dir: &Path| -> BTreeMap<String, i64> {
        let c = db(dir);
        let mut st = c
            .prepare(
                "SELECT t.task_id, (SELECT COUNT(*) FROM invocations i WHERE i.run_id = t.run_id AND i.task_id = t.task_id)
                 FROM tasks t WHERE t.status IN ('success', 'partial', 'failed', 'timeout', 'blocked')",
            )
            .expect("query");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let before = calls_of(dir.path());
    assert!(before.len() >= 3 && before.len() < 12, "{before:?}");
    // A scored sample whose documents the kill kept from the disk (the tree writer was
    // behind): the resumed eval writes them.
    let it = dir.path().join("tree/execution_outputs/iteration_1");
    let scored: String = db(dir.path())
        .query_row(
            "SELECT file_id FROM eval_samples WHERE status <> 'pending' ORDER BY ord LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("a scored sample");
    for d in ["execution_traces", "evaluation_results"] {
        for e in std::fs::read_dir(it.join(d)).expect("dir").flatten() {
            if e.file_name().to_string_lossy().starts_with(&scored) {
                std::fs::remove_file(e.path()).expect("rm");
            }
        }
    }
    let o = output(&mut eval_cmd(dir.path(), &FAST, &["--json"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("continuing it"), "{}", o.stderr);
    let after = calls_of(dir.path());
    for (task, n) in &before {
        assert_eq!(after.get(task), Some(n), "{task} was invoked again");
    }
    assert_eq!(count(dir.path(), "SELECT COUNT(*) FROM evals"), 1);
    assert_eq!(
        count(
            dir.path(),
            "SELECT COUNT(*) FROM eval_samples WHERE status = 'pending'"
        ),
        0
    );
    assert_eq!(count(dir.path(), "SELECT COUNT(*) FROM eval_attempts"), 12);
    assert_eq!(json_of(&o.stdout)["counts"]["pending"], 0);
    // The resumed eval's tree has every scored sample: the same as an export.
    let o =
        output(plexus(dir.path()).args(["--db", "e.db", "eval", "export-tree", "latest", "again"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        crate::common::bin::tree_files(&dir.path().join("tree")),
        crate::common::bin::tree_files(&dir.path().join("again"))
    );
}

#[test]
fn rerun_runs_only_the_failed_samples_rescore_calls_no_model_and_compare_counts_the_flips() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let o = output(&mut eval_cmd(dir.path(), &FAST, &["--json"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let parent = json_of(&o.stdout);
    let parent_id = parent["eval"]["eval_id"].as_str().unwrap_or("").to_string();
    let failed = parent["counts"]["failed"].as_u64().unwrap_or(0);
    assert!(failed > 0, "the fixture has failing samples");
    // Rerun: a child whose run holds only the failed samples; the rest inherited.
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "rerun",
        &parent_id,
        "--failing",
        "--json",
    ]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let child = json_of(&o.stdout);
    assert_eq!(child["eval"]["kind"], "rerun");
    assert_eq!(child["counts"]["pending"], 0);
    let child_run = child["eval"]["run_id"].as_str().unwrap_or("").to_string();
    let tasks_in = count(
        dir.path(),
        &format!("SELECT COUNT(*) FROM tasks WHERE run_id = '{child_run}'"),
    );
    assert_eq!(tasks_in as u64, failed);
    let inherited = count(
        dir.path(),
        &format!(
            "SELECT COUNT(*) FROM eval_samples WHERE eval_id = '{}' AND inherited_from = '{parent_id}'",
            child["eval"]["eval_id"].as_str().unwrap_or("")
        ),
    );
    assert_eq!(inherited as u64, 12 - failed);
    // Rescore with a looser tolerance: no call, and every sample passes it.
    std::fs::write(
        dir.path().join("loose.json"),
        r#"[{"name": "confidence", "kind": "numeric", "path": "$.atoms[0].confidence", "value": 0.8, "abs_tol": 0.3}]"#,
    )
    .expect("write");
    let calls = count(dir.path(), "SELECT COUNT(*) FROM invocations");
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "rescore",
        &parent_id,
        "--checks",
        "loose.json",
        "--json",
    ]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(count(dir.path(), "SELECT COUNT(*) FROM invocations"), calls);
    let rescored = json_of(&o.stdout);
    assert_eq!(rescored["counts"]["passed"], 12);
    let id = rescored["eval"]["eval_id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // Compare: every sample that failed `confidence` flipped to passing; the exact
    // McNemar p is 2 × 0.5^n for n flips one way and none the other.
    let o = output(
        plexus(dir.path()).args(["--db", "e.db", "eval", "compare", &parent_id, &id, "--json"]),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let cmp = json_of(&o.stdout);
    let checks = cmp["comparison"]["checks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let conf = checks
        .iter()
        .find(|c| c["check"] == "confidence")
        .expect("confidence compared");
    let flips = conf["improved"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(flips as u64, failed);
    assert_eq!(conf["regressed"].as_array().map(Vec::len), Some(0));
    let p = conf["p"].as_f64().unwrap_or(-1.0);
    assert!(
        (p - (2.0 * 0.5f64.powi(flips as i32)).min(1.0)).abs() < 1e-12,
        "{p}"
    );
    let grade = checks
        .iter()
        .find(|c| c["check"] == "grade")
        .expect("grade listed");
    assert_eq!(
        grade["compared"], false,
        "a check only one side has is not compared"
    );
    // A gate on a check that got better is not a regression.
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "compare",
        &parent_id,
        &id,
        "--gate",
        "confidence",
    ]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // The table gives each side's interval, as the JSON does, and no p of 0.
    let row = o
        .stdout
        .lines()
        .find(|l| l.starts_with("confidence"))
        .unwrap_or_else(|| panic!("no confidence row:\n{}", o.stdout));
    assert_eq!(row.matches('[').count(), 3, "{row}");
    assert!(!row.contains("0.000"), "{row}");
    // The other way round, it is.
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "compare",
        &id,
        &parent_id,
        "--gate",
        "confidence",
    ]));
    let significant = p < 0.05;
    assert_eq!(
        o.code,
        Some(if significant { 8 } else { 0 }),
        "{}",
        o.stdout
    );
}

#[test]
fn a_spec_whose_placeholders_cannot_be_resolved_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let plan = dir.path().join("answer_plan.json");
    let text = std::fs::read_to_string(&plan).expect("plan");
    std::fs::write(&plan, text.replace("{{metadata.level}}", "{{vars.unit}}")).expect("write");
    let o = output(&mut eval_cmd(dir.path(), &FAST, &[]));
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.stderr.contains("q1") && o.stderr.contains("tasks[answer].context"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("vars.unit"), "{}", o.stderr);
    assert!(
        !dir.path().join("e.db").exists() || count(dir.path(), "SELECT COUNT(*) FROM runs") == 0
    );
    // The expected value never reaches an agent: a plan that asks for it is refused.
    std::fs::write(&plan, text.replace("{{sample.input}}", "{{expected}}")).expect("write");
    let o = output(&mut eval_cmd(dir.path(), &FAST, &[]));
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("expected"), "{}", o.stderr);
    // Bad filters name themselves.
    std::fs::write(&plan, &text).expect("write");
    for (args, says) in [
        (vec!["--limit", "5-2"], "--limit"),
        (vec!["--sample-id", "nope"], "nope"),
        (vec!["--where", "level=hard"], "meta."),
        (vec!["--fail-under", "nope=0.5"], "no check"),
        (vec!["--reducer", "at_least:3"], "never pass"),
    ] {
        let o = output(&mut eval_cmd(dir.path(), &FAST, &args));
        assert_eq!(o.code, Some(2), "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(says), "{args:?}: {}", o.stderr);
    }
}

#[test]
fn epochs_reduce_per_sample_and_a_missed_gate_has_its_own_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let o = output(&mut eval_cmd(
        dir.path(),
        &FAST,
        &[
            "--epochs",
            "3",
            "--reducer",
            "all",
            "--where",
            "meta.level=hard",
            "--fail-under",
            "confidence=1",
            "--json",
        ],
    ));
    assert_eq!(o.code, Some(8), "{}", o.stderr);
    let r = json_of(&o.stdout);
    assert_eq!(
        r["counts"]["passed"].as_u64().unwrap_or(0) + r["counts"]["failed"].as_u64().unwrap_or(0),
        4
    );
    assert_eq!(count(dir.path(), "SELECT COUNT(*) FROM eval_attempts"), 12);
    // With `all`, a sample passes only when each of its three epochs passed.
    let c = db(dir.path());
    let mut st = c
        .prepare(
            "SELECT s.status, (SELECT COUNT(*) FROM eval_attempts a WHERE a.eval_id = s.eval_id AND a.sample_id = s.sample_id AND a.status = 'passed')
             FROM eval_samples s",
        )
        .expect("query");
    let rows: Vec<(String, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    for (status, passed) in rows {
        assert_eq!(
            status == "passed",
            passed == 3,
            "{status} with {passed} passing epochs"
        );
    }
    assert!(r["gates_missed"].as_array().is_some_and(|g| !g.is_empty()));
}

/// A model server written here, not by plexus's mock: it answers q1 with a valid answer
/// written otherwise (the summary first, the atom's fields in another order, fields
/// plexus does not know), q2 with HTTP 500 every time, and q3 with prose that is not
/// JSON.
fn raw_model_server() -> String {
    crate::common::raw_http::serve(|req| {
        let task = req
            .headers
            .get("x-plexus-task")
            .cloned()
            .unwrap_or_default();
        let (status, content) = if task.starts_with("q1/") {
            let answer = serde_json::json!({
                "summary": "2 + 2 = 4",
                "reasoning": "counted twice",
                "atoms": [{
                    "confidence": 0.8,
                    "atom_type": "knowledge_atoms",
                    "content": {"note": "2 + 2 = 4", "answer": 4},
                    "asset_id": "ATOM_Q1_01",
                    "provenance": {"atom_path": "/atoms/atom/ATOM_Q1_01.json", "paper_location": "Page 1", "paper_id": "ArXiv:2406.01234"},
                    "data_status": "Verified_Source_Anchored",
                    "category": "Atom_Ops",
                    "metadata": {"tags": ["#ATOM"], "version": "1.0", "created_by": "Scholar_Internalizer", "created_at": "2026-11-28T00:00:00Z"},
                    "delta_audit": {"contradiction_marked": false, "existing_assets": []},
                    "unknown_field": [1, 2, 3]
                }]
            });
            (200, answer.to_string())
        } else if task.starts_with("q2/") {
            (500, String::new())
        } else {
            (200, "The answer is 3, of course.".to_string())
        };
        (status, content)
    })
}

#[test]
fn a_model_that_answers_otherwise_is_scored_and_one_that_cannot_be_reached_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let url = raw_model_server();
    std::fs::write(
        dir.path().join("plexus.toml"),
        format!("[providers.raw]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\nstream = false\n"),
    )
    .expect("config");
    let o = output(
        plexus(dir.path())
            .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
            .args([
                "--db",
                "e.db",
                "eval",
                "arith.eval.json",
                "--out",
                "tree",
                "--provider",
                "raw",
                "--limit",
                "3",
                "--retry-delay-div",
                "1000",
                "--timeout-scale",
                "0.2",
                "--json",
            ]),
    );
    // The spec's gate on `format` (0.9) is missed: exit 8.
    assert_eq!(o.code, Some(8), "{}", o.stderr);
    let r = json_of(&o.stdout);
    let status_of = |id: &str| -> String {
        db(dir.path())
            .query_row(
                "SELECT status FROM eval_samples WHERE sample_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap_or_default()
    };
    assert_eq!(status_of("q1"), "passed", "{}", o.stderr);
    assert_eq!(
        status_of("q2"),
        "error",
        "a server that fails is not the model's error"
    );
    assert_eq!(
        status_of("q3"),
        "failed",
        "prose where JSON was asked is a wrong answer"
    );
    assert_eq!(r["counts"]["error"], 1);
    // The error is in every denominator: format passed on q1 only, of 3.
    let format = r["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["check"] == "format"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (format["passed"].as_u64(), format["of"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(format["errors"].as_u64(), Some(1));
    let attribution =
        json_of(
            &std::fs::read_to_string(dir.path().join(
                "tree/execution_outputs/iteration_1/attribution_analysis/q2_attribution.json",
            ))
            .expect("q2's attribution"),
        );
    assert_eq!(attribution["failure_type"], "model_not_reached");
}

#[test]
fn ctrl_c_stops_an_eval_resumable_and_eval_resume_finishes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let mut run = slow_eval_scored(dir.path(), 2);
    nix::sys::signal::kill(run.pid(), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = run.wait(Duration::from_secs(60));
    assert_eq!(status.code(), Some(3), "{}", run.stderr());
    assert!(run.stderr().contains("eval resume"), "{}", run.stderr());
    let (status, pending): (String, i64) = db(dir.path())
        .query_row(
            "SELECT status, (SELECT COUNT(*) FROM eval_samples WHERE status = 'pending') FROM evals",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the eval");
    assert_eq!(status, "interrupted");
    assert!(pending > 0);
    // The handoff of a stopped eval says it is incomplete.
    let handoff = json_of(
        &std::fs::read_to_string(dir.path().join("tree/execute_to_init_context.json"))
            .expect("handoff"),
    );
    assert_eq!(handoff["metadata"]["incomplete"], true);
    let o = output(plexus(dir.path()).args(["--db", "e.db", "eval", "resume", "latest", "--json"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(json_of(&o.stdout)["counts"]["pending"], 0);
    assert_eq!(json_of(&o.stdout)["eval"]["status"], "finished");
}

#[test]
fn an_eval_whose_run_ended_before_its_scoring_is_scored_on_resume_without_a_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let o = output(&mut eval_cmd(dir.path(), &FAST, &["--json"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let before = json_of(&o.stdout);
    // What a crash while the scorer was behind its finished run leaves: the run ended,
    // five samples not scored, the eval not finished.
    let c = db(dir.path());
    c.execute_batch(
        "DELETE FROM eval_checks WHERE sample_id IN ('q1', 'q2', 'q3', 'q4', 'q5');
         DELETE FROM eval_attempts WHERE sample_id IN ('q1', 'q2', 'q3', 'q4', 'q5');
         UPDATE eval_samples SET status = 'pending', score = NULL WHERE sample_id IN ('q1', 'q2', 'q3', 'q4', 'q5');
         UPDATE evals SET status = 'interrupted', finished_at = NULL;",
    )
    .expect("set back");
    drop(c);
    let calls = count(dir.path(), "SELECT COUNT(*) FROM invocations");
    let o = output(plexus(dir.path()).args(["--db", "e.db", "eval", "resume", "latest", "--json"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr.contains("without running the plan again"),
        "{}",
        o.stderr
    );
    assert_eq!(count(dir.path(), "SELECT COUNT(*) FROM invocations"), calls);
    let after = json_of(&o.stdout);
    assert_eq!(
        after["counts"], before["counts"],
        "the same results as before"
    );
    assert_eq!(after["eval"]["status"], "finished");
}

#[test]
fn estimate_counts_every_prompt_as_the_run_then_sends_it_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    std::fs::write(
        dir.path().join("prices.toml"),
        "[prices.\"simulated\"]\ninput = 2.0\noutput = 8.0\n",
    )
    .expect("prices");
    let o = output(
        eval_cmd(dir.path(), &FAST, &["--estimate", "--json"])
            .env("PLEXUS_CONFIG", dir.path().join("prices.toml")),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        !dir.path().join("e.db").exists(),
        "an estimate writes nothing"
    );
    assert!(
        !dir.path().join("tree").exists(),
        "an estimate writes nothing"
    );
    let e = json_of(&o.stdout);
    assert_eq!(e["plan"]["calls"], 12);
    let prompts = e["plan"]["prompt_tokens"].as_u64().expect("prompt tokens");
    let max_out = e["plan"]["max_output_tokens"].as_u64().expect("max output");
    // The cost range: prompts alone at $2 per million, up to every answer at its max.
    let cost = &e["plan_cost_usd"];
    let lo = prompts as f64 * 2.0 / 1e6;
    let hi = lo + max_out as f64 * 8.0 / 1e6;
    assert!(
        (cost["prompts_only"].as_f64().unwrap_or(0.0) - lo).abs() < 1e-9,
        "{cost}"
    );
    assert!(
        (cost["at_most"].as_f64().unwrap_or(0.0) - hi).abs() < 1e-9,
        "{cost}"
    );
    // The run sends exactly the prompts counted.
    let o = output(&mut eval_cmd(dir.path(), &FAST, &[]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let sent = count(dir.path(), "SELECT SUM(prompt_tokens) FROM invocations");
    assert_eq!(sent as u64, prompts);
}

#[test]
fn a_sample_reference_reaches_the_agent_as_an_input_not_in_the_instruction() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    std::fs::write(
        dir.path().join("answer_plan.json"),
        r#"{"plan_id": "EVAL_REF", "tasks": [{"task_id": "answer", "agent": "Scholar_Internalizer",
            "instruction": "Answer the question in your inputs",
            "data_references": [{"ref_type": "sample", "path": "$.input"}],
            "output_requirements": {"atom_type": "knowledge_atoms", "quality_threshold": "C", "max_atoms": 2}}]}"#,
    )
    .expect("plan");
    let o = output(&mut eval_cmd(
        dir.path(),
        &FAST,
        &["--limit", "2", "--json"],
    ));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let request: String = db(dir.path())
        .query_row(
            "SELECT request_json FROM invocations WHERE task_id = 'q1/answer'",
            [],
            |r| r.get(0),
        )
        .expect("q1's request");
    let req = json_of(&request);
    let inputs = req["user_prompt"]["context"]["inputs"].to_string();
    assert!(inputs.contains("What is 2 + 2?"), "{request}");
    assert!(
        !req["user_prompt"]["instruction"]
            .as_str()
            .unwrap_or("")
            .contains("2 + 2"),
        "{request}"
    );
    // A plain run of a plan with a sample reference is refused: only an eval fills it.
    let o =
        output(plexus(dir.path()).args(["--db", "r.db", "run", "answer_plan.json", "--headless"]));
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("plexus eval"), "{}", o.stderr);
}

#[test]
fn a_sample_too_large_to_send_is_an_error_named_by_the_estimate_not_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    // The third question is 120,000 words: its prompt is over the agent's 100,000-token
    // window, so it is never sent.
    let big = "seven ".repeat(120_000);
    let data = format!(
        "{}\n{}\n{}\n",
        r#"{"id": "q1", "input": "What is 2 + 2?", "expected": "4", "metadata": {"level": "easy"}}"#,
        r#"{"id": "q2", "input": "What is 7 * 6?", "expected": "42", "metadata": {"level": "easy"}}"#,
        serde_json::json!({"id": "huge", "input": big, "expected": "7", "metadata": {"level": "hard"}})
    );
    std::fs::write(dir.path().join("arith.jsonl"), data).expect("dataset");
    let o = output(&mut eval_cmd(dir.path(), &FAST, &["--estimate"]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.contains("would not be sent: 1 call(s)") && o.stdout.contains("huge/answer"),
        "the estimate names the sample that does not fit:\n{}",
        o.stdout
    );
    let o = output(&mut eval_cmd(dir.path(), &FAST, &["--json"]));
    let r = json_of(&o.stdout);
    assert_eq!(r["counts"]["error"], 1, "{}", o.stdout);
    let status: String = db(dir.path())
        .query_row(
            "SELECT status FROM eval_samples WHERE sample_id = 'huge'",
            [],
            |r| r.get(0),
        )
        .expect("the sample");
    assert_eq!(status, "error", "never sent: an error, not a failure");
    // Every rate counts it in its denominator, as an error.
    for c in r["checks"].as_array().expect("checks") {
        assert_eq!(c["of"], 3, "{c}");
        assert_eq!(c["errors"], 1, "{c}");
    }
    assert_eq!(
        count(
            dir.path(),
            "SELECT COUNT(*) FROM invocations WHERE task_id = 'huge/answer'"
        ),
        0,
        "nothing was sent for it"
    );
}

#[test]
fn a_regex_a_schema_or_a_path_that_cannot_compile_is_refused_when_the_spec_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = fixture(dir.path());
    let good: Value = json_of(&std::fs::read_to_string(&spec).expect("spec"));
    let cases = [
        (
            json!({"name": "r", "kind": "regex", "pattern": "(unclosed"}),
            "the pattern does not compile",
        ),
        (
            json!({"name": "s", "kind": "json_schema", "schema": {"type": 5}}),
            "the schema does not compile",
        ),
        (
            json!({"name": "p", "kind": "jsonpath", "path": "$["}),
            "the path `$[` does not parse",
        ),
        (
            json!({"name": "e", "kind": "exact", "path": "$.a[?(@.x ==]"}),
            "does not parse",
        ),
        // Nested in another check, too.
        (
            json!({"name": "n", "kind": "not", "check": {"kind": "regex", "pattern": "a{99999999}"}}),
            "the pattern does not compile",
        ),
    ];
    for (check, says) in cases {
        let mut bad = good.clone();
        bad["checks"]
            .as_array_mut()
            .expect("checks")
            .push(check.clone());
        std::fs::write(&spec, bad.to_string()).expect("write");
        let o = output(&mut eval_cmd(dir.path(), &FAST, &[]));
        assert_eq!(o.code, Some(2), "{check}: {}", o.stderr);
        assert!(o.stderr.contains(says), "{check}: {}", o.stderr);
        assert!(
            o.stderr.contains("arith.eval.json"),
            "the file is named: {}",
            o.stderr
        );
        assert!(
            !dir.path().join("e.db").exists()
                || count(dir.path(), "SELECT COUNT(*) FROM runs") == 0,
            "nothing ran"
        );
    }
}

#[test]
fn several_spec_files_are_refused_with_one_clear_sentence() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    std::fs::copy(
        dir.path().join("arith.eval.json"),
        dir.path().join("other.eval.json"),
    )
    .expect("copy");
    // What `plexus eval *.eval.json` gives a shell.
    let o = output(plexus(dir.path()).args([
        "--db",
        "e.db",
        "eval",
        "arith.eval.json",
        "other.eval.json",
    ]));
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.stderr.contains("takes one spec file")
            && o.stderr.contains("arith.eval.json, other.eval.json"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("subcommand"), "{}", o.stderr);
    assert!(!dir.path().join("e.db").exists(), "nothing ran");
}

/// An eval into a `--out` whose iterations another database wrote says so: its number
/// follows theirs (it overwrites none) and none of them is its parent; the first eval
/// into an empty tree gets no such note.
#[test]
fn an_eval_into_a_tree_another_database_wrote_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let run = |db: &str| {
        let mut c = plexus(dir.path());
        c.args(["--db", db, "eval", "arith.eval.json", "--out", "tree"])
            .args(FAST);
        output(&mut c)
    };
    let first = run("a.db");
    assert!(first.code.is_some(), "{}", first.stderr);
    assert!(
        !first.stderr.contains("another database"),
        "{}",
        first.stderr
    );
    let second = run("b.db");
    assert!(
        second
            .stderr
            .contains("holds iteration 1 written from another database; this eval is iteration 2"),
        "{}",
        second.stderr
    );
    assert!(dir
        .path()
        .join("tree/execution_outputs/iteration_2")
        .is_dir());
}
