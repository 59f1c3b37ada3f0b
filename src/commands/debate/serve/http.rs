//! The little HTTP/1.1 `plexus serve` needs, by hand: one request per connection (its
//! method, path, headers and a Content-Length body within limits), whole responses,
//! and the head of a streamed one.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Most bytes of the request line and headers.
pub const MAX_HEAD: u64 = 16 * 1024;
/// Most bytes of a request body.
pub const MAX_BODY: usize = 64 * 1024;

/// A request.
#[derive(Debug)]
pub struct Request {
    /// `GET`, `POST`, …
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

/// Why a request was not read: the status to answer and a message.
#[derive(Debug)]
pub struct Refusal {
    /// HTTP status.
    pub status: u16,
    /// What was wrong.
    pub message: String,
}

fn refuse(status: u16, message: impl Into<String>) -> Refusal {
    Refusal {
        status,
        message: message.into(),
    }
}

/// Reads one request (answering `Expect: 100-continue` on `wr`). `Ok(None)`: the
/// client went away before sending one.
pub async fn read_request(
    rd: &mut BufReader<OwnedReadHalf>,
    wr: &mut OwnedWriteHalf,
) -> Result<Option<Request>, Refusal> {
    let mut head = Vec::new();
    let mut limited = (&mut *rd).take(MAX_HEAD);
    loop {
        let before = head.len();
        let n = limited
            .read_until(b'\n', &mut head)
            .await
            .map_err(|e| refuse(400, format!("cannot read the request: {e}")))?;
        if n == 0 {
            if head.is_empty() {
                return Ok(None);
            }
            return Err(refuse(431, "the request head is too large or cut off"));
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let text = String::from_utf8(head).map_err(|_| refuse(400, "the request head is not UTF-8"))?;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(refuse(
            400,
            "the request line is not `METHOD PATH HTTP/1.1`",
        ));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(refuse(
            505,
            format!("{version} is not supported; use HTTP/1.1"),
        ));
    }
    let mut headers = Vec::new();
    for l in lines {
        if l.is_empty() {
            continue;
        }
        let Some((n, v)) = l.split_once(':') else {
            return Err(refuse(400, "a header line has no `:`"));
        };
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let path = target.split('?').next().unwrap_or("/").to_string();
    let mut req = Request {
        method: method.to_string(),
        path,
        headers,
        body: Vec::new(),
    };
    if req
        .headers
        .iter()
        .filter(|(n, _)| n == "content-length")
        .count()
        > 1
    {
        return Err(refuse(400, "more than one Content-Length"));
    }
    if req.header("transfer-encoding").is_some() {
        return Err(refuse(
            411,
            "send the body with a Content-Length, not chunked",
        ));
    }
    let len = match req.header("content-length") {
        None => 0,
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => v
            .parse::<usize>()
            .map_err(|_| refuse(413, format!("Content-Length `{v}` is too large")))?,
        Some(v) => return Err(refuse(400, format!("Content-Length `{v}` is not a number"))),
    };
    if len > MAX_BODY {
        return Err(refuse(
            413,
            format!("the body has {len} bytes; at most {MAX_BODY} are accepted"),
        ));
    }
    if req.method == "POST" && req.header("content-length").is_none() {
        return Err(refuse(411, "a POST needs a Content-Length"));
    }
    if req
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        wr.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .map_err(|e| refuse(400, format!("cannot answer Expect: {e}")))?;
    }
    req.body = vec![0; len];
    rd.read_exact(&mut req.body)
        .await
        .map_err(|_| refuse(400, "the body is shorter than its Content-Length"))?;
    Ok(Some(req))
}

impl Request {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The reason phrase of a status (the standard one).
pub fn reason(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

/// Headers every answer carries (a browser front end on another origin may call).
const COMMON: &str = "Access-Control-Allow-Origin: *\r\nConnection: close\r\n";

/// Writes a whole JSON (or empty) response.
pub async fn write_whole(
    wr: &mut OwnedWriteHalf,
    status: u16,
    extra: &[(&str, &str)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n{COMMON}", reason(status));
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    wr.write_all(head.as_bytes()).await?;
    wr.write_all(body.as_bytes()).await?;
    wr.flush().await
}

/// Writes the head of an event stream (its body ends when the connection closes).
pub async fn write_stream_head(wr: &mut OwnedWriteHalf, session: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\n{COMMON}Content-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nX-Plexus-Session: {session}\r\n\r\n"
    );
    wr.write_all(head.as_bytes()).await?;
    wr.flush().await
}
