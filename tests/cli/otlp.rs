//! Runs sent as OpenTelemetry traces: a receiver started here on 127.0.0.1 decodes what
//! plexus sends (protobuf with the same prost types, or JSON) and the tests check the
//! span tree of a demo, a tool-using run and a debate; that a live run and `export
//! --otlp` of it give the same spans; retries on 503; that a collector that is down or
//! slow does not change a run's outcome and costs it at most the flush wait; that
//! dropped spans are counted; that prompts and keys are not sent.

use crate::common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use super::otlp_receiver::Receiver;
use common::bin::{output, plexus, Out};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;

const FAST: [&str; 4] = ["--chunk-ms", "0", "--first-chunk-ms", "0"];

fn attr(span: &Span, key: &str) -> Option<String> {
    let v = span
        .attributes
        .iter()
        .find(|a| a.key == key)?
        .value
        .as_ref()?;
    Some(match v.value.as_ref()? {
        Value::StringValue(s) => s.clone(),
        Value::IntValue(i) => i.to_string(),
        Value::DoubleValue(d) => d.to_string(),
        Value::BoolValue(b) => b.to_string(),
        other => format!("{other:?}"),
    })
}

fn run(dir: &Path, args: &[&str]) -> Out {
    output(plexus(dir).args(args))
}

fn latest(dir: &Path) -> String {
    let out = run(dir, &["--db", "t.db", "runs", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("runs --json");
    v[0]["run_id"].as_str().expect("a run").to_string()
}

/// Spans keyed by id; each parent exists; one trace.
fn tree(spans: &[Span]) -> BTreeMap<Vec<u8>, Span> {
    let by_id: BTreeMap<_, _> = spans
        .iter()
        .map(|s| (s.span_id.clone(), s.clone()))
        .collect();
    assert_eq!(by_id.len(), spans.len(), "span ids are unique");
    for s in spans {
        assert_eq!(s.trace_id, spans[0].trace_id, "one trace");
        assert!(
            s.parent_span_id.is_empty() || by_id.contains_key(&s.parent_span_id),
            "the parent of {} was sent",
            s.name
        );
        assert!(s.end_time_unix_nano >= s.start_time_unix_nano, "{}", s.name);
        assert!(attr(s, "openinference.span.kind").is_some(), "{}", s.name);
    }
    by_id
}

fn kind_of(s: &Span) -> String {
    attr(s, "openinference.span.kind").unwrap_or_default()
}

fn sorted(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    spans
}

#[test]
fn a_demo_is_a_span_tree_and_its_export_sends_the_same_spans() {
    let dir = tempfile::tempdir().expect("tmp");
    let live = Receiver::start(Vec::new(), Duration::ZERO);
    let mut args = vec!["--db", "t.db", "demo", "--headless"];
    args.extend(FAST);
    let url = live.url();
    args.extend(["--otlp", url.as_str()]);
    let out = run(dir.path(), &args);
    assert!(out.stderr.contains("otlp: "), "{}", out.stderr);
    let spans = live.spans();
    let by_id = tree(&spans);
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1);
    let root = roots[0];
    assert_eq!(root.name, "invoke_workflow AVP_E2E_20260203_001");
    assert_eq!(kind_of(root), "CHAIN");
    assert_eq!(
        attr(root, "gen_ai.operation.name").as_deref(),
        Some("invoke_workflow")
    );
    // The demo ends waiting for a review: an error status.
    assert_eq!(
        attr(root, "plexus.run.status").as_deref(),
        Some("awaiting_review")
    );
    assert_eq!(root.status.as_ref().map(|s| s.code), Some(2));
    let tasks: Vec<_> = spans.iter().filter(|s| kind_of(s) == "AGENT").collect();
    assert_eq!(tasks.len(), 5, "one span per task");
    for t in &tasks {
        assert_eq!(t.parent_span_id, root.span_id);
        assert!(t.name.starts_with("invoke_agent "), "{}", t.name);
        assert_eq!(
            attr(t, "gen_ai.operation.name").as_deref(),
            Some("invoke_agent")
        );
        assert!(attr(t, "gen_ai.agent.name").is_some());
        assert!(attr(t, "plexus.task.id").is_some());
    }
    let calls: Vec<_> = spans.iter().filter(|s| kind_of(s) == "LLM").collect();
    assert!(
        calls.len() > tasks.len(),
        "retries make more calls than tasks"
    );
    for c in &calls {
        assert_eq!(c.name, "chat simulated");
        assert_eq!(kind_of(&by_id[&c.parent_span_id]), "AGENT");
        for key in [
            "gen_ai.provider.name",
            "gen_ai.request.model",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.response.finish_reasons",
            "plexus.attempt",
        ] {
            assert!(attr(c, key).is_some(), "{key} on {}", c.name);
        }
        assert!(
            attr(c, "gen_ai.input.messages").is_none(),
            "no content by default"
        );
        assert!(
            attr(c, "gen_ai.output.messages").is_none(),
            "no content by default"
        );
    }
    assert!(
        calls
            .iter()
            .any(|c| attr(c, "error.type").is_some_and(|e| e.starts_with('E'))),
        "a failed call names its error code"
    );
    assert!(
        tasks
            .iter()
            .any(|t| t.events.iter().any(|e| e.name == "plexus.retry_scheduled")),
        "retries are span events"
    );
    // The stored run sent again: the same spans, ids and all.
    let export = Receiver::start(Vec::new(), Duration::ZERO);
    let run_id = latest(dir.path());
    let url = export.url();
    let out = run(
        dir.path(),
        &["--db", "t.db", "export", &run_id, "--otlp", &url],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("otlp: {} spans sent", spans.len())),
        "{}",
        out.stderr
    );
    assert_eq!(sorted(export.spans()), sorted(spans));
}

#[test]
fn tool_calls_are_tool_spans_under_their_model_call() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    for (name, uses) in [
        ("literature-review", "citation-check"),
        ("citation-check", "literature-review"),
    ] {
        let sd = d.join("skills").join(name);
        std::fs::create_dir_all(&sd).expect("skill dir");
        std::fs::write(
            sd.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: notes\nuses: [{uses}]\n---\n\n# {name}\n\nRead the notes.\n"),
        )
        .expect("skill");
    }
    std::fs::create_dir_all(d.join("notes")).expect("notes");
    std::fs::write(d.join("notes/diffusion.md"), "# Diffusion planners\n").expect("note");
    let plan = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plans/react_tools.json"),
    )
    .expect("fixture");
    std::fs::write(d.join("plan.json"), plan).expect("plan");
    let rx = Receiver::start(Vec::new(), Duration::ZERO);
    let url = rx.url();
    let mut args = vec![
        "--db",
        "t.db",
        "run",
        "plan.json",
        "--headless",
        "--otlp",
        &url,
    ];
    args.extend(FAST);
    let out = run(d, &args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let spans = rx.spans();
    let by_id = tree(&spans);
    let tools: Vec<_> = spans.iter().filter(|s| kind_of(s) == "TOOL").collect();
    assert!(!tools.is_empty(), "the run used tools");
    for t in tools {
        assert!(t.name.starts_with("execute_tool "), "{}", t.name);
        assert_eq!(
            attr(t, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert!(attr(t, "gen_ai.tool.name").is_some());
        assert!(attr(t, "gen_ai.tool.call.id").is_some());
        assert!(
            attr(t, "gen_ai.tool.call.arguments").is_none(),
            "no content by default"
        );
        assert_eq!(kind_of(&by_id[&t.parent_span_id]), "LLM");
    }
}

#[test]
fn a_debate_is_a_trace_of_turns_and_host_decisions() {
    let dir = tempfile::tempdir().expect("tmp");
    let rx = Receiver::start(Vec::new(), Duration::ZERO);
    let url = rx.url();
    let mut args = vec![
        "--db",
        "t.db",
        "debate",
        "Plan a week of study",
        "--headless",
        "--otlp",
        &url,
    ];
    args.extend(FAST);
    let out = run(dir.path(), &args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let spans = rx.spans();
    tree(&spans);
    let root = spans
        .iter()
        .find(|s| s.parent_span_id.is_empty())
        .expect("a root");
    assert_eq!(root.name, "invoke_workflow debate");
    assert!(attr(root, "plexus.debate.status").is_some());
    assert!(root.events.iter().any(|e| e.name == "plexus.host_decided"));
    assert!(root
        .events
        .iter()
        .any(|e| e.name == "plexus.positions_compared"));
    let agents: Vec<_> = spans.iter().filter(|s| kind_of(s) == "AGENT").collect();
    assert!(
        agents.iter().any(|a| a.name == "invoke_agent planner"),
        "{agents:?}"
    );
    assert!(agents.iter().any(|a| a.name == "invoke_agent critic"));
    assert!(spans
        .iter()
        .any(|s| kind_of(s) == "LLM" && s.name == "chat simulated"));
}

/// A small run stored in `t.db` of `dir`; its id.
fn small_run(dir: &Path, extra: &[&str]) -> (Out, Duration) {
    std::fs::write(dir.join("plan.json"), common::one_task_plan("")).expect("plan");
    let mut args = vec!["--db", "t.db", "run", "plan.json", "--headless"];
    args.extend(FAST);
    args.extend_from_slice(extra);
    let t = Instant::now();
    let out = run(dir, &args);
    (out, t.elapsed())
}

#[test]
fn json_is_sent_as_json_and_a_503_is_retried() {
    let dir = tempfile::tempdir().expect("tmp");
    small_run(dir.path(), &[]);
    let run_id = latest(dir.path());
    let rx = Receiver::start(vec![503], Duration::ZERO);
    let url = rx.url();
    let out = output(
        plexus(dir.path())
            .args(["--db", "t.db", "export", &run_id, "--otlp", &url])
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
            .env("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=a%20b"),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let reqs = rx.requests();
    assert_eq!(
        reqs.len(),
        1,
        "the refused batch was sent again and accepted"
    );
    assert_eq!(reqs[0].content_type, "application/json");
    assert!(reqs[0].headers.contains(&("x-tenant".into(), "a b".into())));
    let v: serde_json::Value = serde_json::from_slice(&reqs[0].body).expect("JSON");
    let spans = &v["resourceSpans"][0]["scopeSpans"][0]["spans"];
    assert!(spans.as_array().is_some_and(|s| s.len() >= 3), "{v:#}");
    assert!(
        spans[0]["traceId"].as_str().is_some_and(|t| t.len() == 32),
        "hex ids"
    );
}

#[test]
fn a_collector_down_or_slow_does_not_change_the_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let (base, base_time) = small_run(dir.path(), &[]);
    let outcome = |o: &Out| {
        (
            o.code,
            o.stdout
                .lines()
                .last()
                .map(|l| l.split(": ").nth(1).map(str::to_string)),
        )
    };
    // Down: a port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let down = format!("http://127.0.0.1:{port}");
    let (o, t) = small_run(dir.path(), &["--otlp", &down]);
    assert_eq!(outcome(&o), outcome(&base), "{}", o.stderr);
    // The documented bound: the flush wait (5 s) on top of the run; a margin for CI.
    assert!(
        t < base_time + Duration::from_secs(15),
        "{t:?} vs {base_time:?}"
    );
    assert!(o.stderr.contains("otlp: 0 spans sent"), "{}", o.stderr);
    // Nothing listens there: the line says the connection was refused, not that the
    // collector was slow.
    assert!(
        o.stderr
            .contains("connection refused: nothing listens at that address")
            && !o.stderr.contains("slower than the run"),
        "{}",
        o.stderr
    );
    // Slow: answers after a minute; every span of the run is dropped and counted.
    let slow = Receiver::start(Vec::new(), Duration::from_secs(60));
    let url = slow.url();
    let (o, t) = small_run(dir.path(), &["--otlp", &url]);
    assert_eq!(outcome(&o), outcome(&base), "{}", o.stderr);
    assert!(
        t < base_time + Duration::from_secs(15),
        "{t:?} vs {base_time:?}"
    );
    let count = Receiver::start(Vec::new(), Duration::ZERO);
    let curl = count.url();
    let run_id = latest(dir.path());
    let e = run(
        dir.path(),
        &["--db", "t.db", "export", &run_id, "--otlp", &curl],
    );
    assert_eq!(e.code, Some(0), "{}", e.stderr);
    let n = count.spans().len();
    assert!(
        o.stderr.contains(&format!(
            "otlp: 0 spans sent to {url}/v1/traces; {n} dropped"
        )),
        "{n} spans: {}",
        o.stderr
    );
}

#[test]
fn prompts_and_keys_are_not_sent_unless_content_is_asked_and_keys_never() {
    const KEY: &str = "sk-otlp-secret-9d3e1f";
    let dir = tempfile::tempdir().expect("tmp");
    let server = plexus::dev::mock_server::MockServer::start(
        plexus::dev::mock_server::MockConfig {
            echo_key: true,
            ..Default::default()
        },
        0,
        1,
    )
    .expect("mock server");
    std::fs::write(
        dir.path().join("plexus.toml"),
        format!(
            "[providers.mock]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m-1\"\napi_key_env = \"PLEXUS_OTLP_TEST_KEY\"\n",
            server.url()
        ),
    )
    .expect("config");
    std::fs::write(dir.path().join("plan.json"), common::one_task_plan("")).expect("plan");
    let send = |content: bool| {
        let rx = Receiver::start(Vec::new(), Duration::ZERO);
        let url = rx.url();
        let mut args = vec![
            "--db",
            "t.db",
            "--config",
            "plexus.toml",
            "run",
            "plan.json",
            "--headless",
            "--provider",
            "mock",
            "--retry-delay-div",
            "1000",
            "--otlp",
            &url,
        ];
        if content {
            args.push("--otlp-content");
        }
        let out = output(
            plexus(dir.path())
                .args(&args)
                .env("PLEXUS_OTLP_TEST_KEY", KEY),
        );
        assert!(out.stderr.contains("otlp: "), "{}", out.stderr);
        let bytes: Vec<u8> = rx.requests().into_iter().flat_map(|r| r.body).collect();
        (String::from_utf8_lossy(&bytes).into_owned(), rx.spans())
    };
    let (plain, spans) = send(false);
    assert!(!plain.contains(KEY), "the key was sent");
    assert!(!plain.contains("gen_ai.input.messages"));
    assert!(!plain.contains("gen_ai.system_instructions"));
    let call = spans
        .iter()
        .find(|s| kind_of(s) == "LLM")
        .expect("a model call");
    assert_eq!(call.name, "chat m-1");
    assert_eq!(
        attr(call, "gen_ai.provider.name").as_deref(),
        Some("openai")
    );
    let (with, spans) = send(true);
    assert!(!with.contains(KEY), "the key was sent with the content");
    let call = spans
        .iter()
        .find(|s| kind_of(s) == "LLM")
        .expect("a model call");
    let input = attr(call, "gen_ai.input.messages").expect("the prompt is sent");
    assert!(input.contains("\"role\":\"user\""), "{input}");
    assert!(attr(call, "gen_ai.system_instructions").is_some());
    assert!(attr(call, "gen_ai.output.messages").is_some());
}
