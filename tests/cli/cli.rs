//! The binary from the outside: the README's demo runs offline to completion, leaves a
//! healthy database, and `show` / `runs` / `validate` print what they should.

use plexus::model::event::EngineEvent;
use std::process::Command;

fn plexus(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plexus"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run plexus")
}

#[test]
fn demo_runs_to_completion_and_show_prints_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join(".plexus/plexus.db");
    let out = plexus(&db, &["demo", "--chunk-ms", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let summary = String::from_utf8_lossy(&out.stdout);
    // The demo ends awaiting review: its validator stops for a person (E007).
    assert_eq!(out.status.code(), Some(6), "demo: {err}");
    // Progress on stderr, the result on stdout (`plexus demo > out.txt` keeps it).
    assert!(err.contains("flagged for human review"), "{err}");
    assert!(err.contains("retry"), "the demo shows retries: {err}");
    assert!(summary.contains("run awaiting_review"), "{summary}");
    assert!(summary.contains("tokens per agent"), "{summary}");
    assert!(!err.contains("tokens per agent"), "{err}");
    assert!(
        !summary.contains("retry"),
        "no progress on stdout: {summary}"
    );

    let check = plexus(&db, &["check"]);
    assert!(String::from_utf8_lossy(&check.stdout).contains("integrity_check ok"));

    let show = plexus(&db, &["show", "latest"]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success());
    for needle in [
        "AVP_E2E_20260203_001",
        "TASK_CRITIC_DIFF_01",
        "Strategic_Critic",
        "failed",
        "chunk",
    ] {
        assert!(text.contains(needle), "show lacks {needle}: {text}");
    }
    let json = plexus(&db, &["show", "latest", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("show --json is JSON");
    assert_eq!(v["tasks"].as_array().map(Vec::len), Some(5));
    assert_eq!(v["run"]["status"], "awaiting_review");

    // Its review queue holds the validator; accepted, a resume runs the critic.
    let queue = plexus(&db, &["review", "latest"]);
    let q = String::from_utf8_lossy(&queue.stdout);
    assert!(
        q.contains("TASK_VALIDATOR_DIFF_01") && q.contains("waiting"),
        "{q}"
    );
    let acc = plexus(
        &db,
        &[
            "review",
            "latest",
            "TASK_VALIDATOR_DIFF_01",
            "--accept",
            "--by",
            "t",
        ],
    );
    assert!(
        acc.status.success(),
        "{}",
        String::from_utf8_lossy(&acc.stderr)
    );
    let res = plexus(&db, &["resume", "latest", "--headless"]);
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let json = plexus(&db, &["show", "latest", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("show --json is JSON");
    assert_eq!(v["run"]["status"], "succeeded");

    let runs = plexus(&db, &["runs"]);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("AVP_E2E_20260203_001"));
    assert!(
        db.parent().expect("dir").join("plexus.log").exists(),
        "logs go to a file"
    );
}

#[test]
fn validate_reports_errors_with_exit_code_2_and_accepts_fixtures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("v.db");
    let ok = plexus(
        &db,
        &["validate", "fixtures/plans/avp_diffusion_planner.json"],
    );
    assert!(ok.status.success());
    assert!(String::from_utf8_lossy(&ok.stdout).contains("5 tasks"));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"plan_id":"X","tasks":[{"task_id":"A","agent":"Nobody","instruction":"x","depends_on":["Z"]}]}"#)
        .expect("write");
    let out = plexus(&db, &["validate", bad.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown agent `Nobody`") && err.contains("depends on `Z`"),
        "{err}"
    );
}

#[test]
fn a_failed_run_exits_non_zero_and_a_missing_run_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("f.db");
    // A reader on a file that is not there says so, and creates nothing.
    let out = plexus(&db, &["show", "R-nope"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no database at") && err.contains("f.db"),
        "{err}"
    );
    assert!(!db.exists());
    drop(plexus::data::store::open_connection(&db).expect("an empty plexus database"));
    let out = plexus(&db, &["show", "R-nope"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no run `R-nope`") && err.contains("f.db"),
        "{err}"
    );
    let out = plexus(&db, &["run", "fixtures/plans/does_not_exist.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the plan"));
}

#[test]
fn the_seed_000_chain_runs_with_every_reference_resolved() {
    // The protocol's own task chain: the paper is read from its PDF, the claims picked by
    // their filter, the validator's results read under their atom type, the vault's
    // query answered; no reference fails and every task succeeds.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("c.db");
    let out = plexus(
        &db,
        &[
            "run",
            "fixtures/plans/seed000_task_chain.json",
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("failed: REF_"), "{err}");
    for (n, task) in ["task_scholar_001", "task_validator_001", "task_vault_001"]
        .iter()
        .enumerate()
    {
        assert!(
            err.contains(&format!("[{}/3] {task}: success", n + 1)),
            "{err}"
        );
    }
    let store = plexus::data::store::Store::open(&db).expect("db");
    let runs = store.list_runs().expect("runs");
    let kinds = ["reference_failed", "context_planned"];
    let log = store
        .events_of_kinds(&runs[0].run_id, &kinds, 0, u64::MAX)
        .expect("log");
    let mut inputs = Vec::new();
    for row in &log {
        match row.event.as_ref().expect("decodes") {
            EngineEvent::ReferenceFailed(f) => panic!("a reference failed: {f:?}"),
            EngineEvent::ContextPlanned(c) => {
                inputs.extend(c.inputs.iter().map(|i| (i.name.clone(), i.tokens)))
            }
            _ => {}
        }
    }
    // The paper, the claims, then the vault's three.
    let refs: Vec<&(String, u64)> = inputs
        .iter()
        .filter(|(name, _)| name.contains(':'))
        .collect();
    assert_eq!(refs.len(), 5, "{inputs:?}");
    // The paper read, the claims picked (more than an empty list), the validator's
    // results read under their atom type.
    for (name, tokens) in &refs[..4] {
        assert!(*tokens > 20, "{name} brought {tokens} tokens: {inputs:?}");
    }
}

#[test]
fn bench_refuses_empty_counts_and_can_skip_the_paced_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("plexus.db");
    for flag in [
        "--tasks",
        "--width",
        "--chunks",
        "--bare-rows",
        "--chunk-flush-max",
        "--concurrency",
    ] {
        let out = plexus(&db, &["bench", "engine", flag, "0"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} 0 was accepted");
        assert!(
            err.contains(flag) && err.contains("not in 1.."),
            "{flag}: {err}"
        );
    }
    let scratch = dir.path().join("bench");
    let out = plexus(
        &db,
        &[
            "bench",
            "engine",
            "--tasks",
            "20",
            "--bare-rows",
            "500",
            "--paced-tasks",
            "0",
            "--dir",
            scratch.to_str().expect("utf-8 path"),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("run status            succeeded"), "{text}");
    assert!(text.contains("paced run             skipped"), "{text}");
    assert!(!scratch.join("paced.db").exists());
}

#[test]
fn schema_prints_the_json_schemas_of_plans_and_of_the_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("plexus.db");
    for (what, built) in [
        ("plan", plexus::model::plan::plan_schema()),
        ("config", plexus::base::config::config_schema()),
    ] {
        let out = plexus(&db, &["schema", what]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("the schema is JSON");
        assert_eq!(printed, built, "{what}");
        assert_eq!(
            printed["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(printed["title"].is_string() && printed["description"].is_string());
        assert!(jsonschema::meta::is_valid(&printed), "{what}");
    }
    assert!(!db.exists(), "printing a schema opens no database");
    let out = plexus(&db, &["schema", "nope"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_values_of_scales_divisors_and_endpoints_exit_2_and_resume_of_an_ended_run_exits_with_its_outcome(
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("x.db");
    let plan = "fixtures/plans/avp_diffusion_planner.json";
    for args in [
        vec!["run", plan, "--timeout-scale", "0"],
        vec!["run", plan, "--timeout-scale", "-1"],
        vec!["run", plan, "--timeout-scale", "inf"],
        vec!["run", plan, "--retry-delay-div", "0"],
        vec!["run", plan, "--otlp", "http://"],
        vec!["run", plan, "--otlp", "ftp://collector:4318"],
        vec![
            "eval",
            "fixtures/eval/arith.eval.json",
            "--timeout-scale",
            "0",
        ],
        vec![
            "eval",
            "fixtures/eval/arith.eval.json",
            "--retry-delay-div",
            "0",
        ],
    ] {
        let out = plexus(&db, &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(!db.exists(), "nothing ran");
    let small = dir.path().join("small.json");
    std::fs::write(
        &small,
        r#"{"plan_id": "P", "tasks": [{"task_id": "A", "agent": "Scholar_Internalizer",
            "instruction": "Analyse the denoising formula.",
            "output_requirements": {"quality_threshold": "C", "max_atoms": 2}}]}"#,
    )
    .expect("plan");
    let small = small.display().to_string();
    let out = plexus(
        &db,
        &[
            "run",
            &small,
            "--headless",
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = plexus(&db, &["resume", "latest"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "a succeeded run: {err}");
    assert!(
        err.contains("already ended (succeeded); nothing to resume"),
        "{err}"
    );
}
