//! Cost in money from the outside: a price table in a test config gives each call's cost,
//! shown per agent and per run in the headless summary, `show` and `runs` (`—` and JSON
//! `null` without a price, never 0); a money budget stops new calls and ends the run
//! `budget_reached` with exit 7, and a resume with a larger one finishes it; usage a
//! server reports (cached prompt tokens first, in an order our simulation never uses) is
//! what is billed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::Value;

use crate::common::bin::{gen_plan, output, plexus, Out};

/// US dollars per million tokens of the simulated model in the test config.
const INPUT: f64 = 2.5;
const OUTPUT: f64 = 10.0;

fn priced_config(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("priced.toml");
    std::fs::write(
        &path,
        format!("[prices.\"simulated\"]\ninput = {INPUT}\noutput = {OUTPUT}\n"),
    )
    .expect("config");
    path
}

fn run_in(dir: &Path, config: Option<&Path>, args: &[&str]) -> Out {
    let mut c = plexus(dir);
    c.args(["--db", "c.db"]);
    if let Some(cfg) = config {
        c.arg("--config").arg(cfg);
    }
    output(c.args(args))
}

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// (prompt, output, cost) of every invocation row.
fn rows(dir: &Path) -> Vec<(f64, f64, Option<f64>)> {
    let conn = rusqlite::Connection::open(dir.join("c.db")).expect("db");
    let mut st = conn
        .prepare("SELECT prompt_tokens, output_tokens, cost_usd FROM invocations")
        .expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn a_priced_run_shows_its_cost_in_the_summary_show_and_runs_and_an_unpriced_one_a_dash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = priced_config(dir.path());
    let out = run_in(dir.path(), Some(&cfg), &["demo", "--headless"]);
    assert_eq!(out.code, Some(6), "{}", out.stderr);
    // Each call's cost is its tokens at the model's prices (the simulated model reports
    // no usage, so plexus's own counts are billed).
    let calls = rows(dir.path());
    assert!(calls.len() >= 5, "{calls:?}");
    let mut total = 0.0;
    for (p, o, cost) in &calls {
        let want = (p * INPUT + o * OUTPUT) / 1e6;
        let got = cost.expect("every call of a priced model has a cost");
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        total += got;
    }
    let shown = plexus::base::cost::usd(total);
    assert!(
        out.stdout.contains(&format!("cost {shown}")),
        "{}",
        out.stdout
    );
    let show = run_in(dir.path(), Some(&cfg), &["show", "latest"]);
    assert!(
        show.stdout.contains(&format!("cost      {shown}")),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("PER CALL"), "{}", show.stdout);
    let v = json(&run_in(
        dir.path(),
        Some(&cfg),
        &["show", "latest", "--json"],
    ));
    let run_cost = v["run"]["cost_usd"].as_f64().expect("a number");
    assert!((run_cost - total).abs() < 1e-9);
    let per_agent: f64 = v["tokens_per_agent"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a["cost_usd"].as_f64().expect("priced"))
        .sum();
    assert!((per_agent - total).abs() < 1e-9);
    let runs = run_in(dir.path(), Some(&cfg), &["runs"]);
    assert!(
        runs.stdout.contains("COST") && runs.stdout.contains(&shown),
        "{}",
        runs.stdout
    );

    // The same demo with no price: a dash everywhere, null in JSON, never 0.
    let bare = tempfile::tempdir().expect("tempdir");
    let out = run_in(bare.path(), None, &["demo", "--headless"]);
    assert!(out.stdout.contains("cost —"), "{}", out.stdout);
    assert!(!out.stdout.contains("$0.00"), "{}", out.stdout);
    assert!(rows(bare.path()).iter().all(|r| r.2.is_none()));
    let show = run_in(bare.path(), None, &["show", "latest"]);
    assert!(show.stdout.contains("cost      —"), "{}", show.stdout);
    let v = json(&run_in(bare.path(), None, &["runs", "--json"]));
    assert!(v[0]["cost_usd"].is_null(), "{v}");
    let v = json(&run_in(bare.path(), None, &["show", "latest", "--json"]));
    assert!(v["tokens_per_agent"][0]["cost_usd"].is_null(), "{v}");
}

#[test]
fn a_money_budget_stops_new_calls_with_exit_7_and_a_larger_one_resumes_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = priced_config(dir.path());
    let plan = gen_plan(dir.path(), 40, 10);
    let plan = plan.to_str().expect("path");
    let out = run_in(
        dir.path(),
        Some(&cfg),
        &[
            "run",
            plan,
            "--headless",
            "--concurrency",
            "2",
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
            "--max-cost",
            "0.02",
        ],
    );
    assert_eq!(out.code, Some(7), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("run budget_reached") || out.stderr.contains("budget_reached"));
    assert!(
        out.stderr.contains("--max-cost USD"),
        "the next step is named: {}",
        out.stderr
    );
    let v = json(&run_in(dir.path(), Some(&cfg), &["runs", "--json"]));
    assert_eq!(v[0]["status"], "budget_reached");
    let run = v[0]["run_id"].as_str().expect("id").to_string();
    let spent: f64 = rows(dir.path()).iter().filter_map(|r| r.2).sum();
    assert!(
        spent >= 0.02,
        "it stopped only once the budget was spent: {spent}"
    );
    // No call started after the budget was reached: only the calls in flight (at most
    // the concurrency) ended after it.
    let log = run_in(dir.path(), None, &["log", &run]);
    let kinds: Vec<String> = log
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("line")["kind"].to_string())
        .collect();
    let at = kinds
        .iter()
        .position(|k| k == "\"budget_reached\"")
        .expect("a budget_reached event");
    assert!(!kinds[at..].iter().any(|k| k == "\"invocation_started\""));
    assert!(
        kinds[at..]
            .iter()
            .filter(|k| *k == "\"invocation_finished\"")
            .count()
            <= 2
    );
    let calls_before = rows(dir.path()).len();

    // The same budget again: nothing runs, the run stays where it was.
    let again = run_in(dir.path(), Some(&cfg), &["resume", &run, "--headless"]);
    assert_eq!(again.code, Some(7), "{}", again.stderr);
    assert_eq!(rows(dir.path()).len(), calls_before, "no new call");

    // A larger budget finishes it; the run's cost is every call's, both sessions.
    let done = run_in(
        dir.path(),
        Some(&cfg),
        &["resume", &run, "--headless", "--max-cost", "50"],
    );
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let v = json(&run_in(dir.path(), Some(&cfg), &["runs", "--json"]));
    assert_eq!(v[0]["status"], "succeeded");
    let all: f64 = rows(dir.path()).iter().filter_map(|r| r.2).sum();
    assert!((v[0]["cost_usd"].as_f64().expect("cost") - all).abs() < 1e-9);
}

#[test]
fn a_budget_without_a_price_and_a_price_that_is_not_a_number_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run_in(dir.path(), None, &["demo", "--headless", "--max-cost", "1"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("[prices.\"simulated\"]") && out.stderr.contains("money budget"),
        "{}",
        out.stderr
    );
    assert!(!dir.path().join("c.db").exists() || rows(dir.path()).is_empty());
    let out = run_in(
        dir.path(),
        None,
        &["demo", "--headless", "--max-cost", "-3"],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[prices.\"gpt-x\"]\ninput = \"cheap\"\noutput = 1\n").expect("write");
    let out = run_in(dir.path(), Some(&bad), &["demo", "--headless"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("bad.toml:2") && out.stderr.contains("input"),
        "{}",
        out.stderr
    );
}

/// An OpenAI-compatible server written here, not plexus's mock: its usage chunk comes
/// first, with the cached tokens before the counts and fields plexus does not know.
fn odd_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().expect("clone"));
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let events = [
                r#"{"usage":{"prompt_tokens_details":{"cached_tokens":600,"audio_tokens":0},"completion_tokens":500,"total_tokens":1500,"prompt_tokens":1000},"choices":[],"system_fingerprint":"x"}"#,
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"no atoms here"},"logprobs":null}]}"#,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
                "[DONE]",
            ];
            let mut text = String::from(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            );
            for e in events {
                text.push_str(&format!("data: {e}\n\n"));
            }
            let _ = conn.write_all(text.as_bytes());
        }
    });
    url
}

#[test]
fn usage_a_server_reports_with_cached_tokens_is_billed_at_the_cached_price() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = odd_server();
    let cfg = dir.path().join("odd.toml");
    std::fs::write(
        &cfg,
        format!(
            "[providers.odd]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"gpt-odd\"\n\n\
             [prices.\"gpt-odd\"]\ninput = 1.0\noutput = 2.0\ncached_input = 0.5\n"
        ),
    )
    .expect("config");
    let plan = gen_plan(dir.path(), 2, 1);
    let out = run_in(
        dir.path(),
        Some(&cfg),
        &[
            "run",
            plan.to_str().expect("path"),
            "--provider",
            "odd",
            "--headless",
            "--retry-delay-div",
            "1000",
        ],
    );
    assert!(
        out.stdout.contains("cost $"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let conn = rusqlite::Connection::open(dir.path().join("c.db")).expect("db");
    let mut st = conn
        .prepare("SELECT provider_prompt_tokens, provider_cached_tokens, cost_usd FROM invocations")
        .expect("query");
    let rows: Vec<(i64, i64, f64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert!(!rows.is_empty());
    // 400 fresh prompt tokens at 1.0, 600 cached at 0.5, 500 output at 2.0, per million.
    let want = (400.0 * 1.0 + 600.0 * 0.5 + 500.0 * 2.0) / 1e6;
    for (prompt, cached, cost) in rows {
        assert_eq!((prompt, cached), (1000, 600));
        assert!((cost - want).abs() < 1e-12, "{cost} vs {want}");
    }
}

#[test]
fn a_tool_using_loop_starts_no_step_once_the_budget_is_spent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = priced_config(dir.path());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let db = dir.path().join("c.db");
    let out = output(
        plexus(dir.path())
            .current_dir(repo)
            .arg("--db")
            .arg(&db)
            .arg("--config")
            .arg(&cfg)
            .args([
                "run",
                "fixtures/plans/react_tools.json",
                "--headless",
                "--concurrency",
                "1",
                "--chunk-ms",
                "0",
                "--first-chunk-ms",
                "0",
                "--max-cost",
                "0.000001",
            ]),
    );
    assert_eq!(out.code, Some(7), "{}\n{}", out.stdout, out.stderr);
    let store = plexus::data::store::Store::open(&db).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let events: Vec<plexus::model::event::EngineEvent> = store
        .events(&run, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .map(|e| e.event.expect("decodes"))
        .collect();
    use plexus::model::event::EngineEvent as E;
    let stopped = events
        .iter()
        .find_map(|e| match e {
            E::LoopFinished(l) if l.stop == "money_budget" => Some(l.steps),
            _ => None,
        })
        .expect("a loop stopped by the budget");
    assert_eq!(stopped, 1, "it ended its first step and started no other");
    let fin = events
        .iter()
        .find_map(|e| match e {
            E::InvocationFinished(f)
                if f.error_message.as_deref()
                    == Some("stopped: the run's money budget was reached") =>
            {
                Some(f)
            }
            _ => None,
        })
        .expect("the loop's invocation says why it stopped");
    assert!(fin.status.is_none());
    assert!(fin.cost_usd.is_some_and(|c| c > 0.0), "its step was billed");
    // Its task waits for a resume with a larger budget.
    let v = json(&output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["runs", "--json"]),
    ));
    assert_eq!(v[0]["status"], "budget_reached");
}
