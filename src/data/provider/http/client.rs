//! The provider value: one pooled client per profile, its concurrency and rate limits,
//! and the pause a server's Retry-After puts on the whole profile.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderValue;
use tokio::sync::Semaphore;

use super::headers::profile_headers;
use super::redact::{Redactor, TextRedactor};
use super::{anthropic, openai};
use crate::data::provider::profile::{ApiKey, ProfileError, ProviderKind, ProviderProfile};
use crate::data::provider::rate::RateLimiter;

/// An OpenAI-compatible or Anthropic provider.
pub struct HttpProvider {
    pub(super) profile: ProviderProfile,
    pub(super) client: reqwest::Client,
    /// The endpoint's URL, parsed once (`None` when it does not parse: each call then
    /// fails as it would have).
    pub(super) parsed_url: Option<reqwest::Url>,
    pub(super) redactor: Redactor,
    pub(super) text_redactor: TextRedactor,
    pub(super) slots: Arc<Semaphore>,
    pub(super) rate: Option<RateLimiter>,
    /// No call starts before this: set by a 429/503 with Retry-After, so the whole
    /// profile waits, not only the call that was told.
    pub(super) not_before: std::sync::Mutex<Option<tokio::time::Instant>>,
    /// The structured-output dialect answers with a schema are asked in.
    pub(super) structured: super::structured::Chooser,
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
            .connect_timeout(crate::base::ranges::duration_from_secs(
                profile.connect_timeout_s,
            ))
            .pool_idle_timeout(Duration::from_secs(90))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| fail(format!("cannot build the HTTP client: {e}")))?;
        let url = match profile.kind {
            ProviderKind::Anthropic => anthropic::url(&profile),
            _ => openai::url(&profile),
        };
        Ok(HttpProvider {
            parsed_url: reqwest::Url::parse(&url).ok(),
            slots: Arc::new(Semaphore::new(profile.concurrency)),
            rate: RateLimiter::new(profile.rate_limit_rpm, profile.rate_burst),
            redactor: Redactor::new(key.as_ref().map(ApiKey::expose)),
            text_redactor: TextRedactor::new(key.as_ref().map(ApiKey::expose)),
            not_before: std::sync::Mutex::new(None),
            structured: super::structured::Chooser::new(super::structured::chain(
                profile.kind,
                profile.structured_output,
            )),
            profile,
            client,
        })
    }

    pub(super) fn url(&self) -> String {
        match self.profile.kind {
            ProviderKind::Anthropic => anthropic::url(&self.profile),
            _ => openai::url(&self.profile),
        }
    }

    /// Replaces the key wherever it appears in `text` (messages built here, decoded).
    pub(super) fn redact(&self, text: &str) -> String {
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
    pub(super) fn pause_profile(&self, ms: u64) {
        let until = tokio::time::Instant::now() + Duration::from_millis(ms);
        let mut nb = self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        if nb.is_none_or(|t| t < until) {
            *nb = Some(until);
        }
    }

    /// The wait for an answer's first byte: the idle timeout, or the profile's
    /// first-token time when longer (a local model reads a long prompt first).
    pub(super) fn first_byte(&self, idle: Duration) -> Duration {
        match self.profile.first_token_timeout_s {
            Some(s) => idle.max(crate::base::ranges::duration_from_secs(s)),
            None => idle,
        }
    }

    /// The idle timeout of an attempt: ×1.5 per retry (a model that thinks silently
    /// gets longer), at most ×4.
    pub(super) fn idle(&self, attempt: u32) -> Duration {
        let grow = 1.5f64
            .powi(attempt.saturating_sub(1).min(8) as i32)
            .min(4.0);
        crate::base::ranges::duration_from_secs(self.profile.idle_timeout_s * grow)
    }
}
