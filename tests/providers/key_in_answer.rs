//! An API key that a server echoes inside its answer — split across stream events (one
//! character per event, or cut in the middle), or JSON-escaped on the wire — appears
//! nowhere after a run of the real binary: database file, WAL, log, stdout/stderr. The run
//! still completes, with `[redacted]` where the key was. On the engine in process: a
//! stream cut or stalled in the middle of the key keeps its text, without the key's half.
//! A model that writes the key with JSON escapes inside its own answer (`\u0073\u006b-…`,
//! which the answer's JSON decodes to the key) leaves it nowhere either, nor in an export.

#![cfg(unix)]

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use common::{one_task_plan, run_plan_with, test_config, Ran};
use plexus::base::protocol::ErrorCode;
use plexus::data::provider::http::redact::MIN_KEY_LEN;
use plexus::data::provider::{HttpProvider, ProviderKind, ProviderProfile};
use plexus::dev::mock_server::key_echo::KeyEcho;
use plexus::dev::mock_server::{MockConfig, MockFault, MockServer};
use plexus::model::event::EngineEvent;
use plexus::run::engine::EngineConfig;

const KEY: &str = "sk-plexus-secret-4f9a2c7e1b8d";
/// The key's last part: no piece of the key may be kept either.
const KEY_TAIL: &str = "4f9a2c7e1b8d";

const PLAN: &str = r#"{"plan_id":"P","execution_mode":"Deep_Internalization","tasks":[
  {"task_id":"A","agent":"Scholar_Internalizer","instruction":"Analyse the denoising formula.",
   "output_requirements":{"required_fields":["content.mathematical_expression"],"quality_threshold":"C","max_atoms":2}},
  {"task_id":"B","agent":"Code_Architect","instruction":"Map it to code.","depends_on":["A"],
   "output_requirements":{"required_fields":["content.source_code"],"quality_threshold":"C","max_atoms":2}}]}"#;

/// Runs the plan headless against a server that echoes the key inside every answer, and
/// checks everything the run left.
fn run(kind: &str, stream: bool, how: KeyEcho) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start(
        MockConfig {
            require_key: Some(KEY.into()),
            key_in_answer: Some(how),
            stream_ms: 10,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    std::fs::write(
        dir.path().join("plexus.toml"),
        format!(
            "[providers.leaky]\nkind = \"{kind}\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\
             api_key_env = \"PLEXUS_LEAK_TEST_KEY\"\nstream = {stream}\n",
            server.url()
        ),
    )
    .expect("config");
    std::fs::write(dir.path().join("plan.json"), PLAN).expect("plan");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args([
            "--db",
            "p.db",
            "--config",
            "plexus.toml",
            "run",
            "plan.json",
            "--retry-delay-div",
            "1000",
            "--headless",
            "--provider",
            "leaky",
        ])
        .current_dir(dir.path())
        .env("PLEXUS_LEAK_TEST_KEY", KEY)
        .env_remove("PLEXUS_DB")
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the run failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    for text in [&stdout, &stderr] {
        assert!(!text.contains(KEY) && !text.contains(KEY_TAIL), "{text}");
    }
    // The server accepted the key (so it was sent) and answered both tasks.
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "one call per task");
    assert_no_key_in_files(dir.path());
    let conn = rusqlite::Connection::open(dir.path().join("p.db")).expect("db");
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).expect("count") };
    assert_eq!(
        count(
            "SELECT COUNT(DISTINCT task_id) FROM knowledge_atoms WHERE content LIKE '%[redacted]%'"
        ),
        2,
        "the key's place in each task's first atom is marked"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM invocations WHERE response_json LIKE '%[redacted]%'"),
        2
    );
}

/// Every file the run left in `dir` (database, its WAL if still there, log).
fn assert_no_key_in_files(dir: &Path) {
    // Also as the server escaped it on the wire, in case a raw body is kept somewhere.
    let escaped_tail: String = KEY_TAIL
        .encode_utf16()
        .map(|u| format!("\\u{u:04x}"))
        .collect();
    assert_no_key_in(dir, &[KEY, KEY_TAIL, &escaped_tail]);
    assert!(dir.join("p.db").is_file() && dir.join("plexus.log").is_file());
}

/// None of `needles` in any file of `dir`.
fn assert_no_key_in(dir: &Path, needles: &[&str]) {
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            for needle in needles {
                assert!(
                    !contains(&bytes, needle.as_bytes()),
                    "{needle} is in {}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 1, "checked {checked} files");
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn openai_stream_with_the_key_one_character_per_event() {
    run("openai", true, KeyEcho::PerChar);
}

#[test]
fn openai_stream_with_the_key_cut_in_half() {
    run("openai", true, KeyEcho::Halves);
}

#[test]
fn anthropic_stream_with_the_key_one_character_per_event() {
    run("anthropic", true, KeyEcho::PerChar);
}

#[test]
fn anthropic_stream_with_the_key_json_escaped() {
    run("anthropic", true, KeyEcho::Escaped);
}

#[test]
fn openai_whole_answer_with_the_key_json_escaped() {
    run("openai", false, KeyEcho::Escaped);
}

#[test]
fn anthropic_whole_answer_with_the_key_json_escaped() {
    run("anthropic", false, KeyEcho::Escaped);
}

/// Runs task A on the engine against a server that echoes the key inside its answer, cut
/// in half across two events, with `fault` striking between the halves on the first call.
async fn fault_mid_key(kind: ProviderKind, fault: MockFault) -> Ran {
    let server = MockServer::start(
        MockConfig {
            require_key: Some(KEY.into()),
            key_in_answer: Some(KeyEcho::Halves),
            stream_ms: 40,
            chunks: 10,
            script: HashMap::from([("A".to_string(), vec![fault])]),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let keys = tempfile::tempdir().expect("tempdir");
    std::fs::write(keys.path().join("key"), KEY).expect("key file");
    let mut p = ProviderProfile::simulated();
    p.name = "mock".into();
    p.kind = kind;
    p.base_url = format!("{}/v1", server.url());
    p.model = "mock-model".into();
    p.api_key_file = Some(keys.path().join("key"));
    p.idle_timeout_s = 0.5;
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    let config = EngineConfig {
        timeout_scale: 0.01,
        ..test_config()
    };
    run_plan_with(&one_task_plan(""), provider, config).await
}

/// The error codes of the first invocation and the text it logged.
fn first_attempt(r: &Ran) -> (Vec<ErrorCode>, String) {
    let mut text = String::new();
    for e in &r.events {
        match e.event.as_ref() {
            Ok(EngineEvent::Chunk(c)) => text.push_str(&c.text),
            Ok(EngineEvent::InvocationFinished(f)) => return (f.errors.clone(), text),
            _ => {}
        }
    }
    (Vec::new(), text)
}

async fn check_fault_mid_key(fault: MockFault, code: ErrorCode) {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let r = fault_mid_key(kind, fault.clone()).await;
        let (codes, text) = first_attempt(&r);
        assert_eq!(codes, vec![code], "{kind:?}");
        // What streamed before the fault is kept, the key's first half marked.
        assert!(text.len() > 100, "{kind:?}: {text:?}");
        assert!(text.ends_with("[redacted]"), "{kind:?}: {text:?}");
        assert_eq!(r.status_of("A"), "success", "{kind:?}: the retry");
        let dir = r.db.parent().expect("db dir");
        assert_no_key_in(dir, &[KEY, KEY_TAIL, &KEY[..MIN_KEY_LEN]]);
    }
}

#[tokio::test]
async fn a_stream_cut_mid_key_keeps_its_text_without_the_key() {
    check_fault_mid_key(MockFault::Cut, ErrorCode::E001).await;
}

#[tokio::test]
async fn a_stream_stalled_mid_key_keeps_its_text_without_the_key() {
    check_fault_mid_key(MockFault::Stall, ErrorCode::E004).await;
}

/// `text` with every character as a JSON `\uXXXX` escape.
fn escaped(text: &str) -> String {
    text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

/// A tiny OpenAI and Anthropic server on 127.0.0.1: every call gets the simulated answer
/// with the key inside its first content string as the model would write it with JSON
/// escapes (`\u0073\u006b…`, cut in half across two stream events when streamed), so the
/// answer text never holds the key but the JSON decoded from it does. One connection per
/// request (`Connection: close`). Returns its base URL.
fn escaped_key_server() -> String {
    use plexus::data::provider::{SimConfig, SimulatedProvider};
    use plexus::dev::mock_server::answer::{self, Api};
    use plexus::dev::mock_server::key_echo::KeyedAnswer;
    use std::io::{BufRead, BufReader, Read, Write};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let sim = Arc::new(SimulatedProvider::new(SimConfig {
        seed: 7,
        ..SimConfig::default()
    }));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let sim = sim.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let mut headers = HashMap::new();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                    }
                }
                let len = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; len];
                let _ = reader.read_exact(&mut body);
                let api = if path.ends_with("/messages") {
                    Api::Anthropic
                } else {
                    Api::Openai
                };
                let header = |k: &str| headers.get(k).map(String::as_str).unwrap_or("");
                let call = answer::call(
                    api,
                    &body,
                    header("x-plexus-task"),
                    header("x-plexus-invocation"),
                    &sim,
                );
                let keyed = KeyedAnswer::new(&call.text, &escaped(KEY), KeyEcho::Halves);
                assert!(!keyed.text().contains(KEY), "the model's text holds no key");
                let usage = answer::usage(&call, keyed.text(), 1.0);
                let mut out = &stream;
                let _ = if call.stream {
                    let (open, pieces, close) = keyed.events(&call, 8, usage);
                    let events: String = open.into_iter().chain(pieces).chain(close).collect();
                    write!(
                        out,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{events}"
                    )
                } else {
                    let whole = keyed.whole(&call, usage);
                    write!(
                        out,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{whole}",
                        whole.len()
                    )
                };
                let _ = out.flush();
                let _ = stream.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    url
}

/// Runs the plan headless against [`escaped_key_server`], exports the run, and checks
/// that neither the database, the log, the output nor the export holds the key.
fn run_escaped(kind: &str, stream: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = escaped_key_server();
    std::fs::write(
        dir.path().join("plexus.toml"),
        format!(
            "[providers.leaky]\nkind = \"{kind}\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n\
             api_key_env = \"PLEXUS_LEAK_TEST_KEY\"\nstream = {stream}\n"
        ),
    )
    .expect("config");
    std::fs::write(dir.path().join("plan.json"), PLAN).expect("plan");
    let plexus = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
            .args(["--db", "p.db", "--config", "plexus.toml"])
            .args(args)
            .current_dir(dir.path())
            .env("PLEXUS_LEAK_TEST_KEY", KEY)
            .env_remove("PLEXUS_DB")
            .output()
            .expect("plexus")
    };
    let out = plexus(&[
        "run",
        "plan.json",
        "--retry-delay-div",
        "1000",
        "--headless",
        "--provider",
        "leaky",
    ]);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        out.status.success(),
        "{kind} stream={stream}: the run failed\nstdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let export = plexus(&["export", "latest"]);
    assert!(export.status.success(), "{}", text(&export.stderr));
    let to_file = plexus(&["export", "latest", "-o", "run.jsonl"]);
    assert!(to_file.status.success(), "{}", text(&to_file.stderr));
    // The key, its tail, and its tail as the model escaped it (stored in a JSON string,
    // its backslashes doubled).
    let tail = escaped(KEY_TAIL);
    let tail_in_json = tail.replace('\\', "\\\\");
    let needles = [KEY, KEY_TAIL, tail.as_str(), tail_in_json.as_str()];
    for output in [&out.stdout, &out.stderr, &export.stdout, &export.stderr] {
        let output = text(output);
        for needle in needles {
            assert!(
                !output.contains(needle),
                "{kind} stream={stream}: {needle} in {output}"
            );
        }
    }
    assert_no_key_in(dir.path(), &needles);
    assert!(dir.path().join("run.jsonl").is_file());
    let conn = rusqlite::Connection::open(dir.path().join("p.db")).expect("db");
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).expect("count") };
    assert_eq!(
        count(
            "SELECT COUNT(DISTINCT task_id) FROM knowledge_atoms WHERE content LIKE '%[redacted]%'"
        ),
        2,
        "{kind} stream={stream}: the key's place in each task's first atom is marked"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM invocations WHERE response_json LIKE '%[redacted]%'"),
        2
    );
    assert!(text(&export.stdout).contains("[redacted]"));
}

#[test]
fn openai_stream_with_the_key_escaped_by_the_model() {
    run_escaped("openai", true);
}

#[test]
fn openai_whole_answer_with_the_key_escaped_by_the_model() {
    run_escaped("openai", false);
}

#[test]
fn anthropic_stream_with_the_key_escaped_by_the_model() {
    run_escaped("anthropic", true);
}

#[test]
fn anthropic_whole_answer_with_the_key_escaped_by_the_model() {
    run_escaped("anthropic", false);
}
