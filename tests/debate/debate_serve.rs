//! `plexus serve` through the real binary and a plain TCP client on 127.0.0.1: a
//! session started by the front end's request streams its events line by line and is
//! stored with who asked; a client that disconnects mid-session stops it (`cancelled`
//! in the database); a server stopped mid-session ends the stream with an `error` event
//! before `[DONE]`; bad requests get the status and the JSON body they deserve. Who may
//! call (Host, Origin, token) is in `access`; the time and number limits in `limits`.

#[path = "debate_serve/access.rs"]
mod access;
#[path = "debate_serve/limits.rs"]
mod limits;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plexus::base::protocol::debate::{SseData, StreamEvent};

/// A running `plexus serve`, killed when dropped.
pub struct Server {
    child: Child,
    port: u16,
    /// What it printed on stderr so far.
    stderr: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `Host: 127.0.0.1:PORT`, as a browser or curl names the server.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// `plexus serve` on a free port of 127.0.0.1 with `args`, its database `db` in `dir`.
pub fn serve_with(dir: &Path, db: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plexus"));
    cmd.current_dir(dir)
        .env("PLEXUS_CONFIG", dir.join("none.toml"))
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_SERVE_TOKEN")
        .args(["--db", db, "serve", "--port", "0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn plexus serve");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut line = String::new();
    let port = loop {
        line.clear();
        assert!(
            err.read_line(&mut line).expect("stderr line") > 0,
            "serve ended early"
        );
        stderr.lock().expect("stderr").push_str(&line);
        if let Some(rest) = line.trim().strip_prefix("listening on http://127.0.0.1:") {
            break rest.parse::<u16>().expect("port");
        }
    };
    // Keep draining stderr so the server never blocks on it.
    let kept = stderr.clone();
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            if let Ok(mut s) = kept.lock() {
                s.push_str(&l);
                s.push('\n');
            }
        }
    });
    Server {
        child,
        port,
        stderr,
    }
}

fn serve(dir: &Path, db: &str, pace: &[&str]) -> Server {
    serve_with(dir, db, pace, &[])
}

/// A session's start request sent on a new connection (the answer is left to read).
pub fn post(server: &Server, extra_headers: &str, body: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        s,
        "POST /api/chat HTTP/1.1\r\nHost: {}\r\n{extra_headers}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        server.host(),
        body.len()
    )
    .expect("send");
    s
}

/// The answer to `raw`, sent on a new connection: its head and its body (unchunked).
pub fn exchange(port: u16, raw: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    s.write_all(raw.as_bytes()).expect("send");
    read_answer(&mut s)
}

/// The whole answer on `s`: its head and its body (unchunked).
pub fn read_answer(s: &mut TcpStream) -> (String, String) {
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (head.to_string(), body)
}

/// A chunked body's data.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

/// The value of header `name` in `head` (case-insensitive name).
pub fn header_of<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn db_conn(dir: &Path, db: &str) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join(db)).expect("open the database")
}

/// Sessions stored in `db`.
pub fn runs(dir: &Path, db: &str) -> i64 {
    db_conn(dir, db)
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .expect("the database serve created")
}

/// A temporary directory with an empty config.
pub fn workdir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("none.toml"), "").expect("config");
    tmp
}

/// The items of an event stream's body, checking its framing: each `data: …` line
/// followed by a blank line, nothing after `[DONE]`.
fn items(body: &str) -> Vec<SseData> {
    let lines: Vec<&str> = body.split('\n').collect();
    assert_eq!(lines.last(), Some(&""));
    let lines = &lines[..lines.len() - 1];
    assert!(lines.len().is_multiple_of(2), "{lines:?}");
    let mut out = Vec::new();
    for pair in lines.chunks(2) {
        assert_eq!(pair[1], "", "a blank line after each event");
        let payload = pair[0].strip_prefix("data: ").expect("a data line");
        assert!(
            !matches!(out.last(), Some(SseData::Done)),
            "nothing after [DONE]"
        );
        out.push(SseData::parse(payload).unwrap_or_else(|e| panic!("{payload}: {e}")));
    }
    out
}

const SEED_REQUEST: &str = r#"{"message": "帮我制定IELTS备考计划", "mode": "multi_agent", "userId": "user_123", "conversationId": "conv_456"}"#;

/// Reads the head of a streamed answer and its first event line; the session id.
fn first_event(s: TcpStream) -> (BufReader<TcpStream>, String) {
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
    (reader, session)
}

/// Waits until the session has ended; its status and `debate_finished` payload.
fn ended(dir: &Path, db: &str, session: &str) -> (String, serde_json::Value) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let conn = db_conn(dir, db);
        let status: String = conn
            .query_row(
                "SELECT status FROM runs WHERE run_id = ?1",
                [session],
                |r| r.get(0),
            )
            .expect("the run");
        let finished: Option<String> = conn
            .query_row(
                "SELECT payload FROM execution_logs WHERE run_id = ?1 AND kind = 'debate_finished'",
                [session],
                |r| r.get(0),
            )
            .ok();
        if let (false, Some(f)) = (status == "running", finished) {
            return (status, serde_json::from_str(&f).expect("payload"));
        }
        assert!(
            Instant::now() < end,
            "the session did not stop (status {status})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_session_streams_line_by_line_and_is_stored_with_who_asked() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve(dir, "s.db", &["--chunk-ms", "0", "--first-chunk-ms", "0"]);
    let mut s = post(&server, "", SEED_REQUEST);
    let (head, body) = read_answer(&mut s);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Type: text/event-stream"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        None,
        "{head}"
    );
    let session = header_of(&head, "X-Plexus-Session")
        .expect("the session header")
        .to_string();
    let items = items(&body);
    assert_eq!(items.last(), Some(&SseData::Done), "[DONE] last");
    let kinds: Vec<String> = items[..items.len() - 1]
        .iter()
        .map(|item| match item {
            SseData::Done => panic!("one [DONE], last"),
            SseData::Event(e) => match e.as_ref() {
                StreamEvent::AgentOutput(a) => format!("{}@{}", a.agent, a.round),
                StreamEvent::HostDecision(h) => format!("host:{}", h.action),
                StreamEvent::FinalReport(r) => {
                    assert!(!r.plan.phases.is_empty(), "the report carries the plan");
                    "report".into()
                }
                StreamEvent::Error(e) => panic!("a session that succeeded: {e:?}"),
            },
        })
        .collect();
    assert_eq!(&kinds[..3], ["planner@1", "critic@1", "host:continue"]);
    assert_eq!(kinds.last().map(String::as_str), Some("report"));
    // Stored like any run, with who asked.
    let (status, spec): (String, String) = db_conn(dir, "s.db")
        .query_row(
            "SELECT r.status, CAST(p.plan_json AS TEXT) FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = ?1",
            [&session],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the session's run");
    assert_eq!(status, "succeeded");
    let spec: serde_json::Value = serde_json::from_str(&spec).expect("spec");
    assert_eq!(spec["user_id"], "user_123");
    assert_eq!(spec["conversation_id"], "conv_456");
    assert_eq!(spec["question"], "帮我制定IELTS备考计划");
    // The front end reads the stored session back in its own shape.
    let get = |path: &str| {
        exchange(
            server.port,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                server.host()
            ),
        )
    };
    let (head, body) = get(&format!("/api/sessions/{session}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("a JSON document");
    assert_eq!(doc["type"], "multi_agent_session", "{doc:#}");
    assert_eq!(doc["sessionId"], session.as_str());
    let rounds = doc["rounds"].as_array().expect("rounds");
    assert!(rounds.len() >= 2, "{doc:#}");
    assert_eq!(rounds[0]["outputs"][0]["agent"], "planner");
    assert!(rounds[0]["outputs"][0]["position"]["conclusion"].is_string());
    assert_eq!(rounds[0]["hostDecision"]["action"], "continue");
    assert!(doc["finalReport"]["content"].is_string(), "{doc:#}");
    assert!(doc["finalReport"]["plan"]["phases"].is_array(), "{doc:#}");
    // The same document `show --json` prints.
    let show = crate::common::bin::output(
        crate::common::bin::plexus(dir).args(["--db", "s.db", "show", &session, "--json"]),
    );
    let shown: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
    assert_eq!(shown["multi_agent_session"], doc);
    // An id that names nothing, one that is not an id, a method that does not read.
    let (head, _) = get("/api/sessions/R20990101-000000-dead");
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    let (head, _) = get("/api/sessions/..%2Fetc");
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let (head, _) = exchange(
        server.port,
        &format!(
            "DELETE /api/sessions/{session} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            server.host()
        ),
    );
    assert!(head.starts_with("HTTP/1.1 405"), "{head}");
}

#[test]
fn a_client_that_disconnects_stops_its_session() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve(
        dir,
        "d.db",
        &["--chunk-ms", "200", "--first-chunk-ms", "300"],
    );
    let (reader, session) = first_event(post(&server, "", SEED_REQUEST));
    drop(reader);
    let (status, finished) = ended(dir, "d.db", &session);
    assert_eq!(status, "cancelled");
    assert_eq!(finished["status"], "cancelled");
}

#[cfg(unix)]
#[test]
fn a_server_stopped_mid_session_ends_the_stream_with_an_error_event_then_done() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let tmp = workdir();
    let dir = tmp.path();
    let mut server = serve(
        dir,
        "c.db",
        &["--chunk-ms", "200", "--first-chunk-ms", "300"],
    );
    let (mut reader, session) = first_event(post(&server, "", SEED_REQUEST));
    let pid = Pid::from_raw(i32::try_from(server.child.id()).expect("a pid"));
    kill(pid, Signal::SIGINT).expect("SIGINT");
    let mut rest = String::new();
    reader
        .read_to_string(&mut rest)
        .expect("the stream to its end");
    // What followed the first event, unchunked: the chunk holding the first event ends
    // with its blank line, then come whole chunks.
    let (_, after) = rest.split_once("\r\n").expect("the first chunk's end");
    let items = items(&dechunk(after));
    let n = items.len();
    assert!(n >= 2, "{items:?}");
    assert_eq!(items[n - 1], SseData::Done);
    let SseData::Event(e) = &items[n - 2] else {
        panic!("an event before [DONE]: {items:?}");
    };
    let StreamEvent::Error(e) = e.as_ref() else {
        panic!("an error event before [DONE]: {e:?}");
    };
    assert_eq!(e.error, "cancelled");
    assert_eq!(e.reason, "server_stopping");
    assert!(e.message.contains("SIGINT"), "{}", e.message);
    let status = server.child.wait().expect("serve exits");
    assert_eq!(status.code(), Some(0));
    let (status, _) = ended(dir, "c.db", &session);
    assert_eq!(status, "cancelled");
}

#[test]
fn bad_requests_get_their_status_and_field() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve(dir, "e.db", &["--chunk-ms", "0", "--first-chunk-ms", "0"]);
    let p = server.port;
    let host = server.host();
    let post_body = |body: &str| {
        let raw = format!(
            "POST /api/chat HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let (head, body) = exchange(p, &raw);
        format!("{head}\r\n\r\n{body}")
    };
    let raw = |r: &str| {
        let (head, body) = exchange(p, &r.replace("HOST", &host));
        format!("{head}\r\n\r\n{body}")
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
    let get = raw("GET /api/chat HTTP/1.1\r\nHost: HOST\r\n\r\n");
    assert!(
        get.starts_with("HTTP/1.1 405") && get.contains("Allow: POST"),
        "{get}"
    );
    let other = raw("POST /api/other HTTP/1.1\r\nHost: HOST\r\nContent-Length: 0\r\n\r\n");
    assert!(other.starts_with("HTTP/1.1 404"), "{other}");
    let big = raw("POST /api/chat HTTP/1.1\r\nHost: HOST\r\nContent-Length: 999999\r\n\r\n");
    assert!(big.starts_with("HTTP/1.1 413"), "{big}");
    let no_len = raw("POST /api/chat HTTP/1.1\r\nHost: HOST\r\n\r\n");
    assert!(no_len.starts_with("HTTP/1.1 411"), "{no_len}");
    let junk = raw("\u{1}\u{2} nonsense\r\n\r\n");
    assert!(
        junk.starts_with("HTTP/1.1 400") || junk.starts_with("HTTP/1.1 505"),
        "{junk}"
    );
    // A chunked body is read (here a start request with a wrong mode: 400, not 411).
    let body = r#"{"message": "x", "mode": "nope"}"#;
    let chunked = raw(&format!(
        "POST /api/chat HTTP/1.1\r\nHost: HOST\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    ));
    assert!(
        chunked.starts_with("HTTP/1.1 400") && chunked.contains(r#""field":"mode""#),
        "{chunked}"
    );
    // A chunked body over the limit is refused as it arrives.
    let piece = "x".repeat(16 * 1024);
    let mut s = TcpStream::connect(("127.0.0.1", p)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "POST /api/chat HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .expect("head");
    for _ in 0..5 {
        if write!(s, "{:x}\r\n{piece}\r\n", piece.len()).is_err() {
            break;
        }
    }
    let (head, _) = read_answer(&mut s);
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    // A client that asks before sending its body (curl does for bodies over 1 KB).
    let mut s = TcpStream::connect(("127.0.0.1", p)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "POST /api/chat HTTP/1.1\r\nHost: {host}\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
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
    assert_eq!(runs(dir, "e.db"), 0);
}
