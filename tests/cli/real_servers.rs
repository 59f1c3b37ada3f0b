//! The real binary against model servers written here, answering as real ones do: an
//! eval whose task takes the model's plain text scores bare numbers (and numbers said
//! in a sentence, after reasoning) right, one call per sample; a slow server that
//! reports no usage gets a status line every period from a headless `run`, `eval` and
//! `debate`, and the summary says the token figures are plexus's own count; a debate
//! turn and a judge meeting `429` with `Retry-After` wait as long as asked and go on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::bin::{output, plexus, Out};
use crate::common::wire::{last_user_text, serve, Reply, Request};

fn copy_fixtures(dir: &Path, files: &[&str]) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    for f in files {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy fixture");
    }
}

fn config(dir: &Path, url: &str) {
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            "[providers.raw]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\nstream = false\n"
        ),
    )
    .expect("config");
}

/// `A op B` of a question `What is A op B?`, worked out.
fn solve(question: &str) -> Option<i64> {
    let q = question.split("What is ").nth(1)?;
    let q = q.split('?').next()?;
    let parts: Vec<&str> = q.split_whitespace().collect();
    let (a, op, b) = (parts.first()?, parts.get(1)?, parts.get(2)?);
    let (a, b): (i64, i64) = (a.parse().ok()?, b.parse().ok()?);
    Some(match *op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => a / b,
        _ => return None,
    })
}

/// The answer to a plain question, in one of the ways real models answer.
fn plain_answer(req: &Request, n: usize) -> Reply {
    let text = last_user_text(&req.body);
    let Some(x) = solve(&text) else {
        return Reply::openai_text("I do not know.");
    };
    Reply::openai_text(&match n % 3 {
        0 => x.to_string(),
        1 => format!("The answer is {x}."),
        _ => format!("<think>Let me work it out {{carefully}}.</think>\n{x}"),
    })
}

fn eval_plain(dir: &Path, extra: &[&str]) -> Out {
    let mut args = vec![
        "--db",
        "e.db",
        "eval",
        "arith_plain.eval.json",
        "--out",
        "tree",
        "--provider",
        "raw",
        "--retry-delay-div",
        "1000",
        "--json",
    ];
    args.extend_from_slice(extra);
    output(
        plexus(dir)
            .env("PLEXUS_CONFIG", dir.join("plexus.toml"))
            .args(&args),
    )
}

#[test]
fn a_plain_text_eval_scores_bare_numbers_right_with_one_call_per_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixtures(
        dir.path(),
        &[
            "arith_plain.eval.json",
            "plain_answer_plan.json",
            "arith20.jsonl",
        ],
    );
    let (url, seen) = serve(plain_answer);
    config(dir.path(), &url);
    let o = eval_plain(dir.path(), &[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r: Value = serde_json::from_str(&o.stdout).expect("json report");
    let number = r["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["check"] == "number"))
        .cloned()
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(number["passed"], 20, "{number}");
    // One call per sample: nothing was retried for its format.
    assert_eq!(seen.lock().expect("seen").len(), 20);
    // No schema was asked of a plain answer.
    for q in seen.lock().expect("seen").iter() {
        assert_eq!(crate::common::wire::form_of(&q.body), "none", "{}", q.body);
    }
}

/// Slow answers without usage: `delay` before each.
fn slow_server(delay: Duration, answer: fn(&Request, usize) -> Reply) -> String {
    serve(move |req, n| answer(req, n).after(delay)).0
}

fn status_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("status: "))
        .collect()
}

#[test]
fn a_slow_server_gets_a_status_line_from_headless_run_and_eval() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixtures(
        dir.path(),
        &[
            "arith_plain.eval.json",
            "plain_answer_plan.json",
            "arith20.jsonl",
        ],
    );
    let url = slow_server(Duration::from_millis(1500), plain_answer);
    config(dir.path(), &url);
    let o = output(
        plexus(dir.path())
            .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
            .env("PLEXUS_STATUS_EVERY", "0.4")
            .args([
                "--db",
                "e.db",
                "eval",
                "arith_plain.eval.json",
                "--out",
                "tree",
            ])
            .args(["--provider", "raw", "--limit", "2", "--concurrency", "1"]),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = status_lines(&o.stderr);
    assert!(
        lines.len() >= 3,
        "two 1.5 s calls, a line each 0.4 s: {}",
        o.stderr
    );
    assert!(
        lines.iter().all(|l| l.contains("1 call(s) in flight")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("slowest a01/")),
        "the slowest call is named by its task: {lines:?}"
    );
    // Once the first call is answered without usage, the count is said to be ours.
    assert!(
        lines.iter().any(|l| l.contains("(own count only)")),
        "{lines:?}"
    );
    // Progress: each sample's line once, the last one too (not again at the end).
    let progress: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains(" samples ("))
        .collect();
    assert_eq!(
        progress
            .iter()
            .filter(|l| l.contains(": 2/2 samples"))
            .count(),
        1,
        "{progress:?}"
    );
    assert!(
        progress.iter().any(|l| l.contains(": 1/2 samples")),
        "{progress:?}"
    );

    // A plan run: the same line, and the summary says whose count the tokens are.
    std::fs::write(
        dir.path().join("plan.json"),
        std::fs::read_to_string(dir.path().join("plain_answer_plan.json"))
            .expect("plan")
            .replace("{{sample.input}}", "What is 2 + 3?"),
    )
    .expect("plan");
    let o = output(
        plexus(dir.path())
            .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
            .env("PLEXUS_STATUS_EVERY", "0.4")
            .args([
                "--db",
                "r.db",
                "run",
                "plan.json",
                "--headless",
                "--provider",
                "raw",
            ]),
    );
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    let lines = status_lines(&o.stderr);
    assert!(!lines.is_empty(), "{}", o.stderr);
    assert!(
        lines[0].contains("slowest answer (Scholar_Internalizer)"),
        "{lines:?}"
    );
    assert!(
        o.stdout.contains("tokens: own count only") || o.stderr.contains("tokens: own count only"),
        "{}\n{}",
        o.stdout,
        o.stderr
    );
}

/// The role and round a debate request asks for.
fn turn_of(req: &Request) -> (String, u32) {
    let role = req
        .headers
        .get("x-plexus-agent")
        .cloned()
        .unwrap_or_default();
    let prompt: Value = serde_json::from_str(&last_user_text(&req.body)).unwrap_or(Value::Null);
    let round = prompt["debate"]["round"].as_u64().unwrap_or(1) as u32;
    (role, round)
}

/// A valid output of `role` for `round`.
fn debate_output(role: &str, round: u32) -> String {
    let position = json!({"conclusion": "Study in three phases with weekly mock tests",
        "key_reasons": ["steady progress", "feedback every week"],
        "assumptions": ["two hours a day"], "confidence": 0.8});
    let v = match role {
        "planner" => json!({"agent_id": "planner", "round": round, "output_type": "plan",
            "content": "Three phases: basics, practice, mock tests.",
            "metadata": {"position": position, "plan": {"title": "Plan", "goal": "Band 7",
                "phases": [{"phase_name": "Basics", "duration": "4 weeks", "tasks": []}],
                "total_estimated_hours": 120}}}),
        "critic" => json!({"agent_id": "critic", "round": round, "output_type": "critique",
            "content": "The plan holds; writing needs more time.",
            "metadata": {"position": position, "critique": {"target_agent": "planner",
                "target_round": round, "risks": [], "suggestions": [],
                "validity_check": {"feasible": true, "realistic": true, "complete": true}}}}),
        // The protocol's own reporter format: no position of its own.
        _ => json!({"agent_id": "reporter", "round": round, "output_type": "report",
            "content": "# Plan\n\nThree phases with weekly mock tests.",
            "metadata": {"final_plan": {"title": "Three-phase plan", "goal": "Band 7",
                "consensus_level": "high", "participating_agents": ["planner", "critic"],
                "rounds": "1", "plan": {"phases": [], "total_estimated_hours": 120}},
                "summary": {"key_agreements": ["three phases"], "resolved_concerns": [],
                    "remaining_uncertainties": ["time"]}}}),
    };
    v.to_string()
}

#[test]
fn a_debate_turn_meeting_a_429_waits_as_long_as_asked_and_the_session_ends_with_a_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (url, seen) = serve(|req, n| {
        if n == 0 {
            return Reply::error(429, "rate limited").header("retry-after", "1");
        }
        let (role, round) = turn_of(req);
        Reply::openai_text(&debate_output(&role, round))
    });
    config(dir.path(), &url);
    let o = output(
        plexus(dir.path())
            .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
            .env("PLEXUS_STATUS_EVERY", "0.3")
            .args(["--db", "d.db", "debate", "How should I prepare for IELTS?"])
            .args(["--headless", "--provider", "raw", "--max-rounds", "1"]),
    );
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("Three phases with weekly mock tests"),
        "{}",
        o.stdout
    );
    let seen = seen.lock().expect("seen").clone();
    // The turn refused is asked again (another turn may have started beside it).
    let first = turn_of(&seen[0]);
    let again = seen[1..]
        .iter()
        .find(|q| turn_of(q) == first)
        .expect("the refused turn asked again");
    let gap = again.at.duration_since(seen[0].at);
    assert!(gap >= Duration::from_millis(950), "retried after {gap:?}");
    // While it waited for the retry, the status line said so.
    assert!(
        status_lines(&o.stderr)
            .iter()
            .any(|l| l.contains("1 waiting to retry (next: ")),
        "{}",
        o.stderr
    );
}

#[test]
fn a_judge_meeting_a_429_waits_as_long_as_asked_and_scores() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixtures(
        dir.path(),
        &["answer_plan.json", "arith.jsonl", "arith.eval.json"],
    );
    let mut spec: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("arith.eval.json")).expect("spec"),
    )
    .expect("json");
    spec["fail_under"] = json!({});
    spec["checks"] = json!([{"name": "judge", "kind": "judge", "rubric": "rubric.json",
                             "judges": ["raw"], "votes": 1}]);
    std::fs::write(dir.path().join("judged.eval.json"), spec.to_string()).expect("spec");
    std::fs::write(
        dir.path().join("rubric.json"),
        json!({"name": "r", "criteria": [{"name": "correct", "question": "Is it right?"}]})
            .to_string(),
    )
    .expect("rubric");
    let (url, seen) = serve(|_, n| {
        if n == 0 {
            Reply::error(429, "slow down").header("retry-after", "1")
        } else {
            Reply::openai_text(
                r#"{"criteria": [{"name": "correct", "met": true, "evidence": "ok"}]}"#,
            )
        }
    });
    config(dir.path(), &url);
    let o = output(
        plexus(dir.path())
            .env("PLEXUS_CONFIG", dir.path().join("plexus.toml"))
            .args(["--db", "e.db", "eval", "judged.eval.json", "--out", "tree"])
            .args([
                "--limit",
                "1",
                "--chunk-ms",
                "0",
                "--first-chunk-ms",
                "0",
                "--json",
            ]),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r: Value = serde_json::from_str(&o.stdout).expect("json");
    let judge = r["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["check"] == "judge"))
        .cloned()
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(judge["passed"], 1, "{judge}");
    let seen = seen.lock().expect("seen").clone();
    assert_eq!(seen.len(), 2);
    let gap = seen[1].at.duration_since(seen[0].at);
    assert!(gap >= Duration::from_millis(950), "retried after {gap:?}");
}
