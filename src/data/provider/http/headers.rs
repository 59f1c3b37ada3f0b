//! The headers every call of a profile carries, the key among them.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::data::provider::profile::{ApiKey, ProviderProfile};

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
