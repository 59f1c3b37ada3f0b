//! Who `plexus serve` answers, with the headers a real browser sends: a page's origin
//! only when `--allow-origin` names it (its preflight answered, the session id header
//! readable), a `Host` that names the server only (a rebound name gets 421), the
//! `--token` on every request but the preflight; and no listening beyond the loopback
//! address without a token.

use super::*;

/// A front end's development server.
const FRONT_END: &str = "http://localhost:5173";

const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/// The preflight Chrome sends before a `fetch` POST with JSON and a bearer token.
fn preflight(server: &Server, origin: &str) -> (String, String) {
    let raw = format!(
        "OPTIONS /api/chat HTTP/1.1\r\nHost: {}\r\nConnection: keep-alive\r\nAccept: */*\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization,content-type\r\nOrigin: {origin}\r\nUser-Agent: {CHROME}\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Site: same-site\r\nSec-Fetch-Dest: empty\r\nReferer: {origin}/\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\n\r\n",
        server.host()
    );
    exchange(server.port, &raw)
}

/// The headers Chrome adds to the `fetch` POST itself.
fn browser_headers(origin: &str) -> String {
    format!(
        "Connection: keep-alive\r\nAccept: */*\r\nOrigin: {origin}\r\nUser-Agent: {CHROME}\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Site: same-site\r\nSec-Fetch-Dest: empty\r\nReferer: {origin}/\r\nAccept-Language: en-US,en;q=0.9\r\n"
    )
}

const PACE: [&str; 4] = ["--chunk-ms", "0", "--first-chunk-ms", "0"];

fn error_of(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).expect("a JSON body");
    v["error"].as_str().expect("an error message").to_string()
}

#[test]
fn a_preflight_from_an_allowed_origin_is_answered_and_another_refused() {
    let tmp = workdir();
    let server = serve_with(tmp.path(), "p.db", &["--allow-origin", FRONT_END], &[]);
    let (head, _) = preflight(&server, FRONT_END);
    assert!(head.starts_with("HTTP/1.1 204"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        Some(FRONT_END)
    );
    let methods = header_of(&head, "access-control-allow-methods").expect("methods");
    assert!(methods.contains("POST"), "{methods}");
    let allowed = header_of(&head, "access-control-allow-headers")
        .expect("headers")
        .to_ascii_lowercase();
    assert!(
        allowed.contains("content-type") && allowed.contains("authorization"),
        "{allowed}"
    );
    assert!(header_of(&head, "vary").is_some_and(|v| v.to_ascii_lowercase().contains("origin")));
    let (head, body) = preflight(&server, "https://evil.example");
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        None,
        "{head}"
    );
    let error = error_of(&body);
    assert!(
        error.contains("https://evil.example") && error.contains("--allow-origin"),
        "{error}"
    );
}

#[test]
fn a_page_of_an_allowed_origin_can_read_the_session_id_and_others_cannot_start_one() {
    let tmp = workdir();
    let dir = tmp.path();
    let mut args = vec!["--allow-origin", FRONT_END];
    args.extend(PACE);
    let server = serve_with(dir, "o.db", &args, &[]);
    let (head, body) = read_answer(&mut post(
        &server,
        &browser_headers(FRONT_END),
        SEED_REQUEST,
    ));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        Some(FRONT_END)
    );
    let exposed = header_of(&head, "access-control-expose-headers").expect("exposed headers");
    assert!(
        exposed.eq_ignore_ascii_case("x-plexus-session"),
        "{exposed}"
    );
    assert!(header_of(&head, "x-plexus-session").is_some());
    assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
    assert_eq!(runs(dir, "o.db"), 1);
    // Any other page is refused before a session starts.
    let (head, body) = read_answer(&mut post(
        &server,
        &browser_headers("https://evil.example"),
        SEED_REQUEST,
    ));
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert!(error_of(&body).contains("--allow-origin https://evil.example"));
    assert_eq!(runs(dir, "o.db"), 1);
}

#[test]
fn by_default_no_page_of_another_origin_may_start_a_session() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve_with(dir, "n.db", &PACE, &[]);
    let (head, _) = preflight(&server, FRONT_END);
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        None,
        "{head}"
    );
    let (head, body) = read_answer(&mut post(
        &server,
        &browser_headers(FRONT_END),
        SEED_REQUEST,
    ));
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        None,
        "{head}"
    );
    assert!(error_of(&body).contains(FRONT_END));
    assert_eq!(runs(dir, "n.db"), 0);
    // A client that is no browser page (curl, a backend) sends no Origin and is served.
    let (head, _) = read_answer(&mut post(&server, "", SEED_REQUEST));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
}

#[test]
fn a_request_naming_another_host_is_misdirected() {
    let tmp = workdir();
    let dir = tmp.path();
    let server = serve_with(dir, "h.db", &PACE, &[]);
    // A page whose name was rebound to 127.0.0.1 calls with its own name as Host.
    let raw = format!(
        "POST /api/chat HTTP/1.1\r\nHost: evil.example:{}\r\n{}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{SEED_REQUEST}",
        server.port,
        browser_headers(&format!("http://evil.example:{}", server.port)),
        SEED_REQUEST.len()
    );
    let (head, body) = exchange(server.port, &raw);
    assert!(
        head.starts_with("HTTP/1.1 421 Misdirected Request"),
        "{head}"
    );
    assert!(error_of(&body).contains("evil.example"));
    assert_eq!(runs(dir, "h.db"), 0);
    // The server's own names are fine.
    for host in ["localhost", "127.0.0.1"] {
        let raw = format!(
            "OPTIONS /api/chat HTTP/1.1\r\nHost: {host}:{}\r\n\r\n",
            server.port
        );
        let (head, _) = exchange(server.port, &raw);
        assert!(head.starts_with("HTTP/1.1 204"), "{host}: {head}");
    }
}

#[test]
fn the_token_is_asked_for_on_every_request_but_the_preflight() {
    let tmp = workdir();
    let dir = tmp.path();
    let token = "tok-3b9f0c1e7d";
    let mut args = vec!["--allow-origin", FRONT_END];
    args.extend(PACE);
    let server = serve_with(dir, "k.db", &args, &[("PLEXUS_SERVE_TOKEN", token)]);
    let (head, body) = read_answer(&mut post(&server, "", SEED_REQUEST));
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    assert_eq!(header_of(&head, "www-authenticate"), Some("Bearer"));
    assert!(error_of(&body).contains("Authorization: Bearer"));
    let (head, body) = read_answer(&mut post(
        &server,
        "Authorization: Bearer tok-wrong\r\n",
        SEED_REQUEST,
    ));
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    assert!(!body.contains(token), "{body}");
    // A browser page's 401 carries the CORS headers, so the page can read it.
    let (head, _) = read_answer(&mut post(
        &server,
        &browser_headers(FRONT_END),
        SEED_REQUEST,
    ));
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    assert_eq!(
        header_of(&head, "access-control-allow-origin"),
        Some(FRONT_END)
    );
    assert_eq!(runs(dir, "k.db"), 0);
    // The preflight goes without (browsers never send credentials on it).
    let (head, _) = preflight(&server, FRONT_END);
    assert!(head.starts_with("HTTP/1.1 204"), "{head}");
    let auth = format!(
        "{}Authorization: Bearer {token}\r\n",
        browser_headers(FRONT_END)
    );
    let (head, body) = read_answer(&mut post(&server, &auth, SEED_REQUEST));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(body.ends_with("data: [DONE]\n\n"));
    assert_eq!(runs(dir, "k.db"), 1);
    let printed = server.stderr.lock().expect("stderr").clone();
    assert!(!printed.contains(token), "the token was printed: {printed}");
}

#[test]
fn beyond_the_loopback_address_serve_refuses_to_start_without_a_token() {
    let tmp = workdir();
    let err_path = tmp.path().join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(tmp.path())
        .env("PLEXUS_CONFIG", tmp.path().join("none.toml"))
        .env_remove("PLEXUS_SERVE_TOKEN")
        .args(["--db", "x.db", "serve", "--port", "0", "--host", "0.0.0.0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("run plexus serve");
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve listened on 0.0.0.0 without a token");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(&err_path).expect("stderr");
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a loopback address") && err.contains("--token"),
        "{err}"
    );
    assert!(err.contains("PLEXUS_SERVE_TOKEN"), "{err}");
    assert!(!err.contains("listening on"), "{err}");
}
