//! One OpenAI-compatible JSON endpoint of a provider profile (`/embeddings`,
//! `/moderations`): a client with the profile's key, headers and connect timeout, a
//! 10-second limit per call, answers capped at the profile's size, and every error
//! naming the URL with the key taken out.

use std::time::Duration;

use serde_json::Value;

use crate::data::provider::http::profile_headers;
use crate::data::provider::http::redact::TextRedactor;
use crate::data::provider::ProviderProfile;

/// Time one call may take.
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

/// A JSON endpoint of a profile.
pub struct JsonEndpoint {
    client: reqwest::Client,
    /// Takes the key out of anything a server or the transport says.
    redactor: TextRedactor,
    url: String,
    max_bytes: usize,
}

impl JsonEndpoint {
    /// `{base}/{path}` with `profile`'s key and headers.
    pub fn new(profile: &ProviderProfile, base: &str, path: &str) -> Result<JsonEndpoint, String> {
        let key = profile.api_key().map_err(|e| e.to_string())?;
        let redactor = TextRedactor::new(key.as_ref().map(|k| k.expose()));
        let headers = profile_headers(profile, key.as_ref(), false)?;
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .user_agent(concat!("plexus/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(crate::base::ranges::duration_from_secs(
                profile.connect_timeout_s,
            ))
            .timeout(ENDPOINT_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(JsonEndpoint {
            client,
            redactor,
            url: format!("{}/{path}", base.trim().trim_end_matches('/')),
            max_bytes: profile.max_response_bytes,
        })
    }

    /// The URL called.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `message` as an error of this endpoint: the URL first, the key taken out.
    pub fn error(&self, message: &str) -> String {
        self.redactor.text(&format!("{}: {message}", self.url))
    }

    /// Posts `body` and reads the JSON answer; an error status, an answer over the
    /// size cap or not JSON is an error that says so.
    pub async fn post(&self, body: &Value) -> Result<Value, String> {
        let mut resp = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| {
                self.error(&if e.is_timeout() {
                    "no answer within 10 s".into()
                } else {
                    e.to_string()
                })
            })?;
        let status = resp.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.error(&e.to_string()))? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > self.max_bytes {
                return Err(self.error(&format!("the answer is over {} bytes", self.max_bytes)));
            }
        }
        if !status.is_success() {
            // The key out first: a cut could fall inside it.
            let whole = self.redactor.text(&String::from_utf8_lossy(&bytes));
            let excerpt = crate::base::text::cut::cut_chars(&whole, 200);
            return Err(self.error(&format!(
                "HTTP {status}: {}",
                crate::base::text::sanitize::sanitize(&excerpt)
            )));
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| self.error(&format!("the answer is not JSON: {e}")))
    }
}
