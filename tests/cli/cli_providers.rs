//! The provider commands from the outside: `providers` lists profiles (never keys),
//! `ping` reports latency, model and usage or the error code, `run --provider` runs a
//! plan through a local OpenAI- or Anthropic-compatible server, bad profiles are clear
//! errors naming the file and the profile.

use std::path::Path;
use std::process::{Command, Output};

use plexus::dev::mock_server::{MockConfig, MockServer};

fn plexus(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plexus"));
    cmd.current_dir(dir)
        .args(["--db", "p.db", "--config", "plexus.toml"])
        .args(args)
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_PROVIDER");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run plexus")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn mock(key: Option<&str>) -> MockServer {
    MockServer::start(
        MockConfig {
            stream_ms: 20,
            require_key: key.map(str::to_string),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server")
}

fn config(dir: &Path, url: &str) {
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            r#"
[providers.local]
kind = "openai"
base_url = "{url}/v1"
model = "qwen2.5-7b"
api_key_env = "PLEXUS_CLI_TEST_KEY"
headers = {{ "X-Team" = "research" }}
concurrency = 4

[providers.claude]
kind = "anthropic"
base_url = "{url}"
model = "claude-sonnet-4-5"
api_key_file = "claude.key"
rate_limit_rpm = 120
"#
        ),
    )
    .expect("config");
    std::fs::write(dir.join("claude.key"), "sk-ant-file-key-123\n").expect("key file");
}

#[test]
fn providers_lists_profiles_and_key_sources_but_never_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    config(dir.path(), "http://127.0.0.1:9");
    let out = plexus(
        dir.path(),
        &["providers"],
        &[("PLEXUS_CLI_TEST_KEY", "sk-env-key-456")],
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for needle in [
        "simulated",
        "local",
        "openai",
        "qwen2.5-7b",
        "$PLEXUS_CLI_TEST_KEY (set)",
        "claude",
        "anthropic",
        "claude.key (readable)",
        "120",
    ] {
        assert!(t.contains(needle), "providers lacks {needle}: {t}");
    }
    assert!(!t.contains("sk-env-key-456") && !t.contains("sk-ant-file-key-123"));
    let unset = plexus(dir.path(), &["providers"], &[]);
    assert!(text(&unset).contains("$PLEXUS_CLI_TEST_KEY (NOT SET)"));
    let json = plexus(dir.path(), &["providers", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(3));
}

#[test]
fn ping_reports_latency_model_and_usage_on_both_apis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = mock(None);
    config(dir.path(), &server.url());
    for name in ["local", "claude"] {
        let out = plexus(
            dir.path(),
            &["ping", name],
            &[("PLEXUS_CLI_TEST_KEY", "sk-env-key-456")],
        );
        let t = text(&out);
        assert!(out.status.success(), "{name}: {t}");
        assert!(t.contains(": ok"), "{t}");
        assert!(t.contains("latency   first text"), "{t}");
        assert!(t.contains("whole answer"), "{t}");
        assert!(t.contains("usage     ") && t.contains(" in / "), "{t}");
        assert!(t.contains("\"pong\""), "{t}");
        // A second call, held to a tiny schema: the dialect the server took.
        let dialect = if name == "local" {
            "json_schema"
        } else {
            "tool"
        };
        assert!(
            t.contains(&format!("structured output  {dialect} (answer")),
            "{t}"
        );
    }
    // Two calls a ping: the plain one and the structured one.
    let seen = server.seen();
    assert_eq!(seen.len(), 4);
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer sk-env-key-456")
    );
    assert_eq!(seen[0].header("x-team"), Some("research"));
    assert_eq!(seen[2].header("x-api-key"), Some("sk-ant-file-key-123"));
}

#[test]
fn ping_failures_exit_1_with_the_error_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = mock(Some("the-right-key"));
    config(dir.path(), &server.url());
    let out = plexus(
        dir.path(),
        &["ping", "local"],
        &[("PLEXUS_CLI_TEST_KEY", "a-wrong-key")],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("FAILED (E008)") && t.contains("HTTP 401"), "{t}");
    let missing = plexus(dir.path(), &["ping", "local"], &[]);
    let t = text(&missing);
    assert!(!missing.status.success());
    assert!(
        t.contains("[providers.local]: the API key variable $PLEXUS_CLI_TEST_KEY is not set"),
        "{t}"
    );
    let unknown = plexus(dir.path(), &["ping", "nope"], &[]);
    let t = text(&unknown);
    assert!(
        t.contains("[providers.nope]: no such profile (known: simulated, claude, local)"),
        "{t}"
    );
}

#[test]
fn a_broken_profile_names_the_file_and_the_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plexus.toml"),
        "[providers.bad]\nkind = \"openai\"\nmodel = \"m\"\n",
    )
    .expect("config");
    let out = plexus(dir.path(), &["providers"], &[]);
    let t = text(&out);
    assert!(!out.status.success());
    assert!(
        t.contains("plexus.toml:1: `providers.bad`: `base_url` is required"),
        "{t}"
    );
}

#[test]
fn the_demo_runs_over_http_with_a_provider_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = mock(Some("sk-env-key-456"));
    config(dir.path(), &server.url());
    let out = plexus(
        dir.path(),
        &["demo", "--provider", "local", "--headless"],
        &[("PLEXUS_CLI_TEST_KEY", "sk-env-key-456")],
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("on openai:qwen2.5-7b@local"), "{t}");
    assert!(t.contains("run succeeded"), "{t}");
    assert!(t.contains("provider-reported"), "usage table: {t}");
    assert_eq!(server.requests(), 5, "one call per task");
    let runs = plexus(dir.path(), &["runs"], &[]);
    assert!(text(&runs).contains("openai:qwen2.5-7b@local"));
    // The stored run config names the profile, not the key or its headers.
    let conn = rusqlite::Connection::open(dir.path().join("p.db")).expect("db");
    let cfg: String = conn
        .query_row("SELECT config_json FROM runs", [], |r| r.get(0))
        .expect("row");
    let v: serde_json::Value = serde_json::from_str(&cfg).expect("json");
    assert_eq!(v["provider"], "local");
    assert!(!cfg.contains("research") && !cfg.contains("sk-env"));
}

#[test]
fn a_killed_run_resumes_on_the_profile_it_started_with() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start(
        MockConfig {
            stream_ms: 400,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock");
    config(dir.path(), &server.url());
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir.path())
        .args(["--db", "p.db", "--config", "plexus.toml"])
        .args(["demo", "--provider", "local", "--headless"])
        .env("PLEXUS_CLI_TEST_KEY", "k")
        .env_remove("PLEXUS_DB")
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.requests() < 2 {
        assert!(
            std::time::Instant::now() < end,
            "no call reached the server"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    let before = server.requests();
    let out = plexus(
        dir.path(),
        &["resume", "latest", "--headless"],
        &[("PLEXUS_CLI_TEST_KEY", "k")],
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("crash detected"), "{t}");
    assert!(t.contains("run succeeded"), "{t}");
    assert!(
        server.requests() > before,
        "the resumed run called the server again"
    );
    assert!(t.contains("provider-reported"), "{t}");
}

/// `dev mock-server --script`: a bad script is refused naming the file and line; a good
/// one is said in the banner and answers from its turns.
#[test]
fn the_mock_server_plays_a_script_and_refuses_a_bad_one_by_line() {
    use std::io::{BufRead, BufReader, Read, Write};
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("bad.json"), "{\"turns\": [\n  {\"txt\": 1}\n]}").expect("bad");
    let out = plexus(
        dir,
        &["dev", "mock-server", "--port", "0", "--script", "bad.json"],
        &[],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("bad.json:2:") && t.contains("txt"), "{t}");

    std::fs::write(
        dir.join("turns.json"),
        r#"{"turns": [{"text": "scripted hello"}]}"#,
    )
    .expect("script");
    /// Stops the server however the test ends.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir)
        .args([
            "dev",
            "mock-server",
            "--port",
            "0",
            "--script",
            "turns.json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(Kill)
        .expect("mock server");
    let mut banner = String::new();
    BufReader::new(child.0.stdout.take().expect("stdout"))
        .read_line(&mut banner)
        .expect("banner");
    assert!(banner.contains("(scripted model)"), "{banner}");
    let answer = {
        let addr = banner
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .expect("address")
            .to_string();
        let body = r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#;
        let mut s = std::net::TcpStream::connect(&addr).expect("connect");
        write!(
            s,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("request");
        let mut answer = String::new();
        s.read_to_string(&mut answer).expect("answer");
        answer
    };
    drop(child);
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("scripted hello"),
        "{answer}"
    );
}
