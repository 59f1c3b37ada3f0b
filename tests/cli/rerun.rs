//! `plexus rerun` from the outside: a recorded run with faults re-executes on its
//! recording to the same tasks, invocations, atoms and events; a raised quality
//! threshold shows as exactly the status and grade changes that follow; a request with
//! no recording fails clearly (never made up) and an unchanged rerun that diverges
//! exits 5; recorded chunk timing is kept; a recording made over HTTP replays without
//! a single request to the server.

use crate::common;

use common::bin::{gen_plan, output, plexus};
use common::rerun::{
    assert_same_run, atoms, chunk_offsets, chunk_progress, invocations, latest, provider_of,
    record, rerun, tasks,
};
use plexus::dev::mock_server::{MockConfig, MockFault, MockServer};
use serde_json::Value;

#[test]
fn a_recorded_run_with_faults_reruns_to_the_same_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = gen_plan(dir.path(), 10, 3);
    let old = record(dir.path(), &plan, 5, &[]);
    // The recording has what the rerun must reproduce: a parse error (E002), an answer
    // of the wrong shape (E003), a quality retry (E005), a timeout (E004) and a
    // transient provider error (E001) with its retries.
    let inv = invocations(dir.path(), &old);
    for code in ["E002", "E003", "E004", "E005", "E001"] {
        assert!(
            inv.iter().any(|i| i.3.contains(code)),
            "no {code} in {inv:?}"
        );
    }
    assert!(inv
        .iter()
        .any(|i| i.6["provider_error"]["kind"] == "transient"));

    let (out, report) = rerun(dir.path(), &old, &["--instant"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let new = report["run_id"].as_str().expect("run id").to_string();
    assert_eq!(report["diverged"], false, "{report:#}");
    assert_eq!(report["mismatches"], 0);
    assert!(
        report["events_compared"].as_u64().unwrap_or(0) > 50,
        "{report:#}"
    );
    assert_eq!(report["replay_problems"], serde_json::json!([]));
    assert!(
        out.stderr.contains(&format!("rerun {new} matches {old}")),
        "{}",
        out.stderr
    );
    assert_same_run(dir.path(), &old, &new);
    // `plexus diff` agrees: no differences.
    let d = output(plexus(dir.path()).args(["--db", "r.db", "diff", &old, &new]));
    assert_eq!(d.code, Some(0), "{}{}", d.stdout, d.stderr);
    assert_eq!(d.stdout.trim(), "no differences");
    // No model was asked: the answers came from the recording.
    assert_eq!(provider_of(dir.path(), &new), format!("replay:{old}"));

    // Another interleaving (one invocation at a time) changes nothing within a task.
    let (out, report) = rerun(dir.path(), &old, &["--instant", "--concurrency", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(report["mismatches"], 0, "{report:#}");
    assert_same_run(dir.path(), &old, report["run_id"].as_str().expect("id"));
}

#[test]
fn a_raised_quality_threshold_shows_the_status_and_grade_changes_that_follow() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = gen_plan(dir.path(), 10, 3);
    let old = record(dir.path(), &plan, 18, &[]);
    // A task that passed its threshold C on its first attempt with grade B atoms.
    let inv = invocations(dir.path(), &old);
    let task = inv
        .iter()
        .find(|i| {
            let avg = i.6["quality_check"]["avg_quality_score"]
                .as_f64()
                .unwrap_or(1.0);
            i.1 == 1 && i.2 == "success" && (0.7..0.85).contains(&avg)
        })
        .map(|i| i.0.clone())
        .expect("a first attempt that passed with grade B");
    let mut p: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).expect("plan")).expect("plan JSON");
    let mut downstream = vec![task.clone()];
    for t in p["tasks"].as_array_mut().expect("tasks") {
        if t["task_id"] == task.as_str() {
            assert_eq!(t["output_requirements"]["quality_threshold"], "C");
            t["output_requirements"]["quality_threshold"] = "A".into();
        }
    }
    // Tasks downstream of it (the plan lists a task after its dependencies).
    for t in p["tasks"].as_array().expect("tasks") {
        let deps: Vec<&str> = t["depends_on"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if deps.iter().any(|d| downstream.iter().any(|x| x == d)) {
            downstream.push(t["task_id"].as_str().expect("id").to_string());
        }
    }
    std::fs::write(dir.path().join("raised.json"), p.to_string()).expect("write");

    let (out, report) = rerun(dir.path(), &old, &["--instant", "--plan", "raised.json"]);
    // The plan changed: the divergence is information, the exit code the run's own.
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert_eq!(report["plan_changed"], true);
    assert!(
        out.stderr.contains("divergence is expected"),
        "{}",
        out.stderr
    );
    let new = report["run_id"].as_str().expect("id").to_string();

    // The first attempt now misses A (E005, partial) on the same answer; the retry has
    // no recording and fails (E008); the task fails and blocks what depends on it.
    let problems = report["replay_problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 2, "{report:#}");
    assert_eq!(
        (
            problems[0]["task_id"].as_str(),
            problems[0]["attempt"].as_u64()
        ),
        (Some(task.as_str()), Some(1))
    );
    assert_eq!(problems[0]["problem"], "prompt_differs");
    assert_eq!(problems[0]["part"], "user_prompt.instruction");
    assert_eq!(problems[1]["problem"], "no_recording");
    assert_eq!(problems[1]["attempt"], 2);

    let div = report["divergences"].as_array().expect("divergences");
    let mine = div
        .iter()
        .find(|d| d["task_id"] == task.as_str())
        .expect("the task diverged");
    let fields: Vec<(String, String, Value, Value)> = mine["mismatches"]
        .as_array()
        .expect("mismatches")
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap_or_default().into(),
                m["field"].as_str().unwrap_or_default().into(),
                m["recorded"].clone(),
                m["now"].clone(),
            )
        })
        .collect();
    let s = |x: &str| Value::String(x.into());
    assert_eq!(
        fields[0],
        (
            "invocation_started".into(),
            "quality_threshold".into(),
            s("C"),
            s("A")
        )
    );
    assert!(
        fields.contains(&(
            "invocation_finished".into(),
            "status".into(),
            s("success"),
            s("partial")
        )),
        "{fields:?}"
    );
    assert!(
        fields.contains(&(
            "invocation_finished".into(),
            "errors".into(),
            Value::Null,
            serde_json::json!(["E005"])
        )),
        "{fields:?}"
    );

    // Tasks and atoms: the task and everything downstream changed, nothing else did.
    let before = tasks(dir.path(), &old);
    let after = tasks(dir.path(), &new);
    for (b, a) in before.iter().zip(&after) {
        if b.0 == task {
            assert_eq!(
                (a.1.as_str(), a.2, a.3, a.4.as_deref()),
                ("failed", 2, 0, Some("E008"))
            );
        } else if downstream.contains(&b.0) {
            assert_eq!((a.1.as_str(), a.3), ("blocked", 0), "{a:?}");
        } else {
            assert_eq!(a, b);
        }
    }
    let kept: Vec<_> = atoms(dir.path(), &old)
        .into_iter()
        .filter(|a| !downstream.contains(&a.1))
        .collect();
    assert_eq!(atoms(dir.path(), &new), kept);
    // `plexus diff` reports exactly this: the raised task and what depends on it, with
    // their statuses and grades; no other task.
    let d = output(plexus(dir.path()).args(["--db", "r.db", "diff", &old, &new, "--json"]));
    assert_eq!(d.code, Some(1), "{}", d.stderr);
    let diff: Value = serde_json::from_str(&d.stdout).expect("diff JSON");
    let changed: Vec<(String, Vec<String>)> = diff["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            (
                t["task_id"].as_str().unwrap_or_default().to_string(),
                t["fields"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f["field"].as_str().map(str::to_string))
                    .collect(),
            )
        })
        .collect();
    let changed_ids: Vec<&str> = changed.iter().map(|(t, _)| t.as_str()).collect();
    let mut want: Vec<&str> = downstream.iter().map(String::as_str).collect();
    want.sort_unstable();
    let mut got = changed_ids.clone();
    got.sort_unstable();
    assert_eq!(got, want, "tasks that differ");
    for (t, fields) in &changed {
        assert!(fields.iter().any(|f| f == "status"), "{t}: {fields:?}");
        if *t == task {
            assert!(
                fields.iter().any(|f| f == "attempt[1].status")
                    && fields.iter().any(|f| f == "attempt[1].errors"),
                "{fields:?}"
            );
        }
    }
    let run_fields: Vec<&str> = diff["run"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["field"].as_str())
        .collect();
    assert_eq!(run_fields, vec!["status"], "{:#}", diff["run"]);
    // The run's totals say the same.
    let run = div
        .iter()
        .find(|d| d["task_id"].is_null())
        .expect("run_finished differs");
    assert!(run["mismatches"]
        .as_array()
        .expect("list")
        .iter()
        .any(|m| m["field"] == "status" && m["now"] == "failed"));
}

#[test]
fn a_request_with_no_recording_fails_clearly_and_an_unchanged_rerun_that_diverges_exits_5() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = gen_plan(dir.path(), 3, 3);
    let old = record(dir.path(), &plan, 2, &[]);
    let mut p: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).expect("plan")).expect("JSON");
    let tasks_v = p["tasks"].as_array_mut().expect("tasks");
    let mut extra = tasks_v[0].clone();
    extra["task_id"] = "EXTRA".into();
    extra["depends_on"] = serde_json::json!([]);
    tasks_v.push(extra);
    std::fs::write(dir.path().join("extra.json"), p.to_string()).expect("write");

    let (out, report) = rerun(dir.path(), &old, &["--instant", "--plan", "extra.json"]);
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let new = report["run_id"].as_str().expect("id").to_string();
    let problems = report["replay_problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{report:#}");
    assert_eq!(
        (
            problems[0]["task_id"].as_str(),
            problems[0]["problem"].as_str()
        ),
        (Some("EXTRA"), Some("no_recording"))
    );
    assert!(
        out.stderr.contains(&format!(
            "task EXTRA attempt 1: replay: no recording of task EXTRA attempt 1 in run {old}"
        )),
        "{}",
        out.stderr
    );
    // Nothing made up: EXTRA failed with no atom, its error names the missing recording.
    let t = tasks(dir.path(), &new);
    let extra = t.iter().find(|t| t.0 == "EXTRA").expect("EXTRA");
    assert_eq!(
        (extra.1.as_str(), extra.3, extra.4.as_deref()),
        ("failed", 0, Some("E008"))
    );
    let inv = invocations(dir.path(), &new);
    let e = inv
        .iter()
        .find(|i| i.0 == "EXTRA")
        .expect("EXTRA's invocation");
    assert_eq!(e.6["output"]["atoms"], serde_json::json!([]));
    assert!(e.6["errors"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .starts_with("replay: no recording"));
    // The recorded tasks ran as recorded.
    let same: Vec<_> = t.into_iter().filter(|t| t.0 != "EXTRA").collect();
    assert_eq!(same, tasks(dir.path(), &old));

    // The recording loses one answer: a rerun of the unchanged plan diverges (exit 5)
    // and says where, as nondeterminism.
    {
        let conn = rusqlite::Connection::open(dir.path().join("r.db")).expect("open");
        let n = conn
            .execute(
                "DELETE FROM invocations WHERE run_id = ?1 AND task_id = 'T00001' AND attempt = 1",
                [&old],
            )
            .expect("delete");
        assert_eq!(n, 1);
    }
    let (out, report) = rerun(dir.path(), &old, &["--instant"]);
    assert_eq!(out.code, Some(5), "{}", out.stderr);
    assert_eq!(report["plan_changed"], false);
    assert!(
        out.stderr.contains("nondeterminism at event"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("(task T00001, chunk): event: recorded chunk, now (absent)"),
        "{}",
        out.stderr
    );
    let div = report["divergences"].as_array().expect("divergences");
    let t1 = div
        .iter()
        .find(|d| d["task_id"] == "T00001")
        .expect("T00001 diverged");
    assert!(
        t1["mismatches"]
            .as_array()
            .expect("list")
            .iter()
            .any(|m| m["kind"] == "invocation_finished" && m["now"].to_string().contains("E008")),
        "{t1:#}"
    );
}

#[test]
fn recorded_chunk_timing_is_kept_unless_instant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = gen_plan(dir.path(), 1, 1);
    let out = output(
        plexus(dir.path())
            .args(["--db", "r.db", "run", "--headless"])
            .arg(&plan)
            .args(["--first-chunk-ms", "200", "--chunk-ms", "40"]),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let old = latest(dir.path());
    let timed = chunk_offsets(dir.path(), &old);
    assert!(
        timed[0] >= 200,
        "the recording's first chunk came after 200 ms: {timed:?}"
    );

    let (out, report) = rerun(dir.path(), &old, &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(report["mismatches"], 0, "{report:#}");
    // The same text at the same pace: each point the recording reached is reached again
    // at about its time (a busy machine may group two fast chunks into one event, so the
    // events are not compared one by one).
    let recorded = chunk_progress(dir.path(), &old);
    let replayed = chunk_progress(dir.path(), report["run_id"].as_str().expect("id"));
    assert_eq!(
        recorded.last().map(|p| p.0),
        replayed.last().map(|p| p.0),
        "the same text"
    );
    for &(bytes, t) in &recorded {
        let again = replayed
            .iter()
            .find(|&&(b, _)| b >= bytes)
            .map(|&(_, t)| t)
            .expect("reached");
        assert!(
            (t - again).abs() <= 80,
            "byte {bytes}: recorded at {t} ms, replayed at {again} ms\n{recorded:?}\n{replayed:?}"
        );
    }

    let (out, report) = rerun(dir.path(), &old, &["--instant"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let instant = chunk_offsets(dir.path(), report["run_id"].as_str().expect("id"));
    assert!(instant.iter().all(|&t| t < 150), "{instant:?}");
}

#[test]
fn a_recording_over_http_replays_without_any_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = gen_plan(dir.path(), 3, 3);
    let script = [
        (
            "T00000",
            vec![
                MockFault::Status {
                    code: 503,
                    retry_after: None,
                },
                MockFault::None,
            ],
        ),
        ("T00001", vec![MockFault::InvalidJson, MockFault::None]),
        (
            "T00002",
            vec![MockFault::Status {
                code: 404,
                retry_after: None,
            }],
        ),
    ];
    let server = MockServer::start(
        MockConfig {
            stream_ms: 30,
            chunks: 6,
            script: script
                .into_iter()
                .map(|(t, f)| (t.to_string(), f))
                .collect(),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let toml = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n",
        server.url()
    );
    std::fs::write(dir.path().join("local.toml"), toml).expect("config");
    let out = output(
        plexus(dir.path())
            .args(["--db", "r.db", "--config", "local.toml"])
            .args(["run", "--headless", "--provider", "local"])
            .arg(&plan)
            .args(["--retry-delay-div", "1000"]),
    );
    assert_eq!(
        out.code,
        Some(3),
        "T00002 fails for good (404): {}",
        out.stderr
    );
    let old = latest(dir.path());
    let calls = server.requests();
    let inv = invocations(dir.path(), &old);
    let kinds: Vec<&str> = inv
        .iter()
        .filter_map(|i| i.6["provider_error"]["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["transient", "malformed", "permanent"], "{inv:?}");
    assert!(
        inv.iter().any(|i| i.6["provider"]["usage"].is_object()),
        "{inv:?}"
    );

    let (out, report) = rerun(dir.path(), &old, &["--instant"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(report["mismatches"], 0, "{report:#}");
    assert_same_run(dir.path(), &old, report["run_id"].as_str().expect("id"));
    assert_eq!(
        server.requests(),
        calls,
        "the rerun sent a request to the server"
    );
}
