//! One call: the request sent, then the answer read whole or as a stream, within the
//! idle timeout and the size cap, its text passed on as it arrives.

use std::borrow::Cow;
use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use reqwest::header::{HeaderValue, CONTENT_TYPE};
use serde_json::Value;

use super::client::HttpProvider;
use super::emit::Emit;
use super::structured::{self, Dialect};
use super::{anthropic, openai, sse};
use crate::base::protocol::invocation::render_user_prompt;
use crate::base::protocol::AgentRequest;
use crate::data::provider::profile::ProviderKind;
use crate::data::provider::{ChunkSink, ProviderError, ProviderOutput};

/// Most bytes of an error body kept for the message.
const ERROR_BODY_CAP: usize = 16 * 1024;

impl HttpProvider {
    pub(super) async fn call(
        &self,
        request: &AgentRequest,
        attempt: u32,
        sink: &mut dyn ChunkSink,
    ) -> Result<ProviderOutput, ProviderError> {
        let idle = self.idle(attempt);
        let rendered = render_user_prompt(&request.user_prompt);
        let user_text = rendered.as_deref().map(|r| r.get()).unwrap_or_default();
        // A refused dialect gets the next one, once each (see `structured`).
        loop {
            let dialect = self.dialect_for(request);
            match self.send(request, user_text, dialect, idle, sink).await {
                Err(Refused::Dialect(d, why)) => {
                    self.structured.refused(d, &why);
                }
                Err(Refused::Error(e)) => return Err(e),
                Ok(mut out) => {
                    out.structured_output = dialect.map(|d| d.as_str().to_string());
                    return Ok(out);
                }
            }
        }
    }

    /// The dialect `request`'s schema is asked in: none without a schema, and none for a
    /// tool-using step when the dialect would leave the model no room for a tool call.
    fn dialect_for(&self, request: &AgentRequest) -> Option<Dialect> {
        request.response_schema.as_ref()?;
        let d = self.structured.current()?;
        let tools = request.react().is_some_and(|r| !r.tools.is_empty());
        (!tools || d.leaves_tools()).then_some(d)
    }

    /// Sends the request once in `dialect` and reads the answer.
    async fn send(
        &self,
        request: &AgentRequest,
        user_text: &str,
        dialect: Option<Dialect>,
        idle: Duration,
        sink: &mut dyn ChunkSink,
    ) -> Result<ProviderOutput, Refused> {
        let mut body = match self.profile.kind {
            ProviderKind::Anthropic => anthropic::body(request, user_text, &self.profile),
            _ => openai::body(request, user_text, &self.profile),
        };
        if let (Some(d), Some(schema)) = (dialect, request.response_schema.as_deref()) {
            match self.profile.kind {
                ProviderKind::Anthropic => structured::apply_anthropic(&mut body, schema),
                _ => structured::apply_openai(&mut body, d, schema),
            }
        }
        let url = self.url();
        let body = serde_json::to_vec(&body)
            .map_err(|e| ProviderError::Permanent(format!("cannot encode the request: {e}")))?;
        let builder = match &self.parsed_url {
            Some(parsed) => self.client.post(parsed.clone()),
            None => self.client.post(&url),
        };
        let mut builder = builder.header(CONTENT_TYPE, "application/json").body(body);
        for (name, value) in [
            ("x-plexus-invocation", &request.invocation_id),
            ("x-plexus-task", &request.task_id),
            ("x-plexus-agent", &request.agent),
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
            if let Some(d) = dialect.filter(|d| structured::refuses(status.as_u16(), &text, *d)) {
                let redacted = self.redact(text.trim());
                let said = crate::base::text::cut::cut_chars(&redacted, 200);
                return Err(Refused::Dialect(
                    d,
                    format!("HTTP {}: {said}", status.as_u16()),
                ));
            }
            return Err(self.status_error(status, &headers, &text, &url).into());
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
        Ok(read.map(|()| out)?)
    }

    pub(super) async fn read_whole(
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

    /// Reads a whole body (redacted) within the idle timeout; past `cap` it fails (E008)
    /// unless `truncate`, which keeps the first `cap` bytes.
    pub(super) async fn read_capped(
        &self,
        response: reqwest::Response,
        cap: usize,
        truncate: bool,
        idle: Duration,
    ) -> Result<Vec<u8>, ProviderError> {
        let mut stream = response.bytes_stream();
        let mut redactor = self.redactor.clone();
        let mut body = Vec::new();
        let stall = tokio::time::sleep(idle);
        tokio::pin!(stall);
        loop {
            let wait = if body.is_empty() {
                self.first_byte(idle)
            } else {
                idle
            };
            let Some(next) = next_within(&mut stream, stall.as_mut(), wait).await else {
                return Err(self.stalled(body.len(), wait));
            };
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

    pub(super) async fn read_stream(
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
        let stall = tokio::time::sleep(idle);
        tokio::pin!(stall);
        while !ended {
            // Before the first byte a model may still be reading its prompt.
            let wait = if received == 0 {
                self.first_byte(idle)
            } else {
                idle
            };
            let Some(next) = next_within(&mut stream, stall.as_mut(), wait).await else {
                return Err(self.stalled(received, wait));
            };
            let read;
            let bytes = match next {
                None => {
                    ended = true;
                    Cow::Owned(redactor.finish())
                }
                Some(Err(e)) => return Err(self.cut(&e, received)),
                Some(Ok(b)) => {
                    received += b.len();
                    if received > self.profile.max_response_bytes {
                        return Err(self.oversized(received));
                    }
                    emit.progress();
                    read = b;
                    redactor.push(&read)
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
}

/// Why one send did not give an answer: the server refused the structured-output
/// dialect (the next is tried), or any other error.
enum Refused {
    Dialect(Dialect, String),
    Error(ProviderError),
}

impl From<ProviderError> for Refused {
    fn from(e: ProviderError) -> Refused {
        Refused::Error(e)
    }
}

/// The next piece of a body, or `None` when none came within `idle`. One timer serves a
/// whole body: it is pushed back before each wait (cheaper than a timer per read, and the
/// same deadline: `idle` from when the wait starts).
async fn next_within<S: Stream + Unpin>(
    stream: &mut S,
    mut stall: Pin<&mut tokio::time::Sleep>,
    idle: Duration,
) -> Option<Option<S::Item>> {
    stall.as_mut().reset(tokio::time::Instant::now() + idle);
    tokio::select! {
        biased;
        next = stream.next() => Some(next),
        () = stall => None,
    }
}
