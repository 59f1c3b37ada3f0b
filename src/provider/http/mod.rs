//! Providers over HTTP: one pooled client per profile, the profile's concurrency limit
//! and rate limit, streaming with an idle timeout and a size cap, and every transport
//! fault mapped to a [`ProviderError`] (and so to a seed 001 error code):
//!
//! | fault                                   | error                | code |
//! |-----------------------------------------|----------------------|------|
//! | connection refused, reset, stream cut   | `Transient` (backoff) | E001 |
//! | 429 (Retry-After honoured), 500/502/503/504/529 | `Transient`  | E001 |
//! | DNS failure                             | `SourceNotFound`     | E001 |
//! | 408, connect timeout, stalled stream    | `Timeout`            | E004 |
//! | invalid SSE, invalid JSON in a chunk    | `Malformed`          | E002 |
//! | 401/403, 404, other 4xx, TLS, oversized | `Permanent`          | E008 |
//!
//! The API key lives only in this module's client: it is sent in one header, the bytes
//! of every response pass through a [`redact::Redactor`] before they are decoded, and the
//! decoded text through a [`redact::TextRedactor`] (answer deltas as they accumulate, the
//! rest of the answer and error messages whole), so a server that echoes the key back —
//! split across stream events or JSON-escaped — cannot get it into a message, the log or text.
//! Both find the key in any JSON spelling of it (`\u0073k-…`), and the provider lends its
//! text redactor ([`Provider::secret_redactor`]) to whoever decodes the answer's JSON.

pub mod anthropic;
pub mod emit;
mod key_match;
pub mod openai;
pub mod redact;
pub mod sse;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use serde_json::Value;
use tokio::sync::Semaphore;

use self::emit::redact_output;
pub use self::emit::Emit;
use self::redact::{Redactor, TextRedactor};
use super::profile::{ApiKey, ProfileError, ProviderKind, ProviderProfile};
use super::rate::RateLimiter;
use super::{AdmitFuture, ChunkSink, Provider, ProviderError, ProviderFuture, ProviderOutput};
use crate::engine::request::render_user_prompt;
use crate::protocol::AgentRequest;
use crate::text_cut::cut_chars;

/// Most bytes of an error body kept for the message.
const ERROR_BODY_CAP: usize = 16 * 1024;

/// An OpenAI-compatible or Anthropic provider.
pub struct HttpProvider {
    profile: ProviderProfile,
    client: reqwest::Client,
    redactor: Redactor,
    text_redactor: TextRedactor,
    slots: Arc<Semaphore>,
    rate: Option<RateLimiter>,
    /// No call starts before this: set by a 429/503 with Retry-After, so the whole
    /// profile waits, not only the call that was told.
    not_before: std::sync::Mutex<Option<tokio::time::Instant>>,
}

/// The headers every call through `profile` carries: its own `headers`, and the key as
/// `x-api-key` (Anthropic) or `Authorization: Bearer` (everything else), marked
/// sensitive so it never shows in debug output.
pub fn profile_headers(
    profile: &ProviderProfile,
    key: Option<&ApiKey>,
    anthropic: bool,
) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    for (k, v) in &profile.headers {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| e.to_string())?;
        let value = HeaderValue::from_str(v).map_err(|e| e.to_string())?;
        headers.insert(name, value);
    }
    if let Some(k) = key {
        let bad = |_| "the API key has characters not allowed in HTTP".to_string();
        if anthropic {
            let mut v = HeaderValue::from_str(k.expose()).map_err(bad)?;
            v.set_sensitive(true);
            headers.insert("x-api-key", v);
        } else {
            let mut v = HeaderValue::from_str(&format!("Bearer {}", k.expose())).map_err(bad)?;
            v.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, v);
        }
    }
    Ok(headers)
}

impl HttpProvider {
    /// Builds the provider, reading the key (an error when the profile names a key that
    /// is missing).
    pub fn new(profile: ProviderProfile) -> Result<HttpProvider, ProfileError> {
        let key = profile.api_key()?;
        let fail = |message: String| ProfileError {
            origin: "client".into(),
            profile: profile.name.clone(),
            message,
        };
        let mut headers = profile_headers(
            &profile,
            key.as_ref(),
            profile.kind == ProviderKind::Anthropic,
        )
        .map_err(fail)?;
        if profile.kind == ProviderKind::Anthropic {
            let v = HeaderValue::from_str(&profile.anthropic_version)
                .map_err(|e| fail(e.to_string()))?;
            headers.insert("anthropic-version", v);
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .user_agent(concat!("plexus/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(crate::ranges::duration_from_secs(profile.connect_timeout_s))
            .pool_idle_timeout(Duration::from_secs(90))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| fail(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpProvider {
            slots: Arc::new(Semaphore::new(profile.concurrency)),
            rate: RateLimiter::new(profile.rate_limit_rpm, profile.rate_burst),
            redactor: Redactor::new(key.as_ref().map(ApiKey::expose)),
            text_redactor: TextRedactor::new(key.as_ref().map(ApiKey::expose)),
            not_before: std::sync::Mutex::new(None),
            profile,
            client,
        })
    }

    fn url(&self) -> String {
        match self.profile.kind {
            ProviderKind::Anthropic => anthropic::url(&self.profile),
            _ => openai::url(&self.profile),
        }
    }

    /// Replaces the key wherever it appears in `text` (messages built here, decoded).
    fn redact(&self, text: &str) -> String {
        self.text_redactor.text(text)
    }

    /// Takes a slot of the profile's concurrency limit, waits out a server's
    /// Retry-After, then takes a rate-limit token.
    pub async fn admit_call(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let permit = self.slots.clone().acquire_owned().await.ok();
        let until = *self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(until) = until {
            // Spread the calls held back over a fifth of the pause after it ends, so
            // they do not all come back at the same instant.
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            tokio::time::sleep_until(until + left.mul_f64(0.2 * fastrand::f64())).await;
        }
        if let Some(rate) = &self.rate {
            rate.acquire().await;
        }
        permit
    }

    /// Holds every new call of this profile until `ms` from now.
    fn pause_profile(&self, ms: u64) {
        let until = tokio::time::Instant::now() + Duration::from_millis(ms);
        let mut nb = self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        if nb.is_none_or(|t| t < until) {
            *nb = Some(until);
        }
    }

    async fn call(
        &self,
        request: &AgentRequest,
        attempt: u32,
        sink: &mut dyn ChunkSink,
    ) -> Result<ProviderOutput, ProviderError> {
        let idle = self.idle(attempt);
        let rendered = render_user_prompt(&request.user_prompt);
        let user_text = rendered.as_deref().map(|r| r.get()).unwrap_or_default();
        let body = match self.profile.kind {
            ProviderKind::Anthropic => anthropic::body(request, user_text, &self.profile),
            _ => openai::body(request, user_text, &self.profile),
        };
        let url = self.url();
        let body = serde_json::to_vec(&body)
            .map_err(|e| ProviderError::Permanent(format!("cannot encode the request: {e}")))?;
        let mut builder = self
            .client
            .post(&url)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        for (name, value) in [
            ("x-plexus-invocation", &request.invocation_id),
            ("x-plexus-task", &request.task_id),
        ] {
            if let Ok(v) = HeaderValue::from_str(value) {
                builder = builder.header(name, v);
            }
        }
        let response = builder
            .send()
            .await
            .map_err(|e| self.send_error(&e, &url))?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = self.read_capped(response, ERROR_BODY_CAP, true, idle).await;
            let text = String::from_utf8_lossy(&body.unwrap_or_default()).into_owned();
            return Err(self.status_error(status, &headers, &text, &url));
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut emit = Emit::new(sink, self.text_redactor.clone());
        let mut out = ProviderOutput::default();
        let read = if is_sse {
            self.read_stream(response, &mut emit, &mut out, idle).await
        } else {
            self.read_whole(response, &mut emit, &mut out, idle).await
        };
        // The text held back as a possible start of the key goes on now, answer or error.
        emit.flush();
        read.map(|()| out)
    }

    async fn read_whole(
        &self,
        response: reqwest::Response,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
        idle: Duration,
    ) -> Result<(), ProviderError> {
        let body = self
            .read_capped(response, self.profile.max_response_bytes, false, idle)
            .await?;
        let v: Value = serde_json::from_slice(&body).map_err(|e| {
            ProviderError::Malformed(format!(
                "the answer is not JSON ({e}): {}",
                openai::preview(&String::from_utf8_lossy(&body))
            ))
        })?;
        match self.profile.kind {
            ProviderKind::Anthropic => anthropic::whole(&v, emit, out),
            _ => openai::whole(&v, emit, out),
        }
    }

    /// The idle timeout of an attempt: ×1.5 per retry (a model that thinks silently
    /// gets longer), at most ×4.
    fn idle(&self, attempt: u32) -> Duration {
        let grow = 1.5f64
            .powi(attempt.saturating_sub(1).min(8) as i32)
            .min(4.0);
        crate::ranges::duration_from_secs(self.profile.idle_timeout_s * grow)
    }

    /// Reads a whole body (redacted) within the idle timeout; past `cap` it fails (E008)
    /// unless `truncate`, which keeps the first `cap` bytes.
    async fn read_capped(
        &self,
        response: reqwest::Response,
        cap: usize,
        truncate: bool,
        idle: Duration,
    ) -> Result<Vec<u8>, ProviderError> {
        let mut stream = response.bytes_stream();
        let mut redactor = self.redactor.clone();
        let mut body = Vec::new();
        loop {
            let next = tokio::time::timeout(idle, stream.next())
                .await
                .map_err(|_| self.stalled(body.len(), idle))?;
            match next {
                None => {
                    body.extend(redactor.finish());
                    if body.len() > cap {
                        if truncate {
                            body.truncate(cap);
                        } else {
                            return Err(self.oversized(body.len()));
                        }
                    }
                    return Ok(body);
                }
                Some(Err(e)) => return Err(self.cut(&e, body.len())),
                Some(Ok(bytes)) => {
                    let bytes = redactor.push(&bytes);
                    if body.len() + bytes.len() > cap {
                        if truncate {
                            body.extend_from_slice(&bytes[..cap - body.len()]);
                            return Ok(body);
                        }
                        return Err(self.oversized(body.len() + bytes.len()));
                    }
                    body.extend_from_slice(&bytes);
                }
            }
        }
    }

    async fn read_stream(
        &self,
        response: reqwest::Response,
        emit: &mut Emit<'_>,
        out: &mut ProviderOutput,
        idle: Duration,
    ) -> Result<(), ProviderError> {
        let mut stream = response.bytes_stream();
        let mut redactor = self.redactor.clone();
        let mut decoder = sse::SseDecoder::new();
        let mut events = Vec::new();
        let mut openai = openai::Stream::default();
        let mut anthropic = anthropic::Stream::default();
        let mut received = 0usize;
        let mut ended = false;
        while !ended {
            let next = tokio::time::timeout(idle, stream.next())
                .await
                .map_err(|_| self.stalled(received, idle))?;
            let bytes = match next {
                None => {
                    ended = true;
                    redactor.finish()
                }
                Some(Err(e)) => return Err(self.cut(&e, received)),
                Some(Ok(b)) => {
                    received += b.len();
                    if received > self.profile.max_response_bytes {
                        return Err(self.oversized(received));
                    }
                    redactor.push(&b)
                }
            };
            decoder
                .feed(&bytes, &mut events)
                .map_err(ProviderError::Malformed)?;
            for ev in events.drain(..) {
                let done = match self.profile.kind {
                    ProviderKind::Anthropic => anthropic.event(&ev.data, emit, out),
                    _ => openai.event(&ev.data, emit, out),
                }?;
                if done {
                    return Ok(());
                }
            }
        }
        let complete = match self.profile.kind {
            ProviderKind::Anthropic => anthropic.ended(out),
            _ => openai.ended(out),
        };
        if complete && decoder.pending() == 0 {
            return Ok(());
        }
        Err(ProviderError::Transient {
            message: format!(
                "{}: the stream ended before its end marker after {received} bytes ({} bytes of text kept)",
                self.profile.label(),
                emit.emitted
            ),
            retry_after_ms: None,
        })
    }

    fn stalled(&self, received: usize, idle: Duration) -> ProviderError {
        ProviderError::Timeout(format!(
            "{}: no data for {:.1}s (idle timeout) after {received} bytes",
            self.profile.label(),
            idle.as_secs_f64()
        ))
    }

    fn oversized(&self, received: usize) -> ProviderError {
        ProviderError::Permanent(format!(
            "{}: the answer passed max_response_bytes ({} bytes; {received} received)",
            self.profile.label(),
            self.profile.max_response_bytes
        ))
    }

    fn cut(&self, e: &reqwest::Error, received: usize) -> ProviderError {
        ProviderError::Transient {
            message: format!(
                "{}: the stream was cut after {received} bytes: {}",
                self.profile.label(),
                self.redact(&error_chain(e))
            ),
            retry_after_ms: None,
        }
    }

    fn redact_error(&self, e: ProviderError) -> ProviderError {
        match e {
            ProviderError::Transient {
                message,
                retry_after_ms,
            } => ProviderError::Transient {
                message: self.redact(&message),
                retry_after_ms,
            },
            ProviderError::SourceNotFound(m) => ProviderError::SourceNotFound(self.redact(&m)),
            ProviderError::Timeout(m) => ProviderError::Timeout(self.redact(&m)),
            ProviderError::Malformed(m) => ProviderError::Malformed(self.redact(&m)),
            ProviderError::Permanent(m) => ProviderError::Permanent(self.redact(&m)),
        }
    }

    /// A failure before any response: connect, DNS, TLS, timeout. Classified from the
    /// error's sources (I/O error kinds first, then their text) with the URL left out,
    /// so a host or path cannot make a refused connection look like a TLS failure.
    fn send_error(&self, e: &reqwest::Error, url: &str) -> ProviderError {
        let label = self.profile.label();
        let mut chain: Vec<String> = Vec::new();
        let mut kinds = Vec::new();
        let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
        while let Some(s) = src {
            if let Some(io) = s.downcast_ref::<std::io::Error>() {
                kinds.push(io.kind());
            }
            chain.push(s.to_string());
            src = s.source();
        }
        let detail = self.redact(&chain.join(": "));
        let lower = detail.to_ascii_lowercase();
        use std::io::ErrorKind as K;
        if e.is_timeout() || kinds.contains(&K::TimedOut) {
            return ProviderError::Timeout(format!("{label}: {url}: timed out: {detail}"));
        }
        if kinds.contains(&K::ConnectionRefused) {
            return ProviderError::Transient {
                message: format!("{label}: connection refused by {url}: is the server running?"),
                retry_after_ms: None,
            };
        }
        if kinds.iter().any(|k| {
            matches!(
                k,
                K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof
            )
        }) {
            return ProviderError::Transient {
                message: format!("{label}: the connection to {url} was reset: {detail}"),
                retry_after_ms: None,
            };
        }
        if lower.contains("dns error") || lower.contains("failed to lookup address") {
            return ProviderError::SourceNotFound(format!(
                "{label}: cannot resolve the host of {url} (DNS): {detail}"
            ));
        }
        let tls_words = [
            "certificate",
            "tls",
            "handshake",
            "corrupt message",
            "alert",
        ];
        if url.starts_with("https://")
            && (kinds.contains(&K::InvalidData) || tls_words.iter().any(|w| lower.contains(w)))
        {
            return ProviderError::Permanent(format!(
                "{label}: TLS failure talking to {url}: {detail}"
            ));
        }
        ProviderError::Transient {
            message: format!("{label}: cannot reach {url}: {detail}"),
            retry_after_ms: None,
        }
    }

    /// A non-2xx response.
    fn status_error(
        &self,
        status: reqwest::StatusCode,
        headers: &HeaderMap,
        body: &str,
        url: &str,
    ) -> ProviderError {
        let label = self.profile.label();
        let said = server_message(body)
            .map(|m| self.redact(&m))
            .unwrap_or_default();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        let status_text = crate::http_status::status_text(status.as_u16());
        let head = format!("{label}: HTTP {status_text} from {url}{said}");
        match status.as_u16() {
            401 | 403 => {
                let key = match (&self.profile.api_key_env, &self.profile.api_key_file) {
                    (Some(env), _) => format!("the key in ${env}"),
                    (None, Some(f)) => format!("the key file {}", f.display()),
                    (None, None) => {
                        "that the profile needs a key (api_key_env or api_key_file)".into()
                    }
                };
                ProviderError::Permanent(format!(
                    "{head} — authentication refused; not retried: check {key}"
                ))
            }
            404 => ProviderError::Permanent(format!(
                "{head} — model {:?} or the endpoint does not exist; not retried (check model and base_url)",
                self.profile.model
            )),
            408 => ProviderError::Timeout(head),
            429 if is_quota(body) => ProviderError::Permanent(format!(
                "{head} — the account's quota or billing limit is exhausted; not retried"
            )),
            429 | 500 | 502 | 503 | 504 | 529 => {
                let after = retry_after(headers);
                if let Some(ms) = after {
                    self.pause_profile(ms);
                }
                ProviderError::Transient {
                    message: head,
                    retry_after_ms: after,
                }
            }
            _ => ProviderError::Permanent(format!("{head}; not retried")),
        }
    }
}

/// Parses the JSON data of stream event number `n` (E002 when it is not JSON).
pub fn event_json(data: &str, n: usize) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        ProviderError::Malformed(format!(
            "invalid JSON in stream event {n}: {e}: {}",
            openai::preview(data)
        ))
    })
}

/// An API error object (`{"type"|"code", "message"}`) mapped to an error.
pub fn api_error(err: &Value, place: &str) -> ProviderError {
    let kind = err
        .get("type")
        .or_else(|| err.get("code"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    let text = format!("provider error in the {place}: {kind}: {message}");
    match kind.as_str() {
        "authentication_error"
        | "permission_error"
        | "invalid_api_key"
        | "not_found_error"
        | "invalid_request_error"
        | "model_not_found"
        | "request_too_large" => ProviderError::Permanent(text),
        "timeout" | "timeout_error" => ProviderError::Timeout(text),
        _ => ProviderError::Transient {
            message: text,
            retry_after_ms: None,
        },
    }
}

/// Whether an error body says the quota is exhausted (a 429 that retrying cannot fix).
fn is_quota(body: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let err = v.get("error").unwrap_or(&v);
    ["type", "code"].iter().any(|k| {
        err.get(k)
            .and_then(Value::as_str)
            .is_some_and(|t| QUOTA_ERRORS.contains(&t))
    })
}

/// Error types meaning the account cannot make calls until someone pays or waits a
/// billing period.
const QUOTA_ERRORS: [&str; 3] = [
    "insufficient_quota",
    "billing_hard_limit_reached",
    "billing_error",
];

/// The `message` of a JSON error body, or the body's first line.
fn server_message(body: &str) -> Option<String> {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let err = v.get("error").unwrap_or(&v);
        if let Some(m) = err.get("message").and_then(Value::as_str) {
            return Some(cut_chars(m, 300).into_owned());
        }
        if let Some(m) = err.as_str() {
            return Some(cut_chars(m, 300).into_owned());
        }
    }
    let line = body.lines().find(|l| !l.trim().is_empty())?;
    Some(cut_chars(line.trim(), 200).into_owned())
}

/// `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, in ms.
fn retry_after(headers: &HeaderMap) -> Option<u64> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(ms.min(3_600_000.0) as u64);
    }
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Some((secs.min(3600.0) * 1000.0) as u64);
        }
        return None;
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let ms = (when.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_milliseconds();
    Some(ms.clamp(0, 3_600_000) as u64)
}

/// An error and its sources, joined.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        src = s.source();
    }
    out
}

impl Provider for HttpProvider {
    fn name(&self) -> String {
        self.profile.label()
    }

    fn admit(&self) -> AdmitFuture<'_> {
        Box::pin(async move {
            self.admit_call()
                .await
                .map(|p| Box::new(p) as Box<dyn std::any::Any + Send>)
        })
    }

    fn secret_redactor(&self) -> Option<&TextRedactor> {
        Some(&self.text_redactor).filter(|r| r.is_active())
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.call(&request, attempt, sink)
                .await
                .map(|out| redact_output(&self.text_redactor, out))
                .map_err(|e| self.redact_error(e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_ms_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(2000));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(150));
        let mut h = HeaderMap::new();
        let later = chrono::Utc::now() + chrono::Duration::seconds(30);
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_str(&later.to_rfc2822()).expect("should succeed"),
        );
        let ms = retry_after(&h).expect("should succeed");
        assert!((28_000..=30_000).contains(&ms), "{ms}");
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn api_errors_map_to_codes() {
        let e = api_error(
            &serde_json::json!({"type": "overloaded_error", "message": "busy"}),
            "stream",
        );
        assert!(matches!(e, ProviderError::Transient { .. }));
        let e = api_error(
            &serde_json::json!({"type": "authentication_error", "message": "no"}),
            "stream",
        );
        assert!(matches!(e, ProviderError::Permanent(_)));
    }
}
