//! Asking the judges: every judge `votes` times, concurrently, each answer from the
//! cache when the same question was answered before (the rubric, the judge's model,
//! the vote and what is judged make the key), else from a call at temperature 0 whose
//! tokens and cost are counted for the judge alone.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::answer::read_answer;
use super::request::{judge_request, Judged};
use super::{combine, Judgment, Rubric};
use crate::base::cost::{CallTokens, Price};
use crate::data::provider::{ChunkSink, Provider};

/// Longest a judge's answer may take unless its profile says otherwise (`timeout_s`).
const JUDGE_TIMEOUT: Duration = Duration::from_secs(120);

/// One judge: a provider (its name says its model) and its model's price.
#[derive(Clone)]
pub struct Judge {
    /// The provider's name (`openai:gpt-4o@work`, `simulated`, …).
    pub name: String,
    /// Its model, as the cache knows it (`openai:gpt-4o`, `simulated`): a profile
    /// renamed keeps its answers.
    pub model: String,
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// Its model's price, when the config has one.
    pub price: Option<Price>,
    /// How its transient failures are retried (the eval's retry policy).
    pub retry: crate::data::provider::retry::RetryPolicy,
}

/// Where answers are kept between evals.
pub trait AnswerCache: Send + Sync {
    /// The answer kept under `key`.
    fn get(&self, key: &str) -> Option<String>;
    /// Keeps `answer` under `key`.
    fn put(&self, key: &str, judge: &str, answer: &str);
}

/// The cache in the database's `judge_cache` table, through a connection of its own.
pub struct StoredCache {
    conn: Mutex<Connection>,
}

impl StoredCache {
    /// The cache of database `db`.
    pub fn open(db: &std::path::Path) -> Result<StoredCache, crate::data::store::StoreError> {
        Ok(StoredCache {
            conn: Mutex::new(crate::data::store::open_connection(db)?),
        })
    }
}

impl AnswerCache for StoredCache {
    fn get(&self, key: &str) -> Option<String> {
        let conn = self.conn.lock().ok()?;
        conn.query_row(
            "SELECT answer FROM judge_cache WHERE key = ?1",
            [key],
            |r| r.get(0),
        )
        .optional()
        .ok()
        .flatten()
    }

    fn put(&self, key: &str, judge: &str, answer: &str) {
        if let Ok(conn) = self.conn.lock() {
            // A cache: a write that fails (a busy file) only costs a call next time.
            let _ = conn.execute(
                "INSERT OR REPLACE INTO judge_cache (key, judge, answer, created_at)
                 VALUES (?1, ?2, ?3, ?4)",
                params![key, judge, answer, crate::base::clock::now_rfc3339()],
            );
        }
    }
}

/// The cache key of vote `vote` of a judge of model `judge` on `what` under `rubric`.
pub fn cache_key(rubric: &Rubric, judge: &str, vote: u32, what: &Judged) -> String {
    let v = serde_json::json!([rubric, judge, vote, what.input, what.expected, what.output]);
    let digest = Sha256::digest(v.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

struct Collect(String);

impl ChunkSink for Collect {
    fn chunk(&mut self, text: &str) {
        self.0.push_str(text);
    }
}

/// One answer: its text (or why there is none), tokens and cost of its call, and
/// whether it came from the cache.
struct Answer {
    text: Result<String, String>,
    tokens: u64,
    cost: Option<f64>,
    cached: bool,
}

async fn ask(
    judge: &Judge,
    rubric: &Rubric,
    what: &Judged,
    check: &str,
    vote: u32,
    cache: &dyn AnswerCache,
) -> Answer {
    let key = cache_key(rubric, &judge.model, vote, what);
    if let Some(text) = cache.get(&key) {
        return Answer {
            text: Ok(text),
            tokens: 0,
            cost: Some(0.0),
            cached: true,
        };
    }
    let req = Arc::new(judge_request(rubric, what, check, vote));
    let prompt_chars =
        req.system_prompt.clone() + &serde_json::to_string(&req.user_prompt).unwrap_or_default();
    let mut sink = Collect(String::new());
    let provider = judge.provider.as_ref();
    let limits = crate::data::provider::call::Limits::for_call(
        provider,
        crate::data::provider::call::timeout_of(provider, JUDGE_TIMEOUT),
        req.constraints.max_tokens,
    );
    let (outcome, _) =
        crate::data::provider::call::call(provider, req, &mut sink, &limits, &judge.retry).await;
    let failed = |why: String| Answer {
        text: Err(format!("{}: vote {}: {why}", judge.name, vote + 1)),
        tokens: 0,
        cost: judge.price.map(|_| 0.0),
        cached: false,
    };
    let out = match outcome {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return failed(e.to_string()),
        Err(stopped) => return failed(crate::data::provider::call::said(&stopped)),
    };
    // The provider's count, or ours when it gives none.
    let tokens = match &out.usage {
        Some(u) => CallTokens {
            input: u.prompt_tokens,
            cached_input: u.cached_prompt_tokens,
            output: u.completion_tokens,
        },
        None => {
            let counter = crate::base::tokens::TokenCounter::default();
            CallTokens {
                input: counter.count(&prompt_chars),
                cached_input: 0,
                output: counter.count(&sink.0),
            }
        }
    };
    Answer {
        cost: judge.price.map(|p| p.cost(tokens)),
        tokens: tokens.input + tokens.output,
        text: Ok(sink.0),
        cached: false,
    }
}

/// The judgment of `what` by `judges` (each `votes` times) under `rubric`, for check
/// `check`.
pub async fn judge(
    judges: &[Judge],
    rubric: &Rubric,
    votes: u32,
    check: &str,
    what: &Judged,
    cache: &dyn AnswerCache,
) -> Judgment {
    let known: Vec<&str> = rubric.criteria.iter().map(|c| c.name.as_str()).collect();
    let asks = judges
        .iter()
        .flat_map(|j| (0..votes.max(1)).map(move |v| (j, v)))
        .map(|(j, v)| async move { (j, v, ask(j, rubric, what, check, v, cache).await) });
    let answers = futures_util::future::join_all(asks).await;
    let mut readings = Vec::new();
    let mut j = Judgment::default();
    let mut cost = Some(0.0);
    for (judge, vote, a) in answers {
        j.asked += 1;
        j.cached += u32::from(a.cached);
        j.tokens += a.tokens;
        cost = match (cost, a.cost) {
            (Some(x), Some(y)) => Some(x + y),
            _ => None,
        };
        match a.text {
            Ok(text) => {
                let read = read_answer(&text, &known);
                let whole = read.len() == known.len();
                if read.is_empty() {
                    j.errors.push(format!(
                        "{}: vote {}: the answer does not read as a judgment: {}",
                        judge.name,
                        vote + 1,
                        crate::base::text::wrap::middle_cut(text.trim(), 120)
                    ));
                } else {
                    // Only an answer that judges every criterion is kept: a partial one
                    // is asked again next time rather than left partial for good.
                    if !a.cached && whole {
                        cache.put(
                            &cache_key(rubric, &judge.model, vote, what),
                            &judge.name,
                            &text,
                        );
                    }
                    readings.push(read);
                }
            }
            Err(why) => j.errors.push(why),
        }
    }
    let c = combine(rubric, &readings);
    Judgment {
        judges: judges.iter().map(|j| j.name.clone()).collect(),
        votes: votes.max(1),
        asked: j.asked,
        cached: j.cached,
        tokens: j.tokens,
        cost_usd: cost,
        errors: j.errors,
        ..c
    }
}
