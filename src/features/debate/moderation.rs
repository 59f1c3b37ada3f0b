//! A moderation endpoint for the content check: an OpenAI-compatible `/moderations`
//! (`POST {base}/moderations` with `{"model", "input": [text]}`; the answer's
//! `results[].flagged` and `categories`), named by a profile's `moderation_model`. The
//! profile's key and headers go with the request.

use serde_json::{json, Value};

use super::json_endpoint::JsonEndpoint;
use crate::data::provider::ProviderProfile;

/// The moderation endpoint of one profile.
pub struct HttpModerator {
    endpoint: JsonEndpoint,
    model: String,
    label: String,
}

impl HttpModerator {
    /// The moderator of `profile`, `None` when it sets no `moderation_model`.
    pub fn for_profile(profile: &ProviderProfile) -> Result<Option<HttpModerator>, String> {
        let Some(model) = profile.moderation_model.clone() else {
            return Ok(None);
        };
        Ok(Some(HttpModerator {
            endpoint: JsonEndpoint::new(profile, &profile.base_url, "moderations")?,
            label: format!("endpoint:{}/{model}", profile.name),
            model,
        }))
    }

    /// `endpoint:PROFILE/MODEL`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The categories `text` is flagged for (empty: it passes), or why the endpoint
    /// could not say.
    pub async fn flagged(&self, text: &str) -> Result<Vec<String>, String> {
        let v = self
            .endpoint
            .post(&json!({ "model": self.model, "input": [text] }))
            .await?;
        parse(&v).map_err(|m| self.endpoint.error(&m))
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
                .map(|(name, _)| crate::base::text::cut::cut_chars(name, 60).into_owned())
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
