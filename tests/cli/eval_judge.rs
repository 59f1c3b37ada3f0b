//! The LLM judge on the real binary against a judge server written here (not plexus's
//! mock or simulated model): it answers each vote otherwise (the asked form; a code
//! fence with the criteria keyed by name and "yes"; a criterion left out), prose, a
//! stream cut short, HTTP 500; then the same eval again answers what was read from
//! the cache, and the problems report lists where the checks and the judge disagree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::common::bin::{output, plexus};

/// What the judge server saw: each request's task header and body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// The judge's answer to vote `vote` on sample `sample`: (HTTP status, content).
fn scripted(sample: &str, vote: u32) -> (u16, String) {
    let all = |met: bool| {
        json!({"criteria": [
            {"name": "correct", "met": met, "evidence": "the result"},
            {"name": "explained", "met": met, "evidence": "the steps"}]})
        .to_string()
    };
    match (sample, vote) {
        ("q1", 0) => (200, all(true)),
        ("q1", 1) => (
            200,
            "My judgment:\n```json\n{\"criteria\": {\"explained\": {\"verdict\": \"yes\", \"reason\": \"shows the steps\"}, \"correct\": \"yes\"}, \"confidence\": 0.9}\n```".into(),
        ),
        ("q1", _) => (
            200,
            r#"{"criteria": [{"name": "correct", "met": false, "evidence": "off"}], "extra": [1]}"#
                .into(),
        ),
        ("q2", 1) => (200, r#"{"criteria": [{"name": "correct", "met": tr"#.into()),
        ("q2", _) => (200, "I cannot judge this output.".into()),
        ("q3", _) => (500, String::new()),
        ("q4" | "q7", _) => (200, all(false)),
        _ => (200, all(true)),
    }
}

fn judge_server(seen: Seen) -> String {
    crate::common::raw_http::serve(move |req| {
        // JUDGE_{sample}_{check}_{vote}
        let invocation = req
            .headers
            .get("x-plexus-invocation")
            .cloned()
            .unwrap_or_default();
        let parts: Vec<&str> = invocation.split('_').collect();
        let (sample, vote) = (
            parts.get(1).copied().unwrap_or(""),
            parts.last().and_then(|v| v.parse().ok()).unwrap_or(0),
        );
        seen.lock()
            .expect("seen")
            .push((sample.to_string(), req.body.clone()));
        scripted(sample, vote)
    })
}

fn setup(dir: &Path, url: &str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    for f in ["answer_plan.json", "arith.jsonl"] {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy fixture");
    }
    let mut spec: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("arith.eval.json")).expect("spec"))
            .expect("json");
    spec["fail_under"] = json!({});
    spec["checks"].as_array_mut().expect("checks").push(
        json!({"name": "judge", "kind": "judge", "rubric": "rubric.json",
                     "judges": ["raw"], "votes": 3}),
    );
    std::fs::write(dir.join("judged.eval.json"), spec.to_string()).expect("spec");
    std::fs::write(
        dir.join("rubric.json"),
        json!({"name": "answers", "criteria": [
            {"name": "correct", "question": "Is the result right?"},
            {"name": "explained", "question": "Is the working shown?"}]})
        .to_string(),
    )
    .expect("rubric");
    std::fs::write(
        dir.join("plexus.toml"),
        format!("[providers.raw]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"judge-m\"\nstream = false\n"),
    )
    .expect("config");
}

fn run(dir: &Path) -> Value {
    run_with(dir, &[])
}

/// [`run`] with more arguments.
fn run_with(dir: &Path, extra: &[&str]) -> Value {
    let o = output(
        plexus(dir)
            .env("PLEXUS_CONFIG", dir.join("plexus.toml"))
            .args([
                "--db",
                "e.db",
                "eval",
                "judged.eval.json",
                "--out",
                "tree",
                "--limit",
                "7",
                "--chunk-ms",
                "0",
                "--first-chunk-ms",
                "0",
                "--retry-delay-div",
                "1000",
                "--json",
            ])
            .args(extra),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    serde_json::from_str(&o.stdout).expect("json")
}

/// The judge check's row of each sample of eval `id`: (passed, result).
fn judged(dir: &Path, id: &str) -> BTreeMap<String, (Option<bool>, Value)> {
    let c = Connection::open(dir.join("e.db")).expect("db");
    let mut st = c
        .prepare("SELECT sample_id, passed, result FROM eval_checks WHERE eval_id = ?1 AND check_name = 'judge'")
        .expect("prepare");
    st.query_map([id], |r| {
        let text: String = r.get(2)?;
        Ok((
            r.get(0)?,
            (
                r.get(1)?,
                serde_json::from_str(&text).unwrap_or(Value::Null),
            ),
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

#[test]
fn a_judge_that_answers_otherwise_is_read_voted_cached_and_kept_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen: Seen = Arc::default();
    let url = judge_server(seen.clone());
    setup(dir.path(), &url);
    let first = run(dir.path());
    let id = first["eval"]["eval_id"].as_str().expect("id").to_string();
    {
        let calls = seen.lock().expect("seen");
        // 7 samples × 3 votes, each asked once, and q3's HTTP 500 retried as every model
        // call is (five times a vote).
        assert_eq!(
            calls.len(),
            21 + 3 * 5,
            "{:?}",
            calls.iter().map(|c| &c.0).collect::<Vec<_>>()
        );
        for (_, body) in calls.iter() {
            assert_eq!(body["temperature"], json!(0.0), "{body}");
            // The verdict held to its schema: the rubric's criteria by name.
            let format = &body["response_format"];
            assert_eq!(format["type"], "json_schema", "{body}");
            assert_eq!(
                format["json_schema"]["schema"]["properties"]["criteria"]["items"]["properties"]
                    ["name"]["enum"],
                json!(["correct", "explained"]),
                "{body}"
            );
            assert_eq!(body["model"], "judge-m");
        }
    }
    let j = judged(dir.path(), &id);
    // q1: three answers in three forms; `correct` 2 to 1, `explained` 2 to 0 (the third
    // left it out): both met.
    let (passed, r) = &j["q1"];
    assert_eq!(*passed, Some(true), "{r}");
    let crit = &r["found"]["criteria"];
    assert_eq!(
        (crit[0]["yes"].as_u64(), crit[0]["no"].as_u64()),
        (Some(2), Some(1)),
        "{r}"
    );
    assert_eq!(
        (crit[1]["yes"].as_u64(), crit[1]["no"].as_u64()),
        (Some(2), Some(0)),
        "{r}"
    );
    // q2 (prose, a stream cut short) and q3 (HTTP 500): not judged — the sample is an
    // error, not a failure, and why is kept.
    for s in ["q2", "q3"] {
        let (passed, r) = &j[s];
        assert_eq!(*passed, None, "{s}: {r}");
        assert!(
            r["why"].as_str().unwrap_or("").contains("no answer judged"),
            "{s}: {r}"
        );
    }
    assert_eq!(j["q4"].0, Some(false));
    assert_eq!(first["counts"]["error"], 2);
    // The judges' tokens are apart from the samples': 150 per answer received (q3's
    // failed calls cost nothing): 6 answering samples × 3.
    assert_eq!(first["judge_tokens"], 6 * 3 * 150);
    let c = Connection::open(dir.path().join("e.db")).expect("db");
    let q1: (i64, i64) = c
        .query_row(
            "SELECT tokens, judge_tokens FROM eval_attempts WHERE eval_id = ?1 AND sample_id = 'q1'",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("q1");
    assert_eq!(q1.1, 450);
    assert!(q1.0 > 0 && q1.0 != 450, "the sample's own tokens: {q1:?}");
    // The problems report: q7 failed by the judge with every check passed; q5 and q6
    // failed `confidence` though the judge passed them.
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.path()
                .join("tree/execution_outputs/iteration_1/layer1_problems_report.json"),
        )
        .expect("report"),
    )
    .expect("json");
    let disagree = report["layer1_problems"]
        .as_array()
        .and_then(|p| {
            p.iter()
                .find(|p| p["title"] == "the checks and the judge disagree")
        })
        .cloned()
        .unwrap_or_else(|| panic!("no disagreement listed: {report}"));
    assert_eq!(disagree["problem_type"], "Checker_Design");
    // q2 and q3 are the judge's errors, not the model's.
    let unjudged = report["layer1_problems"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["problem_type"] == "Judge_Unscored"))
        .cloned()
        .unwrap_or_else(|| panic!("no Judge_Unscored problem: {report}"));
    assert!(
        unjudged["description"]
            .as_str()
            .unwrap_or("")
            .starts_with("2 sample(s)"),
        "{unjudged}"
    );
    let q2: Value =
        serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(
                "tree/execution_outputs/iteration_1/attribution_analysis/q2_attribution.json",
            ))
            .expect("q2's attribution"),
        )
        .expect("json");
    assert_eq!(q2["failure_type"], "judge_unscored", "{q2}");
    let desc = disagree["description"].as_str().unwrap_or("");
    assert!(
        desc.starts_with("3 sample(s): 1 failed by the judge"),
        "{desc}"
    );

    // The same eval again, as a new iteration: what was read whole comes from the
    // cache; q1's third answer (it left a criterion out), q2's unreadable answers and
    // q3's failed calls are asked again.
    let again = run_with(dir.path(), &["--iteration", "2"]);
    let id2 = again["eval"]["eval_id"].as_str().expect("id").to_string();
    assert_ne!(id, id2);
    let asked: Vec<String> = seen.lock().expect("seen")[36..]
        .iter()
        .map(|(s, _)| s.clone())
        .collect();
    assert_eq!(asked.len(), 4 + 3 * 6, "{asked:?}");
    assert_eq!(asked.iter().filter(|s| *s == "q1").count(), 1, "{asked:?}");
    assert!(
        asked
            .iter()
            .all(|s| ["q1", "q2", "q3"].contains(&s.as_str())),
        "{asked:?}"
    );
    let j2 = judged(dir.path(), &id2);
    assert_eq!(j2["q1"].0, Some(true));
    assert_eq!(j2["q1"].1["found"]["cached"], 2);
    assert_eq!(
        again["judge_tokens"],
        4 * 150,
        "q1's third answer and q2's three, asked again"
    );

    // A rescore with the same checks calls no judge: q1 from the cache, q2 and q3 left
    // unscored with why.
    let o = output(
        plexus(dir.path())
            .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
            .args([
                "--db",
                "e.db",
                "eval",
                "rescore",
                &id,
                "--checks",
                "judged.eval.json",
                "--json",
            ]),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        seen.lock().expect("seen").len(),
        36 + 22,
        "no judge was called"
    );
    let r: Value = serde_json::from_str(&o.stdout).expect("json");
    let j3 = judged(dir.path(), r["eval"]["eval_id"].as_str().expect("id"));
    assert_eq!(j3["q1"].0, Some(true));
    assert_eq!(j3["q3"].0, None);
    assert!(
        j3["q3"].1["why"]
            .as_str()
            .unwrap_or("")
            .contains("a rescore makes no model call"),
        "{}",
        j3["q3"].1
    );
}

#[test]
fn a_judge_spec_that_cannot_work_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    setup(dir.path(), "http://127.0.0.1:9");
    let spec = std::fs::read_to_string(dir.path().join("judged.eval.json")).expect("spec");
    let cases = [
        (
            spec.replace("rubric.json", "missing.json"),
            "checks[5].rubric",
        ),
        (
            spec.replace("\"votes\":3", "\"votes\":0"),
            "checks[5].votes",
        ),
        (spec.replace("\"raw\"", "\"nobody\""), "judge `nobody`"),
    ];
    for (text, needle) in cases {
        std::fs::write(dir.path().join("bad.eval.json"), &text).expect("write");
        let o = output(
            plexus(dir.path())
                .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
                .args(["--db", "e.db", "eval", "bad.eval.json", "--out", "tree"]),
        );
        assert_ne!(o.code, Some(0), "{needle}: {}", o.stderr);
        assert!(o.stderr.contains(needle), "{needle}: {}", o.stderr);
    }
    // A judge inside another check.
    std::fs::write(
        dir.path().join("nested.eval.json"),
        json!({"name": "n", "plan": "answer_plan.json", "dataset": "arith.jsonl", "checks": [
            {"name": "x", "kind": "not", "check": {"kind": "judge", "rubric": "rubric.json"}}]})
        .to_string(),
    )
    .expect("write");
    let o = output(plexus(dir.path()).args(["--db", "e.db", "eval", "nested.eval.json"]));
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.stderr.contains("a judge check stands alone"),
        "{}",
        o.stderr
    );
    let c = Connection::open(dir.path().join("e.db")).expect("db");
    let evals: i64 = c
        .query_row("SELECT COUNT(*) FROM evals", [], |r| r.get(0))
        .unwrap_or(0);
    assert_eq!(evals, 0, "nothing was stored");
}
