//! `plexus serve` through the real binary and a plain TCP client on 127.0.0.1: a
//! session started by the front end's request streams its events line by line and is
//! stored with who asked; a client that disconnects mid-session stops it (`cancelled`
//! in the database); bad requests get the status and the field they deserve.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use plexus::protocol::debate::{SseData, StreamEvent};

/// A running `plexus serve`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path, db: &str, pace: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir)
        .env("PLEXUS_CONFIG", dir.join("none.toml"))
        .env_remove("PLEXUS_DB")
        .args(["--db", db, "serve", "--port", "0"])
        .args(pace)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn plexus serve");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    let port = loop {
        line.clear();
        assert!(
            err.read_line(&mut line).expect("stderr line") > 0,
            "serve ended early"
        );
        if let Some(rest) = line.trim().strip_prefix("listening on http://127.0.0.1:") {
            break rest.parse::<u16>().expect("port");
        }
    };
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || for _ in err.lines() {});
    Server { child, port }
}

fn post(port: u16, body: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        s,
        "POST /api/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    s
}

fn whole(port: u16, raw: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(raw.as_bytes()).expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    out
}

fn db_conn(dir: &Path, db: &str) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join(db)).expect("open the database")
}

const SEED_REQUEST: &str = r#"{"message": "帮我制定IELTS备考计划", "mode": "multi_agent", "userId": "user_123", "conversationId": "conv_456"}"#;

#[test]
fn a_session_streams_line_by_line_and_is_stored_with_who_asked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("none.toml"), "").expect("config");
    let server = serve(dir, "s.db", &["--chunk-ms", "0", "--first-chunk-ms", "0"]);
    let mut s = post(server.port, SEED_REQUEST);
    let mut text = String::new();
    s.read_to_string(&mut text).expect("the stream to its end");
    let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Type: text/event-stream"), "{head}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("X-Plexus-Session: "))
        .expect("the session header")
        .to_string();
    // `data: …`, blank line, …, `data: [DONE]`, blank line.
    let lines: Vec<&str> = body.split('\n').collect();
    assert_eq!(lines.last(), Some(&""));
    let lines = &lines[..lines.len() - 1];
    assert!(lines.len().is_multiple_of(2), "{lines:?}");
    let mut kinds = Vec::new();
    let mut done = 0;
    for pair in lines.chunks(2) {
        assert_eq!(pair[1], "", "a blank line after each event");
        let payload = pair[0].strip_prefix("data: ").expect("a data line");
        match SseData::parse(payload).unwrap_or_else(|e| panic!("{payload}: {e}")) {
            SseData::Done => done += 1,
            SseData::Event(e) => {
                assert_eq!(done, 0, "nothing after [DONE]");
                kinds.push(match *e {
                    StreamEvent::AgentOutput(a) => format!("{}@{}", a.agent, a.round),
                    StreamEvent::HostDecision(h) => format!("host:{}", h.action),
                    StreamEvent::FinalReport(r) => {
                        assert!(!r.plan.phases.is_empty(), "the report carries the plan");
                        "report".into()
                    }
                });
            }
        }
    }
    assert_eq!(done, 1, "one [DONE], last");
    assert_eq!(&kinds[..3], ["planner@1", "critic@1", "host:continue"]);
    assert_eq!(kinds.last().map(String::as_str), Some("report"));
    // Stored like any run, with who asked.
    let (status, spec): (String, String) = db_conn(dir, "s.db")
        .query_row(
            "SELECT status, plan_json FROM runs WHERE run_id = ?1",
            [&session],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the session's run");
    assert_eq!(status, "succeeded");
    let spec: serde_json::Value = serde_json::from_str(&spec).expect("spec");
    assert_eq!(spec["user_id"], "user_123");
    assert_eq!(spec["conversation_id"], "conv_456");
    assert_eq!(spec["question"], "帮我制定IELTS备考计划");
}

#[test]
fn a_client_that_disconnects_stops_its_session() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("none.toml"), "").expect("config");
    let server = serve(
        dir,
        "d.db",
        &["--chunk-ms", "200", "--first-chunk-ms", "300"],
    );
    let s = post(server.port, SEED_REQUEST);
    let mut reader = BufReader::new(s);
    let mut session = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).expect("read") > 0,
            "stream ended early"
        );
        if let Some(id) = line.trim().strip_prefix("X-Plexus-Session: ") {
            session = id.to_string();
        }
        if line.starts_with("data: ") {
            break;
        }
    }
    assert!(!session.is_empty());
    drop(reader);
    let end = Instant::now() + Duration::from_secs(20);
    let (status, finished) = loop {
        let conn = db_conn(dir, "d.db");
        let status: String = conn
            .query_row(
                "SELECT status FROM runs WHERE run_id = ?1",
                [&session],
                |r| r.get(0),
            )
            .expect("the run");
        let finished: Option<String> = conn
            .query_row(
                "SELECT payload FROM execution_logs WHERE run_id = ?1 AND kind = 'debate_finished'",
                [&session],
                |r| r.get(0),
            )
            .ok();
        if status != "running" && finished.is_some() {
            break (status, finished.unwrap_or_default());
        }
        assert!(
            Instant::now() < end,
            "the session did not stop (status {status})"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, "cancelled");
    let finished: serde_json::Value = serde_json::from_str(&finished).expect("payload");
    assert_eq!(finished["status"], "cancelled");
}

#[test]
fn bad_requests_get_their_status_and_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("none.toml"), "").expect("config");
    let server = serve(dir, "e.db", &["--chunk-ms", "0", "--first-chunk-ms", "0"]);
    let p = server.port;
    let post_body = |body: &str| {
        whole(
            p,
            &format!(
                "POST /api/chat HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    let wrong_mode = post_body(r#"{"message": "x", "mode": "single_agent"}"#);
    assert!(wrong_mode.starts_with("HTTP/1.1 400"), "{wrong_mode}");
    assert!(wrong_mode.contains(r#""field":"mode""#), "{wrong_mode}");
    let empty = post_body(r#"{"message": "  ", "mode": "multi_agent"}"#);
    assert!(
        empty.starts_with("HTTP/1.1 400") && empty.contains(r#""field":"message""#),
        "{empty}"
    );
    let not_json = post_body("hello");
    assert!(
        not_json.starts_with("HTTP/1.1 400") && not_json.contains("not a start request"),
        "{not_json}"
    );
    let get = whole(p, "GET /api/chat HTTP/1.1\r\n\r\n");
    assert!(
        get.starts_with("HTTP/1.1 405") && get.contains("Allow: POST"),
        "{get}"
    );
    let other = whole(p, "POST /api/other HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    assert!(other.starts_with("HTTP/1.1 404"), "{other}");
    let big = whole(
        p,
        "POST /api/chat HTTP/1.1\r\nContent-Length: 999999\r\n\r\n",
    );
    assert!(big.starts_with("HTTP/1.1 413"), "{big}");
    let no_len = whole(p, "POST /api/chat HTTP/1.1\r\n\r\n");
    assert!(no_len.starts_with("HTTP/1.1 411"), "{no_len}");
    let junk = whole(p, "\u{1}\u{2} nonsense\r\n\r\n");
    assert!(
        junk.starts_with("HTTP/1.1 400") || junk.starts_with("HTTP/1.1 505"),
        "{junk}"
    );
    // A client that asks before sending its body (curl does for bodies over 1 KB).
    let body = r#"{"message": "x", "mode": "nope"}"#;
    let mut s = TcpStream::connect(("127.0.0.1", p)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "POST /api/chat HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .expect("head");
    let mut first = [0u8; 25];
    s.read_exact(&mut first).expect("the interim answer");
    assert_eq!(&first, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(body.as_bytes()).expect("body");
    let mut rest = String::new();
    s.read_to_string(&mut rest).expect("the answer");
    assert!(rest.starts_with("HTTP/1.1 400"), "{rest}");
    // None of it started a session.
    let n: i64 = db_conn(dir, "e.db")
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .expect("the database serve created");
    assert_eq!(n, 0);
}
