//! A whole debate through the real binary: on the simulated provider and against a
//! local HTTP server (both APIs), then rerun from its recording and diffed with no
//! difference; the `--events sse` stream checked line by line; a rerun of a tampered
//! recording and a diff of two different sessions show their differences.

use crate::common;

use std::path::Path;

use common::bin::{output, plexus};
use plexus::base::protocol::debate::{SseData, StreamEvent};

const FAST: [&str; 4] = ["--chunk-ms", "0", "--first-chunk-ms", "0"];

fn debate(dir: &Path, db: &str, question: &str, extra: &[&str]) -> common::bin::Out {
    let mut args = vec!["--db", db, "debate", question, "--headless"];
    args.extend_from_slice(extra);
    output(plexus(dir).args(&args))
}

fn latest_two(dir: &Path, db: &str) -> (String, String) {
    let out = output(plexus(dir).args(["--db", db, "runs", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("runs --json");
    (
        v[0]["run_id"].as_str().expect("test step").to_string(),
        v[1]["run_id"].as_str().expect("test step").to_string(),
    )
}

/// Reruns the latest session and diffs it with its recording: no difference.
fn rerun_and_diff_match(dir: &Path, db: &str) {
    rerun_and_diff_match_with(dir, db, &[]);
}

fn rerun_and_diff_match_with(dir: &Path, db: &str, global: &[&str]) {
    let mut args = vec!["--db", db];
    args.extend_from_slice(global);
    args.extend_from_slice(&["rerun", "latest", "--instant", "--headless"]);
    let re = output(plexus(dir).args(&args));
    assert_eq!(re.code, Some(0), "{}\n{}", re.stdout, re.stderr);
    assert!(re.stdout.contains("no difference"), "{}", re.stdout);
    let (new, old) = latest_two(dir, db);
    let d = output(plexus(dir).args(["--db", db, "diff", &old, &new]));
    assert_eq!(d.code, Some(0), "{}\n{}", d.stdout, d.stderr);
    assert_eq!(d.stdout.trim(), "no differences");
}

#[test]
fn a_debate_on_the_simulated_provider_converges_reruns_and_diffs_equal() {
    let tmp = tempfile::tempdir().expect("test step");
    let dir = tmp.path();
    let out = debate(dir, "d.db", "帮我制定IELTS备考计划", &FAST);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("Phase 1"),
        "the report on stdout: {}",
        out.stdout
    );
    assert!(
        out.stdout.contains("converged after 3 round(s)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("round 1 host: continue"),
        "progress on stderr: {}",
        out.stderr
    );
    // Stored as a run: listed, its turns as tasks.
    let show = output(plexus(dir).args(["--db", "d.db", "show", "latest"]));
    assert!(
        show.stdout.contains("r1.planner") && show.stdout.contains("r3.reporter"),
        "{}",
        show.stdout
    );
    // Its tokens per agent, from the model calls it logged.
    let tokens: Vec<(String, u64, u64)> = show
        .stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("AGENT") || !l.contains("OUTPUT TOK"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.first()?.to_string(),
                f.get(1)?.parse().ok()?,
                f.get(2)?.parse().ok()?,
            ))
        })
        .collect();
    let agents: Vec<&str> = tokens.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(agents, ["critic", "planner", "reporter"], "{}", show.stdout);
    assert!(
        tokens.iter().all(|(_, calls, out)| *calls >= 1 && *out > 0),
        "{}",
        show.stdout
    );
    rerun_and_diff_match(dir, "d.db");
    // With the recorded timing too.
    let timed = output(plexus(dir).args(["--db", "d.db", "rerun", "latest", "--headless"]));
    assert_eq!(timed.code, Some(0), "{}\n{}", timed.stdout, timed.stderr);
    assert!(timed.stdout.contains("no difference"), "{}", timed.stdout);
}

#[test]
fn a_debate_runs_against_a_local_server_of_either_api() {
    use plexus::dev::mock_server::{MockConfig, MockServer};
    let server = MockServer::start(
        MockConfig {
            stream_ms: 5,
            chunks: 4,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    // The OpenAI profile also compares positions through the server's /embeddings.
    for (kind, base, embedding) in [
        (
            "openai",
            format!("{}/v1", server.url()),
            "embedding_model = \"mock-embedding\"\n",
        ),
        ("anthropic", server.url(), ""),
    ] {
        let tmp = tempfile::tempdir().expect("test step");
        let dir = tmp.path();
        std::fs::write(
            dir.join("plexus.toml"),
            format!("[providers.local]\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"m\"\n{embedding}"),
        )
        .expect("test step");
        let out = output(plexus(dir).args([
            "--db",
            "h.db",
            "--config",
            "plexus.toml",
            "debate",
            "Plan three months of IELTS preparation",
            "--provider",
            "local",
            "--headless",
        ]));
        assert_eq!(out.code, Some(0), "{kind}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("converged"), "{kind}: {}", out.stdout);
        let similarity_by = if embedding.is_empty() {
            "similarity by builtin"
        } else {
            "similarity by endpoint:local/mock-embedding"
        };
        assert!(out.stderr.contains(similarity_by), "{kind}: {}", out.stderr);
        rerun_and_diff_match_with(dir, "h.db", &["--config", "plexus.toml"]);
    }
    // An endpoint that fails: the session compares by keywords, says so, and goes on.
    let tmp = tempfile::tempdir().expect("test step");
    let dir = tmp.path();
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nembedding_model = \"fail-embeddings\"\n",
            server.url()
        ),
    )
    .expect("test step");
    let out = output(plexus(dir).args([
        "--db",
        "f.db",
        "--config",
        "plexus.toml",
        "debate",
        "Plan a launch",
        "--provider",
        "local",
        "--headless",
    ]));
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("compare_positions failed in round 1"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("(keyword)"), "{}", out.stderr);
    assert!(server.requests() >= 14, "every turn went over HTTP");
}

#[test]
fn events_sse_prints_the_stream_line_by_line() {
    let tmp = tempfile::tempdir().expect("test step");
    let dir = tmp.path();
    let mut args = vec!["--events", "sse"];
    args.extend_from_slice(&FAST);
    let out = debate(dir, "s.db", "Plan a product launch", &args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.split('\n').collect();
    // `data: …`, blank, `data: …`, blank, …, `data: [DONE]`, blank, and the final "".
    assert_eq!(lines.last(), Some(&""), "ends with a newline");
    let body = &lines[..lines.len() - 1];
    assert!(body.len().is_multiple_of(2), "{body:?}");
    let mut items = Vec::new();
    for pair in body.chunks(2) {
        let payload = pair[0]
            .strip_prefix("data: ")
            .unwrap_or_else(|| panic!("{:?}", pair[0]));
        assert_eq!(pair[1], "", "each event is followed by a blank line");
        items.push(SseData::parse(payload).unwrap_or_else(|e| panic!("{payload}: {e}")));
    }
    assert_eq!(items.last(), Some(&SseData::Done), "ends with [DONE]");
    assert_eq!(items.iter().filter(|i| **i == SseData::Done).count(), 1);
    let kinds: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            SseData::Event(e) => Some(match &**e {
                StreamEvent::AgentOutput(a) => format!(
                    "{}@{}{}",
                    a.agent,
                    a.round,
                    if a.extra.contains_key("closing") {
                        " closing"
                    } else {
                        ""
                    }
                ),
                StreamEvent::HostDecision(h) => format!("host:{}", h.action),
                StreamEvent::FinalReport(_) => "report".into(),
                StreamEvent::Error(e) => format!("error:{}", e.error),
            }),
            SseData::Done => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "planner@1",
            "critic@1",
            "host:continue",
            "planner@2",
            "critic@2",
            "host:continue",
            "planner@3",
            "critic@3",
            "host:converge",
            "planner@3 closing",
            "critic@3 closing",
            "report"
        ]
    );
    // The seed's field names, as raw JSON.
    assert!(out.stdout.starts_with(
        "data: {\"type\":\"agent_output\",\"agent\":\"planner\",\"round\":1,\"content\":"
    ));
    let report = body.iter().rev().nth(3).expect("test step");
    assert!(
        report.contains("\"type\":\"final_report\"") && report.contains("\"plan\":{"),
        "{report}"
    );
}

#[test]
fn a_changed_recording_and_a_different_session_show_their_differences() {
    let tmp = tempfile::tempdir().expect("test step");
    let dir = tmp.path();
    assert_eq!(debate(dir, "t.db", "Plan a launch", &FAST).code, Some(0));
    // Change what the critic said in round 2 of the recording.
    let conn = rusqlite::Connection::open(dir.join("t.db")).expect("test step");
    let n = conn
        .execute(
            "UPDATE execution_logs SET payload = replace(payload, 'is sound once', 'is hopeless unless')
             WHERE kind = 'debate_reply' AND task_id = 'r2.critic'",
            [],
        )
        .expect("test step");
    assert_eq!(n, 1);
    drop(conn);
    let re =
        output(plexus(dir).args(["--db", "t.db", "rerun", "latest", "--instant", "--headless"]));
    assert_eq!(
        re.code,
        Some(5),
        "a rerun that differs exits 5: {}\n{}",
        re.stdout,
        re.stderr
    );
    assert!(
        re.stdout.contains("r2.critic"),
        "names the turn: {}",
        re.stdout
    );
    // Two different questions differ, and diff says where.
    assert_eq!(debate(dir, "t.db", "Plan a wedding", &FAST).code, Some(0));
    let (b, a) = latest_two(dir, "t.db");
    let d = output(plexus(dir).args(["--db", "t.db", "diff", &a, &b]));
    assert_eq!(d.code, Some(1), "{}\n{}", d.stdout, d.stderr);
    assert!(d.stdout.contains("spec.question"), "{}", d.stdout);
}

#[test]
fn two_debates_at_once_share_one_database() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let spawn = |q: &str| {
        let mut c = plexus(dir);
        c.args([
            "--db",
            "c.db",
            "debate",
            q,
            "--headless",
            "--chunk-ms",
            "5",
            "--first-chunk-ms",
            "5",
        ]);
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().expect("spawn")
    };
    let (a, b) = (spawn("Plan a launch"), spawn("Plan a move"));
    for child in [a, b] {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let runs = output(plexus(dir).args(["--db", "c.db", "runs", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&runs.stdout).expect("runs");
    assert_eq!(v.as_array().map(Vec::len), Some(2));
    assert!(
        v.as_array()
            .into_iter()
            .flatten()
            .all(|r| r["status"] == "succeeded"),
        "{v}"
    );
    // Each reruns from its own recording.
    for r in v.as_array().into_iter().flatten() {
        let id = r["run_id"].as_str().expect("id");
        let re = output(plexus(dir).args(["--db", "c.db", "rerun", id, "--instant", "--headless"]));
        assert_eq!(re.code, Some(0), "{}", re.stdout);
    }
}

#[test]
fn options_that_make_no_sense_are_refused_by_name() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    for (args, says) in [
        (
            vec!["--converge-above", "0.5"],
            "--continue-above (0.7) must be below --converge-above (0.5)",
        ),
        (
            vec!["--timezone", "Mars/Base"],
            "--timezone: `Mars/Base` is not an IANA time zone",
        ),
        (vec!["--agent-timeout", "0"], "--agent-timeout must be"),
        (vec!["--max-rounds", "9"], "9 is not in 1..=5"),
    ] {
        let out = debate(dir, "o.db", "Plan a launch", &args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    let empty = debate(dir, "o.db", "   ", &[]);
    assert_eq!(empty.code, Some(2), "{}", empty.stderr);
    assert!(
        empty.stderr.contains("the question is empty"),
        "{}",
        empty.stderr
    );
}

#[test]
fn a_debate_whose_provider_refuses_every_call_fails_with_the_reason() {
    use plexus::dev::mock_server::{MockConfig, MockFault, MockServer};
    // A 429 is tried as every model call is (the first try and five retries), a 400
    // once (it would fail again).
    for (code, says, tries) in [
        (429u16, "HTTP 429 Too Many Requests", 6u64),
        (400, "HTTP 400 Bad Request", 1),
    ] {
        let refuse = MockFault::Status {
            code,
            retry_after: Some("0".into()),
        };
        let script = [
            "r1.planner",
            "r1.critic",
            "r2.planner",
            "r2.critic",
            "r1.reporter",
        ]
        .iter()
        .map(|t| (t.to_string(), vec![refuse.clone(); 10]))
        .collect();
        let server = MockServer::start(
            MockConfig {
                stream_ms: 5,
                script,
                ..MockConfig::default()
            },
            0,
            1,
        )
        .expect("mock server");
        let tmp = tempfile::tempdir().expect("test step");
        let dir = tmp.path();
        std::fs::write(
            dir.join("plexus.toml"),
            format!(
                "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n",
                server.url()
            ),
        )
        .expect("test step");
        let out = output(plexus(dir).args([
            "--db",
            "r.db",
            "--config",
            "plexus.toml",
            "debate",
            "Plan three months of IELTS preparation",
            "--provider",
            "local",
            "--headless",
            "--retry-delay-div",
            "1000",
        ]));
        assert_eq!(out.code, Some(3), "{code}: {}\n{}", out.stdout, out.stderr);
        // Round 1's tries, no more: two agents, `tries` each.
        assert_eq!(server.requests(), 2 * tries, "{code}: {}", out.stderr);
        // The reason, whole, on the progress line and under the missing report.
        let line = out
            .stderr
            .lines()
            .find(|l| l.starts_with("debate ended failed after 1 round(s): "))
            .unwrap_or_else(|| panic!("{code}: {}", out.stderr));
        assert!(line.contains("no valid position after round 1"), "{line}");
        for agent in ["planner", "critic"] {
            assert!(
                line.contains(&format!("{agent} failed {tries} time(s) in round 1")),
                "{line}"
            );
        }
        assert!(line.contains(says), "{line}");
        assert!(line.contains(&format!("mock status {code}")), "{line}");
        let last = if code == 400 {
            "not retried"
        } else {
            "mock status 429"
        };
        assert!(line.ends_with(last), "the reason is whole: {line}");
        assert!(
            out.stdout.contains("(no report: no valid position"),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.contains("failed after 1 round(s)"),
            "{}",
            out.stdout
        );
        // Stored as failed, with the reason.
        let show = output(plexus(dir).args(["--db", "r.db", "show", "latest", "--json"]));
        let v: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
        assert_eq!(v["run"]["status"], "failed");
        assert_eq!(v["debate_session"]["status"], "failed");
        assert!(
            v["debate_session"]["end_reason"]
                .as_str()
                .is_some_and(|r| r.contains(says)),
            "{v}"
        );
    }
}

/// The lines of the report as the Debate screen shows it, for the latest session.
fn shown_report(dir: &Path, db: &str) -> String {
    let store = plexus::data::store::Store::open(&dir.join(db)).expect("store");
    let (run, _) = latest_two_or_one(dir, db);
    let events = plexus::features::debate::replay::load_events(&store, &run).expect("events");
    let d = plexus::model::state::debate::DebateState::from_events(&events);
    let theme = plexus::tui::ui::theme::Theme::dark();
    plexus::tui::ui::debate::report::lines(100, &d, 0, 0, &theme)
        .out
        .iter()
        .map(|l| l.iter().map(|(t, _)| t.as_str()).collect::<String>() + "\n")
        .collect()
}

fn latest_two_or_one(dir: &Path, db: &str) -> (String, Option<String>) {
    let out = output(plexus(dir).args(["--db", db, "runs", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("runs --json");
    (
        v[0]["run_id"].as_str().expect("a run").to_string(),
        v[1]["run_id"].as_str().map(str::to_string),
    )
}

#[test]
fn the_simulated_debate_argues_about_the_question_and_its_report_lists_agreements_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let q = "How should we migrate the billing database to Postgres?";
    let out = debate(dir, "q.db", q, &FAST);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let show = output(plexus(dir).args(["--db", "q.db", "show", "latest", "--json"]));
    let all = show.stdout.to_lowercase();
    for exam in ["exam", "mock test", "practice session", "learner"] {
        assert!(!all.contains(exam), "{exam:?} in a debate about a database");
    }
    assert!(all.contains("rollback"), "{}", show.stdout);
    assert!(all.contains("billing database"), "{}", show.stdout);
    // Each agreement shows once in the report, though its text lists them too.
    let report = shown_report(dir, "q.db");
    assert!(report.contains("## Agreed"), "{report}");
    for agreed in [
        "keep a tested rollback for every step",
        "map what exists before changing anything",
    ] {
        let listed = report
            .lines()
            .filter(|l| l.trim_start_matches(['-', '•', ' ']).trim() == agreed)
            .count();
        assert_eq!(listed, 1, "{agreed}: {report}");
    }
    // Another kind of question, another debate; an exam plan stays one.
    let launch = debate(dir, "q.db", "Plan a product launch", &FAST);
    assert_eq!(launch.code, Some(0), "{}", launch.stderr);
    assert!(
        !launch.stdout.to_lowercase().contains("mock test"),
        "{}",
        launch.stdout
    );
    let ielts = debate(dir, "q.db", "Plan three months of IELTS preparation", &FAST);
    assert!(ielts.stdout.contains("mock test"), "{}", ielts.stdout);
}
