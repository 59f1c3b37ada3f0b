//! An API key set in the environment appears nowhere — database file, WAL, log file,
//! captured screen, stdout/stderr — after a run that failed with 401 from a server that
//! echoes the key it was sent back in its error body (as real providers do, partly).

#![cfg(unix)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plexus::dev::mock_server::{MockConfig, MockServer};
use portable_pty::{native_pty_system, CommandBuilder, PtySize};

const KEY: &str = "sk-plexus-secret-4f9a2c7e1b8d";

const PLAN: &str = r#"{"plan_id":"P","execution_mode":"Deep_Internalization","tasks":[
  {"task_id":"A","agent":"Scholar_Internalizer","instruction":"Analyse the denoising formula.",
   "output_requirements":{"required_fields":["content.mathematical_expression"],"quality_threshold":"C","max_atoms":2}},
  {"task_id":"B","agent":"Code_Architect","instruction":"Map it to code.","depends_on":["A"],
   "output_requirements":{"required_fields":["content.source_code"],"quality_threshold":"C","max_atoms":2}}]}"#;

fn setup(dir: &Path) -> MockServer {
    let server = MockServer::start(
        MockConfig {
            require_key: Some("sk-the-right-key".into()),
            echo_key: true,
            stream_ms: 10,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            "[providers.leaky]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\napi_key_env = \"PLEXUS_LEAK_TEST_KEY\"\n",
            server.url()
        ),
    )
    .expect("config");
    std::fs::write(dir.join("plan.json"), PLAN).expect("plan");
    server
}

const ARGS: [&str; 11] = [
    "--db",
    "p.db",
    "--config",
    "plexus.toml",
    "run",
    "plan.json",
    "--retry-delay-div",
    "1000",
    "--provider",
    "leaky",
    "--headless",
];

/// Every file the run left in `dir` (database, its WAL if still there, log), checked for the key.
fn assert_no_key_in_files(dir: &Path) {
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            assert!(
                !contains(&bytes, KEY.as_bytes()),
                "the key is in {}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(dir.join("p.db").is_file() && dir.join("plexus.log").is_file());
    assert!(checked >= 3, "checked {checked} files");
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The server really received the key (so the test is not vacuous) and answered 401.
fn assert_key_was_sent(server: &MockServer) {
    let seen = server.seen();
    assert!(!seen.is_empty(), "no request reached the server");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn a_401_run_leaks_the_key_nowhere_headless() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = setup(dir.path());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(ARGS)
        .current_dir(dir.path())
        .env("PLEXUS_LEAK_TEST_KEY", KEY)
        .env_remove("PLEXUS_DB")
        .output()
        .expect("run");
    assert!(!out.status.success(), "the run failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stderr.contains("authentication refused") || stdout.contains("E008"),
        "stderr: {stderr}\nstdout: {stdout}"
    );
    assert!(!stderr.contains(KEY) && !stdout.contains(KEY));
    assert_key_was_sent(&server);
    assert_no_key_in_files(dir.path());
    // The server's echo reached the stored error message, redacted.
    let conn = rusqlite::Connection::open(dir.path().join("p.db")).expect("db");
    let response: String = conn
        .query_row("SELECT response_json FROM invocations", [], |r| r.get(0))
        .expect("row");
    assert!(
        response.contains("Incorrect API key provided: [redacted]"),
        "{response}"
    );
}

#[test]
fn a_401_run_leaks_the_key_nowhere_in_the_tui() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = setup(dir.path());
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 30,
            cols: 140,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_plexus"));
    cmd.args(&ARGS[..ARGS.len() - 1]);
    cmd.cwd(dir.path());
    cmd.env("TERM", "xterm-256color");
    cmd.env("PLEXUS_LEAK_TEST_KEY", KEY);
    cmd.env_remove("PLEXUS_DB");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut writer = pair.master.take_writer().expect("writer");
    let raw = Arc::new(Mutex::new(Vec::<u8>::new()));
    let parser = Arc::new(Mutex::new(vt100::Parser::new(30, 140, 0)));
    let (r, p) = (raw.clone(), parser.clone());
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            r.lock().expect("raw").extend_from_slice(&buf[..n]);
            p.lock().expect("parser").process(&buf[..n]);
        }
    });
    let screen = || parser.lock().expect("parser").screen().contents();
    // The run ends failed (A refused, B blocked) and the TUI holds it open, showing the
    // server's echo of the key redacted.
    let end = Instant::now() + Duration::from_secs(60);
    let mut seen_screens = String::new();
    loop {
        let s = screen();
        if s.contains("E008") && s.contains("│ failed │") {
            assert!(s.contains("API key provided: [redacted]"), "{s}");
            seen_screens.push_str(&s);
            break;
        }
        assert!(Instant::now() < end, "the run did not fail visibly:\n{s}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Look at the failed invocation's request and issues views too.
    for keys in ["v", "v", "v", "v"] {
        writer.write_all(keys.as_bytes()).expect("key");
        writer.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(300));
        seen_screens.push_str(&screen());
    }
    writer.write_all(b"q").expect("q");
    writer.flush().expect("flush");
    std::thread::sleep(Duration::from_millis(300));
    if screen().contains("Quit?") {
        writer.write_all(b"y").expect("y");
        writer.flush().expect("flush");
    }
    let end = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < end, "did not quit");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(!seen_screens.contains(KEY), "the key was on screen");
    let raw = raw.lock().expect("raw").clone();
    assert!(
        !contains(&raw, KEY.as_bytes()),
        "the key was written to the terminal"
    );
    assert_key_was_sent(&server);
    assert_no_key_in_files(dir.path());
}
