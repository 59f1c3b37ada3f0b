//! The HTTP providers end to end on the engine, against a mock OpenAI/Anthropic server on
//! 127.0.0.1 started by each test: streaming and whole answers, usage, and every
//! transport fault of issue 5 with the status, error code, retry count and kept text it
//! must produce.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use common::*;
use plexus::base::protocol::ErrorCode;
use plexus::data::provider::{HttpProvider, ProviderKind, ProviderProfile};
use plexus::dev::mock_server::{MockConfig, MockFault, MockServer};
use plexus::model::event::{EngineEvent, RunStatus};
use plexus::run::engine::EngineConfig;

const APIS: [ProviderKind; 2] = [ProviderKind::Openai, ProviderKind::Anthropic];

fn server(script: Vec<MockFault>) -> MockServer {
    MockServer::start(
        MockConfig {
            stream_ms: 40,
            chunks: 10,
            script: HashMap::from([("A".to_string(), script)]),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server")
}

fn profile(kind: ProviderKind, base: &str) -> ProviderProfile {
    let mut p = ProviderProfile::simulated();
    p.name = "mock".into();
    p.kind = kind;
    p.base_url = match kind {
        ProviderKind::Openai => format!("{base}/v1"),
        _ => base.to_string(),
    };
    p.model = "mock-model".into();
    p.idle_timeout_s = 0.5;
    p.connect_timeout_s = 5.0;
    p.max_response_bytes = 64 * 1024;
    p
}

/// Engine settings: millisecond retries, timeouts of a few seconds.
fn config() -> EngineConfig {
    EngineConfig {
        timeout_scale: 0.01,
        ..test_config()
    }
}

async fn run(p: ProviderProfile) -> Ran {
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    run_plan_with(&one_task_plan(""), provider, config()).await
}

/// `(error codes, message)` of each invocation of task A, in order.
fn attempts(r: &Ran) -> Vec<(Vec<ErrorCode>, String)> {
    r.of(|e| match e {
        EngineEvent::InvocationFinished(f) => Some(f),
        _ => None,
    })
    .into_iter()
    .map(|(_, f)| {
        (
            f.errors.clone(),
            f.error_message.clone().unwrap_or_default(),
        )
    })
    .collect()
}

/// `(code, delay)` of each scheduled retry.
fn retries(r: &Ran) -> Vec<(ErrorCode, u64)> {
    r.of(|e| match e {
        EngineEvent::RetryScheduled(x) => Some(x),
        _ => None,
    })
    .into_iter()
    .map(|(_, x)| (x.error_code, x.delay_ms))
    .collect()
}

/// Text logged in chunk events before the first invocation finished.
fn first_attempt_text(r: &Ran) -> String {
    let mut text = String::new();
    for e in &r.events {
        match e.event.as_ref() {
            Ok(EngineEvent::Chunk(c)) => text.push_str(&c.text),
            Ok(EngineEvent::InvocationFinished(_)) => break,
            _ => {}
        }
    }
    text
}

fn first_code(r: &Ran) -> ErrorCode {
    attempts(r)[0].0[0]
}

#[tokio::test]
async fn streamed_answers_succeed_with_usage_stored_beside_our_counts() {
    for kind in APIS {
        let s = server(vec![]);
        let r = run(profile(kind, &s.url())).await;
        assert_eq!(r.status_of("A"), "success", "{kind:?}: {:?}", attempts(&r));
        assert_eq!(r.invocations_of("A"), 1);
        let fin = r.of(|e| match e {
            EngineEvent::InvocationFinished(f) => Some(f),
            _ => None,
        });
        let usage = fin[0].1.provider_usage.expect("usage reported");
        assert!(
            usage.prompt_tokens > 100 && usage.completion_tokens > 10,
            "{usage:?}"
        );
        let conn = rusqlite::Connection::open(&r.db).expect("db");
        let (pp, po, ours): (i64, i64, i64) = conn
            .query_row(
                "SELECT provider_prompt_tokens, provider_output_tokens, output_tokens FROM invocations",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .expect("row");
        assert_eq!(
            (pp as u64, po as u64),
            (usage.prompt_tokens, usage.completion_tokens)
        );
        // The mock counts with cl100k too: our count of the streamed text agrees.
        assert_eq!(ours, po, "{kind:?}");
        let chunks = r
            .of(|e| match e {
                EngineEvent::Chunk(c) => Some(c),
                _ => None,
            })
            .len();
        assert!(chunks >= 3, "streamed in pieces, got {chunks} chunk events");
        let seen = s.seen();
        assert_eq!(seen.len(), 1);
        let body: serde_json::Value = serde_json::from_str(&seen[0].body).expect("json body");
        assert_eq!(body["model"], "mock-model");
        assert_eq!(body["stream"], true);
        match kind {
            ProviderKind::Openai => {
                assert_eq!(seen[0].path, "/v1/chat/completions");
                assert_eq!(body["stream_options"]["include_usage"], true);
                assert_eq!(body["messages"][0]["role"], "system");
                assert_eq!(body["messages"][1]["role"], "user");
                assert!(body["max_tokens"].as_u64().is_some());
            }
            _ => {
                assert_eq!(seen[0].path, "/v1/messages");
                assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
                assert!(body["system"].as_str().is_some_and(|s| !s.is_empty()));
                assert_eq!(body["messages"][0]["role"], "user");
            }
        }
        assert_eq!(seen[0].header("x-plexus-task"), Some("A"));
    }
}

#[tokio::test]
async fn whole_answers_succeed_too() {
    for kind in APIS {
        let s = server(vec![]);
        let mut p = profile(kind, &s.url());
        p.stream = false;
        let r = run(p).await;
        assert_eq!(r.status_of("A"), "success", "{kind:?}: {:?}", attempts(&r));
        let body: serde_json::Value = serde_json::from_str(&s.seen()[0].body).expect("json");
        assert_eq!(body["stream"], false);
        assert!(body.get("stream_options").is_none());
        let conn = rusqlite::Connection::open(&r.db).expect("db");
        let pp: Option<i64> = conn
            .query_row(
                "SELECT provider_prompt_tokens FROM invocations",
                [],
                |row| row.get(0),
            )
            .expect("row");
        assert!(pp.is_some_and(|n| n > 0));
    }
}

#[tokio::test]
async fn auth_failures_are_not_retried_and_say_what_to_check() {
    for kind in APIS {
        for code in [401, 403] {
            let s = server(vec![MockFault::Status {
                code,
                retry_after: None,
            }]);
            let r = run(profile(kind, &s.url())).await;
            assert_eq!(r.invocations_of("A"), 1, "{kind:?} {code}: no retry");
            assert!(retries(&r).is_empty());
            let (codes, msg) = &attempts(&r)[0];
            assert_eq!(codes, &vec![ErrorCode::E008]);
            assert!(msg.contains(&format!("HTTP {code}")), "{msg}");
            assert!(msg.contains("authentication refused; not retried"), "{msg}");
            assert_eq!(r.status_of("A"), "failed");
            assert_eq!(r.outcome.status, RunStatus::Failed);
        }
    }
}

#[tokio::test]
async fn unknown_model_is_e008_naming_the_model() {
    for kind in APIS {
        let s = server(vec![MockFault::Status {
            code: 404,
            retry_after: None,
        }]);
        let r = run(profile(kind, &s.url())).await;
        assert_eq!(r.invocations_of("A"), 1);
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E008]);
        assert!(msg.contains("\"mock-model\""), "{msg}");
    }
}

#[tokio::test]
async fn request_timeout_408_is_e004_and_retried() {
    for kind in APIS {
        let s = server(vec![MockFault::Status {
            code: 408,
            retry_after: None,
        }]);
        let r = run(profile(kind, &s.url())).await;
        assert_eq!(first_code(&r), ErrorCode::E004);
        assert_eq!(retries(&r), vec![(ErrorCode::E004, 4)]);
        assert_eq!(r.invocations_of("A"), 2);
        assert_eq!(r.status_of("A"), "success");
    }
}

#[tokio::test]
async fn rate_limits_wait_for_retry_after_or_back_off() {
    for kind in APIS {
        let s = server(vec![
            MockFault::Status {
                code: 429,
                retry_after: Some("1".into()),
            },
            MockFault::Status {
                code: 429,
                retry_after: None,
            },
        ]);
        let r = run(profile(kind, &s.url())).await;
        assert_eq!(
            retries(&r),
            vec![(ErrorCode::E001, 1000), (ErrorCode::E001, 4)],
            "{kind:?}: Retry-After: 1 waits 1000 ms; then exponential backoff (2, 4 ms)"
        );
        assert_eq!(r.invocations_of("A"), 3);
        assert_eq!(r.status_of("A"), "success");
    }
}

#[tokio::test]
async fn server_errors_back_off_then_recover_or_give_up() {
    for kind in APIS {
        let st = |code| MockFault::Status {
            code,
            retry_after: None,
        };
        let s = server(vec![st(500), st(502), st(503)]);
        let r = run(profile(kind, &s.url())).await;
        assert_eq!(
            retries(&r),
            vec![
                (ErrorCode::E001, 2),
                (ErrorCode::E001, 4),
                (ErrorCode::E001, 8)
            ]
        );
        assert_eq!(r.invocations_of("A"), 4);
        assert_eq!(r.status_of("A"), "success", "{kind:?}");

        let s = server(vec![st(503); 4]);
        let r = run(profile(kind, &s.url())).await;
        assert_eq!(r.invocations_of("A"), 4, "1 try + 3 backoff retries");
        assert_eq!(r.status_of("A"), "failed");
        assert!(attempts(&r)[3].1.contains("HTTP 503"));
    }
}

#[tokio::test]
async fn an_overloaded_529_reads_overloaded_on_the_wire_and_in_the_error() {
    use std::io::{Read, Write};
    let st = |code| MockFault::Status {
        code,
        retry_after: None,
    };
    // The mock server's status line.
    let s = server(vec![st(529)]);
    let mut c = std::net::TcpStream::connect(s.addr).expect("connect");
    c.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: mock\r\nx-plexus-task: A\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
        .expect("send");
    let mut answer = String::new();
    c.read_to_string(&mut answer).expect("answer");
    assert!(
        answer.starts_with("HTTP/1.1 529 Overloaded\r\n"),
        "{answer}"
    );
    for kind in APIS {
        let s = server(vec![st(529), st(599)]);
        let r = run(profile(kind, &s.url())).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E001], "{kind:?}: {msg}");
        assert!(msg.contains("HTTP 529 Overloaded from"), "{msg}");
        let (_, msg) = &attempts(&r)[1];
        assert!(msg.contains("HTTP 599 Server Error from"), "{msg}");
        assert!(!msg.contains("<unknown"), "{msg}");
    }
}

#[tokio::test]
async fn a_stream_cut_midway_is_retried_and_what_streamed_is_kept() {
    for kind in APIS {
        let s = server(vec![MockFault::Cut]);
        let r = run(profile(kind, &s.url())).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E001], "{kind:?}: {msg}");
        assert!(msg.contains("the stream was cut after"), "{msg}");
        let kept = first_attempt_text(&r);
        assert!(kept.len() > 20, "partial text logged: {kept:?}");
        assert_eq!(r.invocations_of("A"), 2);
        assert_eq!(r.status_of("A"), "success");
        let conn = rusqlite::Connection::open(&r.db).expect("db");
        let first: String = conn
            .query_row(
                "SELECT response_json FROM invocations WHERE attempt = 1",
                [],
                |row| row.get(0),
            )
            .expect("row");
        let v: serde_json::Value = serde_json::from_str(&first).expect("json");
        assert_eq!(v["raw_text"].as_str(), Some(kept.as_str()));
    }
}

#[tokio::test]
async fn a_stalled_stream_ends_at_the_idle_timeout_as_e004() {
    for kind in APIS {
        let s = server(vec![MockFault::Stall]);
        let r = run(profile(kind, &s.url())).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E004], "{kind:?}: {msg}");
        assert!(msg.contains("idle timeout"), "{msg}");
        assert!(!first_attempt_text(&r).is_empty(), "what streamed is kept");
        assert_eq!(retries(&r)[0].0, ErrorCode::E004);
        assert_eq!(r.status_of("A"), "success");
    }
}

#[tokio::test]
async fn invalid_sse_and_invalid_json_are_e002_retried_without_blaming_the_model() {
    for kind in APIS {
        for fault in [MockFault::InvalidSse, MockFault::InvalidJson] {
            let s = server(vec![fault.clone()]);
            let r = run(profile(kind, &s.url())).await;
            let (codes, msg) = &attempts(&r)[0];
            assert_eq!(codes, &vec![ErrorCode::E002], "{kind:?} {fault:?}: {msg}");
            let want = if fault == MockFault::InvalidSse {
                "invalid SSE line"
            } else {
                "invalid JSON in stream event"
            };
            assert!(msg.contains(want), "{msg}");
            assert!(!first_attempt_text(&r).is_empty());
            assert_eq!(r.invocations_of("A"), 2);
            assert_eq!(r.status_of("A"), "success");
            // The retried prompt does not tell the model about a transport fault.
            let second = &s.seen()[1].body;
            assert!(!second.contains(want), "fault leaked into the prompt");
        }
    }
}

#[tokio::test]
async fn an_oversized_answer_is_cut_at_the_cap_as_e008() {
    for kind in APIS {
        let s = server(vec![MockFault::Oversized]);
        // A cap below the answer's token budget: the bytes stop it first.
        let mut p = profile(kind, &s.url());
        p.max_response_bytes = 16 * 1024;
        let r = run(p).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E008], "{kind:?}: {msg}");
        assert!(msg.contains("max_response_bytes (16384 bytes"), "{msg}");
        assert_eq!(r.invocations_of("A"), 1);
        assert_eq!(r.status_of("A"), "failed");
    }
}

#[tokio::test]
async fn an_empty_completion_is_e002_and_retried() {
    for kind in APIS {
        let s = server(vec![MockFault::Empty]);
        let r = run(profile(kind, &s.url())).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E002], "{kind:?}");
        assert_eq!(msg, "the model returned an empty completion");
        assert_eq!(r.status_of("A"), "success");
    }
}

#[tokio::test]
async fn error_events_and_dropped_connections_are_transient() {
    for kind in APIS {
        for fault in [MockFault::ErrorEvent, MockFault::Drop] {
            let s = server(vec![fault.clone()]);
            let r = run(profile(kind, &s.url())).await;
            let (codes, msg) = &attempts(&r)[0];
            assert_eq!(codes, &vec![ErrorCode::E001], "{kind:?} {fault:?}: {msg}");
            assert_eq!(retries(&r), vec![(ErrorCode::E001, 2)]);
            assert_eq!(r.status_of("A"), "success");
        }
    }
}

/// A local port that refuses connections for as long as the socket lives (bound, never
/// listening, so no parallel test's server can be given it).
fn refusing_port() -> (tokio::net::TcpSocket, u16) {
    let s = tokio::net::TcpSocket::new_v4().expect("socket");
    s.bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
    let port = s.local_addr().expect("addr").port();
    (s, port)
}

#[tokio::test]
async fn connection_refused_is_retried_then_fails() {
    let (_held, port) = refusing_port();
    let r = run(profile(
        ProviderKind::Openai,
        &format!("http://127.0.0.1:{port}"),
    ))
    .await;
    assert_eq!(r.invocations_of("A"), 4);
    let (codes, msg) = &attempts(&r)[0];
    assert_eq!(codes, &vec![ErrorCode::E001]);
    assert!(msg.contains("connection refused"), "{msg}");
    assert_eq!(r.status_of("A"), "failed");
}

#[tokio::test]
async fn dns_failure_is_source_not_found_on_the_e001_schedule() {
    // `.invalid` never resolves; a long timeout leaves room for a slow resolver, and one
    // retry is enough to see the E001 schedule (not the transient backoff).
    let mut config = EngineConfig {
        timeout_scale: 0.2,
        ..config()
    };
    config.retry.e001.max_retries = 1;
    let p = profile(ProviderKind::Openai, "http://plexus-test-host.invalid");
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    let r = run_plan_with(&one_task_plan(""), provider, config).await;
    let (codes, msg) = &attempts(&r)[0];
    assert_eq!(codes, &vec![ErrorCode::E001], "{msg}");
    assert!(msg.contains("DNS"), "{msg}");
    assert_eq!(retries(&r), vec![(ErrorCode::E001, 5)]);
    assert_eq!(r.invocations_of("A"), 2);
}

#[tokio::test]
async fn a_tls_failure_is_e008_and_not_retried() {
    // The mock speaks plain HTTP: a TLS handshake with it fails.
    let s = server(vec![]);
    let url = s.url().replace("http://", "https://");
    let r = run(profile(ProviderKind::Anthropic, &url)).await;
    let (codes, msg) = &attempts(&r)[0];
    assert_eq!(codes, &vec![ErrorCode::E008], "{msg}");
    assert!(msg.contains("TLS failure"), "{msg}");
    assert_eq!(r.invocations_of("A"), 1);
}

fn many_tasks(n: usize) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"task_id":"T{i}","agent":"Scholar_Internalizer","instruction":"Analyse part {i}.",
                "output_requirements":{{"required_fields":["content.mathematical_expression"],"quality_threshold":"C","max_atoms":1}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"plan_id":"P","execution_mode":"Deep_Internalization","tasks":[{}]}}"#,
        tasks.join(",")
    )
}

#[tokio::test]
async fn the_profile_concurrency_limit_holds_below_the_engine_s() {
    let s = server(vec![]);
    let mut p = profile(ProviderKind::Openai, &s.url());
    p.concurrency = 2;
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    let r = run_plan_with(&many_tasks(8), provider, config()).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded);
    assert_eq!(s.requests(), 8);
    assert_eq!(s.max_in_flight(), 2, "engine allows 8, the profile 2");
}

#[tokio::test]
async fn the_rate_limit_spaces_requests() {
    let s = server(vec![]);
    let mut p = profile(ProviderKind::Openai, &s.url());
    p.rate_limit_rpm = 600; // one every 100 ms
    p.rate_burst = Some(1);
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    let r = run_plan_with(&many_tasks(4), provider, config()).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded);
    let starts: Vec<i64> = r
        .events
        .iter()
        .filter(|e| matches!(e.event.as_ref(), Ok(EngineEvent::InvocationStarted(_))))
        .map(|e| e.ts)
        .collect();
    let finishes: Vec<i64> = r
        .events
        .iter()
        .filter(|e| matches!(e.event.as_ref(), Ok(EngineEvent::InvocationFinished(_))))
        .map(|e| e.ts)
        .collect();
    // All four dispatch at once; the bucket lets one request out per 100 ms, so the
    // last answer cannot come before 300 ms after the first dispatch.
    let span = finishes.iter().max().expect("f") - starts.iter().min().expect("s");
    assert!(
        span >= 290,
        "4 requests at 600/min finished within {span} ms"
    );
}

#[tokio::test]
async fn a_missing_key_is_a_clear_error_before_any_call() {
    let mut p = profile(ProviderKind::Openai, "http://127.0.0.1:9");
    p.api_key_env = Some("PLEXUS_TEST_SURELY_UNSET_KEY_VAR".into());
    let e = HttpProvider::new(p).err().expect("no key, no provider");
    assert!(
        e.to_string()
            .contains("the API key variable $PLEXUS_TEST_SURELY_UNSET_KEY_VAR is not set"),
        "{e}"
    );
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_without_its_end_marker_is_retried() {
    for kind in APIS {
        let s = server(vec![MockFault::CleanEof]);
        let r = run(profile(kind, &s.url())).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E001], "{kind:?}: {msg}");
        assert!(
            msg.contains("the stream ended before its end marker"),
            "{msg}"
        );
        assert!(!first_attempt_text(&r).is_empty());
        assert_eq!(r.status_of("A"), "success");
    }
}

#[tokio::test]
async fn an_exhausted_quota_429_is_not_retried() {
    for kind in APIS {
        let s = server(vec![MockFault::Quota]);
        let r = run(profile(kind, &s.url())).await;
        let (codes, msg) = &attempts(&r)[0];
        assert_eq!(codes, &vec![ErrorCode::E008], "{kind:?}: {msg}");
        assert!(msg.contains("quota or billing limit is exhausted"), "{msg}");
        assert_eq!(r.invocations_of("A"), 1);
    }
}

#[tokio::test]
async fn whole_answers_that_are_not_json_or_too_big_fail_clearly() {
    for kind in APIS {
        for (fault, code, want) in [
            (
                MockFault::InvalidJson,
                ErrorCode::E002,
                "the answer is not JSON",
            ),
            (MockFault::Oversized, ErrorCode::E008, "max_response_bytes"),
        ] {
            let s = server(vec![fault.clone()]);
            let mut p = profile(kind, &s.url());
            p.stream = false;
            let r = run(p).await;
            let (codes, msg) = &attempts(&r)[0];
            assert_eq!(codes, &vec![code], "{kind:?} {fault:?}: {msg}");
            assert!(msg.contains(want), "{msg}");
        }
    }
}

#[tokio::test]
async fn a_refused_connection_is_never_taken_for_tls_by_the_words_in_its_url() {
    let (_held, port) = refusing_port();
    let base = format!("http://127.0.0.1:{port}/tls/certificate/handshake");
    let r = run(profile(ProviderKind::Openai, &base)).await;
    let (codes, msg) = &attempts(&r)[0];
    assert_eq!(codes, &vec![ErrorCode::E001], "{msg}");
    assert!(msg.contains("connection refused"), "{msg}");
}

#[tokio::test]
async fn waiting_for_a_profile_slot_does_not_count_against_the_timeout() {
    // One call at a time, each streaming 300 ms, timeouts of about 0.9 s: the fourth
    // task waits ~0.9 s for its slot and must still succeed.
    let s = MockServer::start(
        MockConfig {
            stream_ms: 300,
            chunks: 5,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock");
    let mut p = profile(ProviderKind::Openai, &s.url());
    p.concurrency = 1;
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    let config = EngineConfig {
        timeout_scale: 0.003,
        ..test_config()
    };
    let r = run_plan_with(&many_tasks(4), provider, config).await;
    let timeouts: Vec<_> = attempts(&r)
        .into_iter()
        .filter(|(c, _)| c.contains(&ErrorCode::E004))
        .collect();
    assert!(timeouts.is_empty(), "queued calls timed out: {timeouts:?}");
    assert_eq!(r.outcome.status, RunStatus::Succeeded);
    assert_eq!(s.max_in_flight(), 1);
    // A queued call is not shown as running: invocations start one at a time.
    let (mut open, mut most) = (0i32, 0i32);
    for e in &r.events {
        match e.event.as_ref() {
            Ok(EngineEvent::InvocationStarted(_)) => open += 1,
            Ok(EngineEvent::InvocationFinished(_)) => open -= 1,
            _ => {}
        }
        most = most.max(open);
    }
    assert_eq!(most, 1, "invocations shown running at once");
}

#[tokio::test]
async fn retry_after_holds_the_whole_profile() {
    use plexus::data::provider::{ChunkSink, Provider};
    struct Discard;
    impl ChunkSink for Discard {
        fn chunk(&mut self, _: &str) {}
    }
    let s = server(vec![MockFault::Status {
        code: 429,
        retry_after: Some("1".into()),
    }]);
    let provider = HttpProvider::new(profile(ProviderKind::Openai, &s.url())).expect("provider");
    let request = |task: &str| {
        Arc::new(plexus::base::protocol::AgentRequest {
            invocation_id: "INV_1".into(),
            agent: "Scholar_Internalizer".into(),
            task_id: task.into(),
            plan_id: "P".into(),
            system_prompt: "s".into(),
            user_prompt: Default::default(),
            constraints: Default::default(),
            extra: Default::default(),
            response_schema: None,
        })
    };
    // A is told to come back in 1 s.
    let slot = provider.admit().await;
    let a = provider.invoke(request("A"), 1, &mut Discard).await;
    drop(slot);
    assert!(
        matches!(
            a,
            Err(plexus::data::provider::ProviderError::Transient {
                retry_after_ms: Some(1000),
                ..
            })
        ),
        "{a:?}"
    );
    // Any other call through the profile waits that second too.
    let t = std::time::Instant::now();
    let _slot = provider.admit().await;
    let waited = t.elapsed().as_millis();
    assert!(waited >= 800, "B was admitted after {waited} ms");
    let b = provider.invoke(request("B"), 1, &mut Discard).await;
    assert!(b.is_ok(), "{b:?}");
}

#[tokio::test]
async fn a_steady_stream_longer_than_the_idle_timeout_is_not_cut() {
    use plexus::data::provider::{ChunkSink, Provider};
    struct Count(usize, String);
    impl ChunkSink for Count {
        fn chunk(&mut self, t: &str) {
            self.0 += 1;
            self.1.push_str(t);
        }
    }
    // An event every 50 ms for 900 ms, with an idle timeout of 250 ms: the timeout is
    // about the gaps, not the whole answer.
    let s = MockServer::start(
        MockConfig {
            stream_ms: 900,
            chunks: 18,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    for kind in APIS {
        let mut p = profile(kind, &s.url());
        p.idle_timeout_s = 0.25;
        let provider = HttpProvider::new(p).expect("provider");
        let request = Arc::new(plexus::base::protocol::AgentRequest {
            invocation_id: "INV_1".into(),
            agent: "Scholar_Internalizer".into(),
            task_id: "A".into(),
            plan_id: "P".into(),
            system_prompt: "s".into(),
            user_prompt: Default::default(),
            constraints: Default::default(),
            extra: Default::default(),
            response_schema: None,
        });
        let mut sink = Count(0, String::new());
        let t = std::time::Instant::now();
        let out = provider.invoke(request, 1, &mut sink).await;
        let took = t.elapsed().as_millis();
        assert!(out.is_ok(), "{kind:?}: {out:?}");
        assert!(took >= 600, "{kind:?}: the answer took {took} ms");
        assert!(sink.0 >= 10, "{kind:?}: {} chunks", sink.0);
        assert!(!sink.1.trim().is_empty(), "{kind:?}: no text");
    }
}
