//! `plexus serve`'s limits, each answered with a status and a JSON body rather than a
//! silently closed connection: a request that does not arrive in time (408), more
//! connections (503) or more sessions (503) than it takes at once.

use super::*;

#[test]
fn a_request_that_does_not_arrive_in_time_is_answered_408() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve(dir, "t.db", &[]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(s, "POST /api/chat HTTP/1.1\r\nHost: {}\r\n", server.host()).expect("half a head");
    let started = Instant::now();
    let (head, body) = read_answer(&mut s);
    assert!(head.starts_with("HTTP/1.1 408 Request Timeout"), "{head}");
    assert!(body.contains(r#""error""#), "{body}");
    assert!(
        started.elapsed() >= Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn past_the_connection_limit_a_connection_is_answered_503_with_a_body() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve(dir, "n.db", &[]);
    // The limit's worth of connections that send nothing (yet).
    let held: Vec<TcpStream> = (0..256)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).expect("connect"))
        .collect();
    let raw = format!(
        "POST /api/chat HTTP/1.1\r\nHost: {}\r\nContent-Length: 2\r\n\r\n{{}}",
        server.host()
    );
    let (head, body) = exchange(server.port, &raw);
    assert!(
        head.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{head}"
    );
    let v: serde_json::Value = serde_json::from_str(&body).expect("a JSON body");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("256 connections")),
        "{v}"
    );
    drop(held);
}

#[test]
fn past_the_session_limit_a_request_is_answered_503_with_a_json_body() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve(
        dir,
        "m.db",
        &["--chunk-ms", "500", "--first-chunk-ms", "2000"],
    );
    let streams: Vec<BufReader<TcpStream>> = (0..32)
        .map(|_| {
            let mut r = BufReader::new(post(&server, "", SEED_REQUEST));
            let mut line = String::new();
            r.read_line(&mut line).expect("the status line");
            assert!(line.starts_with("HTTP/1.1 200"), "{line}");
            r
        })
        .collect();
    let mut s = post(&server, "", SEED_REQUEST);
    let (head, body) = read_answer(&mut s);
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert_eq!(header_of(&head, "retry-after"), Some("10"));
    let v: serde_json::Value = serde_json::from_str(&body).expect("a JSON body");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("32 sessions")),
        "{v}"
    );
    drop(streams);
}
