//! What plexus's two HTTP servers (`plexus serve` and the mock LLM server) share on
//! hyper: reading a request body within a limit, a header's text, a whole response with
//! a readable reason phrase.

use std::future::poll_fn;
use std::pin::Pin;

use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};

/// Why a request body was not read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// More bytes than the limit (the count known so far).
    TooLarge(u64),
    /// The connection failed or the body was malformed.
    Broken(String),
}

/// Reads a request body of at most `limit` bytes (Content-Length or chunked). A declared
/// length over the limit is refused before a byte is read.
pub async fn read_body(mut body: Incoming, limit: usize) -> Result<Vec<u8>, BodyError> {
    let limit = limit as u64;
    if let Some(declared) = body.size_hint().exact() {
        if declared > limit {
            return Err(BodyError::TooLarge(declared));
        }
    }
    let mut out = Vec::new();
    while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if (out.len() + data.len()) as u64 > limit {
                return Err(BodyError::TooLarge((out.len() + data.len()) as u64));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The text of header `name` (`None` when absent or not visible ASCII).
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A response of `status` with a JSON (or, when empty, no) body and the given headers;
/// its reason phrase from [`crate::base::http_status::reason`].
pub fn whole<B: From<Bytes>>(
    status: u16,
    headers: &[(&'static str, HeaderValue)],
    body: impl Into<Bytes>,
) -> Response<B> {
    let body: Bytes = body.into();
    let json = !body.is_empty();
    let mut r = Response::new(B::from(body));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if json {
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    for (name, value) in headers {
        r.headers_mut().append(*name, value.clone());
    }
    crate::base::http_status::with_reason(r)
}

/// `HTTP/1.1 CODE Reason` with a JSON body, written by hand on a connection no server
/// is serving (refused at the connection limit, or timed out before its request).
pub fn raw_response(status: u16, extra: &[(&str, &str)], body: &str) -> String {
    let mut head = format!(
        "HTTP/1.1 {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        crate::base::http_status::status_text(status),
        body.len()
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    format!("{head}\r\n{body}")
}
