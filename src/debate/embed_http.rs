//! Embeddings from an OpenAI-compatible `/embeddings` endpoint: `POST {base}/embeddings`
//! with `{"model", "input": [texts]}`, the vectors read from `data[].embedding` in
//! `index` order. The profile's key and headers go with the request.

use std::time::Duration;

use serde_json::{json, Value};

use super::similarity::{EmbedError, EmbedFuture, Embedder};
use crate::provider::http::profile_headers;
use crate::provider::http::redact::TextRedactor;
use crate::provider::ProviderProfile;

/// Time an embeddings call may take.
pub const EMBED_TIMEOUT: Duration = Duration::from_secs(10);

/// The endpoint of one profile.
pub struct HttpEmbedder {
    client: reqwest::Client,
    /// Takes the key out of anything a server or the transport says.
    redactor: TextRedactor,
    url: String,
    model: String,
    label: String,
    max_bytes: usize,
}

impl HttpEmbedder {
    /// The embedder of `profile`, `None` when it sets no `embedding_model`.
    pub fn for_profile(profile: &ProviderProfile) -> Result<Option<HttpEmbedder>, String> {
        let Some(model) = profile.embedding_model.clone() else {
            return Ok(None);
        };
        let base = profile
            .embedding_base_url
            .clone()
            .unwrap_or_else(|| profile.base_url.clone());
        let key = profile.api_key().map_err(|e| e.to_string())?;
        let redactor = TextRedactor::new(key.as_ref().map(|k| k.expose()));
        let headers = profile_headers(profile, key.as_ref(), false)?;
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .user_agent(concat!("plexus/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(crate::ranges::duration_from_secs(profile.connect_timeout_s))
            .timeout(EMBED_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Some(HttpEmbedder {
            client,
            redactor,
            url: format!("{}/embeddings", base.trim().trim_end_matches('/')),
            label: format!("endpoint:{}/{model}", profile.name),
            model,
            max_bytes: profile.max_response_bytes,
        }))
    }

    /// The URL called.
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn call(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |m: String| EmbedError(self.redactor.text(&format!("{}: {m}", self.url)));
        let mut resp = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json!({ "model": self.model, "input": texts }).to_string())
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
            // The key out first: a cut could fall inside it.
            let whole = self.redactor.text(&String::from_utf8_lossy(&body));
            let excerpt = crate::text::cut::cut_chars(&whole, 200);
            return Err(fail(format!(
                "HTTP {status}: {}",
                crate::text::sanitize::sanitize(&excerpt)
            )));
        }
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| fail(format!("the answer is not JSON: {e}")))?;
        parse(&v, texts.len()).map_err(fail)
    }
}

/// The vectors of an embeddings answer, in `index` order; `n` were asked for.
pub fn parse(v: &Value, n: usize) -> Result<Vec<Vec<f32>>, String> {
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the answer has no `data` array")?;
    if data.len() != n {
        return Err(format!("asked for {n} embeddings, got {}", data.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (k, item) in data.iter().enumerate() {
        let i = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(k, |i| i as usize);
        let slot = out
            .get_mut(i)
            .ok_or_else(|| format!("data[{k}].index {i} is out of range"))?;
        let vec = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("data[{k}].embedding is not an array"))?
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| format!("data[{k}].embedding has a value that is not a number"))?;
        if vec.is_empty() || vec.iter().any(|x| !x.is_finite()) {
            return Err(format!("data[{k}].embedding is empty or not finite"));
        }
        *slot = Some(vec);
    }
    let out: Vec<Vec<f32>> = out
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| format!("no embedding for index {i}")))
        .collect::<Result<_, _>>()?;
    if out.windows(2).any(|w| w[0].len() != w[1].len()) {
        return Err("the embeddings have different lengths".into());
    }
    Ok(out)
}

impl Embedder for HttpEmbedder {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(self.call(texts))
    }
}
