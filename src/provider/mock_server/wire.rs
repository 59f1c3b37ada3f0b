//! HTTP/1.1 by hand for the mock server: reading a request (keep-alive, a body of
//! Content-Length bytes), writing a whole response or one chunk of a chunked one.

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A request read off a connection.
pub struct Request {
    /// Path.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

/// Reads the next request; `None` when the connection ends or misbehaves.
pub async fn read_request(stream: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    use tokio::io::AsyncBufReadExt;
    let mut line = String::new();
    if (&mut *stream).take(64 * 1024).read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let _method = parts.next().unwrap_or_default();
    let path = parts.next().unwrap_or("/").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if (&mut *stream).take(64 * 1024).read_line(&mut h).await? == 0 {
            return Ok(None);
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        if headers.len() > 200 {
            return Ok(None);
        }
    }
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(8 * 1024 * 1024);
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await?;
    Ok(Some(Request {
        path,
        headers,
        body,
    }))
}

/// A header's value.
pub fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The reason phrase of a status code.
pub fn reason(code: u16) -> &'static str {
    reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

/// Writes one chunk of a chunked body (an empty one ends it).
pub async fn write_chunk(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(data.len() + 12);
    buf.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    buf.extend_from_slice(data);
    buf.extend_from_slice(b"\r\n");
    stream.write_all(&buf).await
}

/// Writes a whole JSON response.
pub async fn write_whole(
    stream: &mut TcpStream,
    code: u16,
    reason: &str,
    extra: &[(&str, String)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.flush().await
}
