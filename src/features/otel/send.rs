//! Sending spans to an OTLP/HTTP collector: one request per batch, protobuf or JSON,
//! retried with backoff on 429, 502, 503, 504 and connection errors (a `Retry-After`
//! the collector gives is honoured), never past a deadline when one is set.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;
use tokio::time::Instant;

use super::attrs::s;
use super::settings::{OtlpSettings, Protocol};

/// Spans in one request.
pub const BATCH: usize = 512;
/// Tries of one request (the first and its retries).
pub const TRIES: u32 = 5;
/// Longest wait for one answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait a `Retry-After` may ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Why a batch was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The collector refused it (a status not worth retrying, or retries used up).
    #[error("the collector answered HTTP {status}{detail}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// A short excerpt of its answer.
        detail: String,
    },
    /// No answer (connection refused, reset, timed out) after every try.
    #[error("no answer from the collector: {0}")]
    Unreachable(String),
    /// The deadline passed before it was accepted.
    #[error("the flush deadline passed")]
    Deadline,
    /// It could not be encoded.
    #[error("cannot encode the spans: {0}")]
    Encode(String),
}

/// The request body of `spans`.
pub fn encode(spans: Vec<Span>, protocol: Protocol) -> Result<Vec<u8>, SendError> {
    let req = ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    s("service.name", "plexus"),
                    s("service.version", env!("CARGO_PKG_VERSION")),
                ],
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "plexus".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..InstrumentationScope::default()
                }),
                spans,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    };
    match protocol {
        Protocol::Protobuf => Ok(req.encode_to_vec()),
        Protocol::Json => serde_json::to_vec(&req).map_err(|e| SendError::Encode(e.to_string())),
    }
}

/// A client for one collector.
pub struct Exporter {
    client: reqwest::Client,
    settings: OtlpSettings,
    /// Why the last attempt failed, until one succeeds (what a batch dropped at the
    /// deadline met).
    last_failure: std::sync::Mutex<Option<String>>,
}

impl Exporter {
    /// A client for `settings`.
    pub fn new(settings: OtlpSettings) -> Result<Exporter, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| format!("cannot build the OTLP client: {e}"))?;
        Ok(Exporter {
            client,
            settings,
            last_failure: Default::default(),
        })
    }

    /// The collector's URL.
    pub fn url(&self) -> &str {
        &self.settings.url
    }

    /// Sends `spans` as one request, retrying as the module says, giving up at
    /// `deadline` (when given).
    /// Why the last attempt to send failed, when none succeeded since.
    pub fn last_failure(&self) -> Option<String> {
        self.last_failure.lock().ok().and_then(|f| f.clone())
    }

    fn note(&self, failure: Option<String>) {
        if let Ok(mut f) = self.last_failure.lock() {
            *f = failure;
        }
    }

    pub async fn send(&self, spans: Vec<Span>, deadline: Option<Instant>) -> Result<(), SendError> {
        let body = encode(spans, self.settings.protocol)?;
        let mut backoff = Duration::from_millis(500);
        let mut last = SendError::Unreachable("not tried".into());
        for attempt in 1..=TRIES {
            let timeout = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left.min(REQUEST_TIMEOUT),
                    _ => return Err(SendError::Deadline),
                },
                None => REQUEST_TIMEOUT,
            };
            let mut req = self
                .client
                .post(&self.settings.url)
                .timeout(timeout)
                .header("content-type", self.settings.protocol.content_type())
                .body(body.clone());
            for (k, v) in &self.settings.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            let wait = match req.send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    if resp.status().is_success() {
                        self.note(None);
                        return Ok(());
                    }
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
                    let text = resp.text().await.unwrap_or_default();
                    let excerpt = crate::base::text::cut::cut_chars(text.trim(), 200);
                    let detail = if excerpt.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", crate::base::text::sanitize::sanitize_cow(&excerpt))
                    };
                    last = SendError::Refused { status, detail };
                    self.note(Some(last.to_string()));
                    if !matches!(status, 429 | 502 | 503 | 504) {
                        return Err(last);
                    }
                    retry_after.unwrap_or(backoff)
                }
                Err(e) => {
                    last = SendError::Unreachable(describe(&e));
                    self.note(Some(last.to_string()));
                    backoff
                }
            };
            if attempt == TRIES {
                break;
            }
            if let Some(d) = deadline {
                if Instant::now() + wait >= d {
                    return Err(SendError::Deadline);
                }
            }
            tracing::debug!("otlp: attempt {attempt} failed ({last}); retrying in {wait:?}");
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(Duration::from_secs(8));
        }
        Err(last)
    }
}

/// A transport error in words.
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        // The cause below reqwest's words: a refusal says nothing listens there.
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            if let Some(io) = c.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::ConnectionRefused {
                    return "connection refused: nothing listens at that address".into();
                }
            }
            cause = c.source();
        }
        "cannot connect".into()
    } else {
        e.to_string()
    }
}

/// What the sender did, for the line printed at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The collector.
    pub url: String,
    /// Spans accepted.
    pub sent: u64,
    /// Spans dropped.
    pub dropped: u64,
    /// Spans in failed batches.
    pub failed: u64,
    /// Failed batches.
    pub failed_batches: u64,
    /// The last batch's error, if any failed.
    pub last_error: Option<String>,
    /// Why the spans dropped at the deadline were not taken (the collector's last
    /// failure), when one is known; none: it was only slow.
    pub dropped_because: Option<String>,
}

impl Report {
    /// One line for a person.
    pub fn line(&self) -> String {
        let mut line = format!("otlp: {} spans sent to {}", self.sent, self.url);
        if self.dropped > 0 {
            // Dropped from a full queue: because sends failed (said below), or because
            // the collector took them more slowly than the run made them.
            let why = match &self.dropped_because {
                Some(e) => format!("the collector did not take them: {e}"),
                None => "the collector was slower than the run".into(),
            };
            line.push_str(&format!("; {} dropped ({why})", self.dropped));
        }
        if self.failed_batches > 0 {
            line.push_str(&format!(
                "; {} batch(es) of {} spans failed",
                self.failed_batches, self.failed
            ));
            if let Some(e) = &self.last_error {
                line.push_str(&format!(" ({e})"));
            }
        }
        line
    }
}
