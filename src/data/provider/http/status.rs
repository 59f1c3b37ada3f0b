//! Faults mapped to errors: a failed send, a non-2xx status (with Retry-After and
//! quota bodies), a stalled, cut or oversized stream; the key kept out of every message.

use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde_json::Value;

use super::client::HttpProvider;
use crate::base::text::cut::cut_chars;
use crate::data::provider::ProviderError;

impl HttpProvider {
    pub(super) fn stalled(&self, received: usize, idle: Duration) -> ProviderError {
        ProviderError::Timeout(format!(
            "{}: no data for {:.1}s (idle timeout) after {received} bytes",
            self.profile.label(),
            idle.as_secs_f64()
        ))
    }

    pub(super) fn oversized(&self, received: usize) -> ProviderError {
        ProviderError::Permanent(format!(
            "{}: the answer passed max_response_bytes ({} bytes; {received} received)",
            self.profile.label(),
            self.profile.max_response_bytes
        ))
    }

    pub(super) fn cut(&self, e: &reqwest::Error, received: usize) -> ProviderError {
        ProviderError::Transient {
            message: format!(
                "{}: the stream was cut after {received} bytes: {}",
                self.profile.label(),
                self.redact(&error_chain(e))
            ),
            retry_after_ms: None,
        }
    }

    pub(super) fn redact_error(&self, e: ProviderError) -> ProviderError {
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
    pub(super) fn send_error(&self, e: &reqwest::Error, url: &str) -> ProviderError {
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
    pub(super) fn status_error(
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
        let status_text = crate::base::http_status::status_text(status.as_u16());
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

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

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
}
