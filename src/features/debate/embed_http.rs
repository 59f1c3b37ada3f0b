//! Embeddings from an OpenAI-compatible `/embeddings` endpoint: `POST {base}/embeddings`
//! with `{"model", "input": [texts]}`, the vectors read from `data[].embedding` in
//! `index` order. The profile's key and headers go with the request.

use serde_json::{json, Value};

use super::json_endpoint::JsonEndpoint;
use super::similarity::{EmbedError, EmbedFuture, Embedder};
use crate::data::provider::ProviderProfile;

/// The endpoint of one profile.
pub struct HttpEmbedder {
    endpoint: JsonEndpoint,
    model: String,
    label: String,
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
        Ok(Some(HttpEmbedder {
            endpoint: JsonEndpoint::new(profile, &base, "embeddings")?,
            label: format!("endpoint:{}/{model}", profile.name),
            model,
        }))
    }

    /// The URL called.
    pub fn url(&self) -> &str {
        self.endpoint.url()
    }

    async fn call(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let v = self
            .endpoint
            .post(&json!({ "model": self.model, "input": texts }))
            .await
            .map_err(EmbedError)?;
        parse(&v, texts.len()).map_err(|m| EmbedError(self.endpoint.error(&m)))
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
