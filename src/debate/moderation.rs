//! A moderation endpoint for the content check: an OpenAI-compatible `/moderations`
//! (`POST {base}/moderations` with `{"model", "input": [text]}`; the answer's
//! `results[].flagged` and `categories`), named by a profile's `moderation_model`. The
//! profile's key and headers go with the request.

use std::time::Duration;

use serde_json::{json, Value};

use crate::provider::http::profile_headers;
use crate::provider::http::redact::TextRedactor;
use crate::provider::ProviderProfile;

/// Time a moderation call may take.
pub const MODERATION_TIMEOUT: Duration = Duration::from_secs(10);

/// The moderation endpoint of one profile.
pub struct HttpModerator {
    client: reqwest::Client,
    /// Takes the key out of anything a server or the transport says.
    redactor: TextRedactor,
    url: String,
    model: String,
    label: String,
    max_bytes: usize,
}

impl HttpModerator {
    /// The moderator of `profile`, `None` when it sets no `moderation_model`.
    pub fn for_profile(profile: &ProviderProfile) -> Result<Option<HttpModerator>, String> {
        let Some(model) = profile.moderation_model.clone() else {
            return Ok(None);
        };
        let key = profile.api_key().map_err(|e| e.to_string())?;
        let redactor = TextRedactor::new(key.as_ref().map(|k| k.expose()));
        let headers = profile_headers(profile, key.as_ref(), false)?;
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .user_agent(concat!("plexus/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(crate::ranges::duration_from_secs(profile.connect_timeout_s))
            .timeout(MODERATION_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Some(HttpModerator {
            client,
            redactor,
            url: format!(
                "{}/moderations",
                profile.base_url.trim().trim_end_matches('/')
            ),
            label: format!("endpoint:{}/{model}", profile.name),
            model,
            max_bytes: profile.max_response_bytes,
        }))
    }

    /// `endpoint:PROFILE/MODEL`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The categories `text` is flagged for (empty: it passes), or why the endpoint
    /// could not say.
    pub async fn flagged(&self, text: &str) -> Result<Vec<String>, String> {
        let fail = |m: String| self.redactor.text(&format!("{}: {m}", self.url));
        let mut resp = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json!({ "model": self.model, "input": [text] }).to_string())
            .send()
            .await
            .map_err(|e| {
                fail(if e.is_timeout() {
                    "no answer within 10 s".into()
                } else {
                    e.to_string()
                })
            })?;
        let status = resp.status();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| fail(e.to_string()))? {
            body.extend_from_slice(&chunk);
            if body.len() > self.max_bytes {
                return Err(fail(format!("the answer is over {} bytes", self.max_bytes)));
            }
        }
        if !status.is_success() {
            let whole = self.redactor.text(&String::from_utf8_lossy(&body));
            let excerpt = crate::text::cut::cut_chars(&whole, 200);
            return Err(fail(format!(
                "HTTP {status}: {}",
                crate::text::sanitize::sanitize(&excerpt)
            )));
        }
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| fail(format!("the answer is not JSON: {e}")))?;
        parse(&v).map_err(fail)
    }
}

/// The flagged categories of a moderation answer (`results[0]`); a flagged result
/// without a category named is `flagged`.
pub fn parse(v: &Value) -> Result<Vec<String>, String> {
    let first = v
        .get("results")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .ok_or("the answer has no `results`")?;
    let flagged = first
        .get("flagged")
        .and_then(Value::as_bool)
        .ok_or("results[0].flagged is not a boolean")?;
    if !flagged {
        return Ok(Vec::new());
    }
    let mut categories: Vec<String> = first
        .get("categories")
        .and_then(Value::as_object)
        .map(|c| {
            c.iter()
                .filter(|(_, on)| on.as_bool() == Some(true))
                .map(|(name, _)| crate::text::cut::cut_chars(name, 60).into_owned())
                .take(8)
                .collect()
        })
        .unwrap_or_default();
    if categories.is_empty() {
        categories.push("flagged".into());
    }
    Ok(categories)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_flagged_categories_or_a_reason() {
        let ok = json!({"results": [{"flagged": false, "categories": {"hate": false}}]});
        assert_eq!(parse(&ok), Ok(vec![]));
        let bad = json!({"results": [{"flagged": true, "categories": {"hate": false, "violence": true}}]});
        assert_eq!(parse(&bad), Ok(vec!["violence".to_string()]));
        let bare = json!({"results": [{"flagged": true}]});
        assert_eq!(parse(&bare), Ok(vec!["flagged".to_string()]));
        assert!(parse(&json!({"data": []})).is_err());
        assert!(parse(&json!({"results": [{"flagged": "yes"}]})).is_err());
    }
}
