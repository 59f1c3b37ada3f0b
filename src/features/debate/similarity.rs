//! `compare_positions`: an embedding of each position, their pairwise cosine similarity,
//! the mean and the least similar pair. Embeddings are cached by text, so a round only
//! embeds the outputs that are new.
//!
//! The built-in embedding ([`crate::base::text::embed`]) needs no network.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::base::protocol::debate::{ComparePositionsData, PositionSummary};
pub use crate::base::text::embed::{builtin_embedding, EMBEDDING_DIMS};
use crate::base::text::embed::{feature_hash, features, normalise};

/// One embedding, normalised to length 1 (or all zeros for a text without words).
pub type Embedding = Arc<[f32]>;

/// Why embeddings could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// A boxed future of embeddings.
pub type EmbedFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Vec<f32>>, EmbedError>> + Send + 'a>>;

/// Turns texts into embeddings.
pub trait Embedder: Send + Sync {
    /// Name shown in events (`builtin`, `endpoint:PROFILE/MODEL`).
    fn name(&self) -> String;
    /// One embedding per text, in order.
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a>;
}

/// The built-in embedding (no network).
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinEmbedder;

impl Embedder for BuiltinEmbedder {
    fn name(&self) -> String {
        "builtin".into()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let out = texts.iter().map(|t| builtin_embedding(t)).collect();
        Box::pin(std::future::ready(Ok(out)))
    }
}

/// Cosine similarity of two embeddings, clamped to [0, 1] and rounded to 4 places
/// (opposite directions count as unrelated).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    round4(f64::from(dot / (na * nb)).clamp(0.0, 1.0))
}

/// Rounds to 4 decimal places (what events and the screen keep).
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The text of a position that is compared: its conclusion and key reasons.
pub fn position_text(p: &PositionSummary) -> String {
    let mut s = p.conclusion.trim().to_string();
    for r in &p.key_reasons {
        s.push('\n');
        s.push_str(r.trim());
    }
    s
}

/// The matrix, mean and least similar pair of a set of pairwise similarities.
pub fn summarise(matrix: Vec<Vec<f64>>, embeddings: Vec<Vec<f64>>) -> ComparePositionsData {
    let (mut sum, mut pairs) = (0.0, 0usize);
    let mut worst = ([0usize, 0usize], 1.0f64);
    for (i, row) in matrix.iter().enumerate() {
        for (j, &s) in row.iter().enumerate().skip(i + 1) {
            sum += s;
            pairs += 1;
            if s < worst.1 || pairs == 1 {
                worst = ([i, j], s);
            }
        }
    }
    let mean = if pairs == 0 {
        1.0
    } else {
        round4(sum / pairs as f64)
    };
    ComparePositionsData {
        embeddings,
        similarity_matrix: matrix,
        mean_similarity: mean,
        most_different_pair: worst.0,
        most_different_similarity: if pairs == 0 { 1.0 } else { worst.1 },
        extra: Default::default(),
    }
}

/// Keyword similarity, the fallback when embeddings fail: the Jaccard overlap of the
/// texts' features (words, Chinese characters and pairs). No embeddings are returned.
pub fn keyword_similarity(texts: &[String]) -> ComparePositionsData {
    let sets: Vec<std::collections::HashSet<u64>> = texts
        .iter()
        .map(|t| {
            let mut s = std::collections::HashSet::new();
            features(t, |salt, bytes| {
                s.insert(feature_hash(salt, bytes));
            });
            s
        })
        .collect();
    let n = sets.len();
    let mut matrix = vec![vec![1.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let inter = sets[i].intersection(&sets[j]).count();
            let union = sets[i].union(&sets[j]).count();
            let s = if union == 0 {
                0.0
            } else {
                round4(inter as f64 / union as f64)
            };
            matrix[i][j] = s;
            matrix[j][i] = s;
        }
    }
    summarise(matrix, Vec::new())
}

/// The result of one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The `compare_positions` data (embeddings included).
    pub data: ComparePositionsData,
    /// Texts embedded by this call.
    pub embedded: usize,
    /// Texts found in the cache.
    pub cached: usize,
}

/// `compare_positions` over an embedder, with a cache of embeddings by text.
pub struct PositionComparer {
    embedder: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Embedding, rustc_hash::FxBuildHasher>>,
}

impl PositionComparer {
    /// A comparer with an empty cache.
    pub fn new(embedder: Arc<dyn Embedder>) -> PositionComparer {
        PositionComparer {
            embedder,
            cache: Mutex::new(HashMap::default()),
        }
    }

    /// A comparer on the built-in embedding.
    pub fn builtin() -> PositionComparer {
        PositionComparer::new(Arc::new(BuiltinEmbedder))
    }

    /// The embedder's name.
    pub fn embedder_name(&self) -> String {
        self.embedder.name()
    }

    /// The embeddings of `texts`, embedding only those not cached yet.
    pub async fn embeddings(
        &self,
        texts: &[String],
    ) -> Result<(Vec<Embedding>, usize), EmbedError> {
        let missing: Vec<String> = {
            let cache = self
                .cache
                .lock()
                .map_err(|_| EmbedError("cache poisoned".into()))?;
            let mut m: Vec<String> = Vec::new();
            for t in texts {
                if !cache.contains_key(t) && !m.contains(t) {
                    m.push(t.clone());
                }
            }
            m
        };
        if !missing.is_empty() {
            let fresh = self.embedder.embed(&missing).await?;
            if fresh.len() != missing.len() {
                return Err(EmbedError(format!(
                    "asked for {} embeddings, got {}",
                    missing.len(),
                    fresh.len()
                )));
            }
            let mut cache = self
                .cache
                .lock()
                .map_err(|_| EmbedError("cache poisoned".into()))?;
            for (t, mut v) in missing.iter().zip(fresh) {
                normalise(&mut v);
                cache.insert(t.clone(), v.into());
            }
        }
        let cache = self
            .cache
            .lock()
            .map_err(|_| EmbedError("cache poisoned".into()))?;
        let out = texts
            .iter()
            .map(|t| {
                cache
                    .get(t)
                    .cloned()
                    .ok_or_else(|| EmbedError("embedding missing".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((out, missing.len()))
    }

    /// Compares `texts`: matrix, mean, least similar pair, embeddings.
    pub async fn compare(&self, texts: &[String]) -> Result<Comparison, EmbedError> {
        let (embs, embedded) = self.embeddings(texts).await?;
        let n = embs.len();
        let mut matrix = vec![vec![1.0; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                let s = cosine(&embs[i], &embs[j]);
                matrix[i][j] = s;
                matrix[j][i] = s;
            }
        }
        let embeddings = embs
            .iter()
            .map(|e| e.iter().map(|&x| f64::from(x)).collect())
            .collect();
        Ok(Comparison {
            data: summarise(matrix, embeddings),
            embedded,
            cached: texts.len() - embedded.min(texts.len()),
        })
    }

    /// Similarity of two texts (an agent's position against its previous one).
    pub async fn similarity(&self, a: &str, b: &str) -> Result<f64, EmbedError> {
        let (e, _) = self.embeddings(&[a.to_string(), b.to_string()]).await?;
        Ok(cosine(&e[0], &e[1]))
    }
}
