//! The judges of an eval's `judge` checks, made from their provider profiles (the
//! eval's provider when a check names none), with the database's answer cache; asked
//! from the scorer's thread, which waits for them (the votes and judges of one output
//! are asked together).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};
use serde_json::Value;

use crate::cli::launch::profile::{price_of, profile_named};
use crate::cli::launch::Globals;
use crate::data::provider::{Provider, ProviderError, ProviderFuture, SimConfig};
use crate::features::eval::judge::call::{judge, AnswerCache, Judge, StoredCache};
use crate::features::eval::judge::request::Judged;
use crate::features::eval::judge::{Judgment, Rubric};
use crate::features::eval::spec::Scoring;

/// One judge check: its rubric, judges and votes.
struct JudgeCheck {
    rubric: Rubric,
    judges: Vec<Judge>,
    votes: u32,
}

/// Every judge check of an eval.
pub struct JudgeSet {
    checks: BTreeMap<String, JudgeCheck>,
    cache: Arc<dyn AnswerCache>,
    rt: tokio::runtime::Handle,
}

/// A judge that only answers from the cache (a rescore makes no model call).
struct CacheOnly(String);

impl Provider for CacheOnly {
    fn name(&self) -> String {
        self.0.clone()
    }

    fn invoke<'a>(
        &'a self,
        _request: Arc<crate::base::protocol::AgentRequest>,
        _attempt: u32,
        _sink: &'a mut dyn crate::data::provider::ChunkSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async {
            Err(ProviderError::Permanent(
                "not in the judges' cache, and a rescore makes no model call".into(),
            ))
        })
    }
}

/// The provider profile run `run_id` ran on (a judge check that names no judge is
/// judged by it); a stored config that does not read is an error, not a guess.
pub fn run_provider(store: &crate::data::store::Store, run_id: &str) -> Result<String> {
    let (_, _, config_json) = store.run_plan(run_id)?;
    serde_json::from_str::<crate::cli::launch::RunConfig>(&config_json)
        .map(|c| c.provider)
        .map_err(|e| {
            eyre!("run {run_id}: its stored config does not read ({e}): its judges are not known")
        })
}

impl JudgeSet {
    /// The judges of `scoring`'s judge checks (`None` when it has none); a check that
    /// names no judge is judged by profile `default_provider`. With `cache_only`, the
    /// judges answer from the cache alone, under the names their profiles give.
    pub fn for_scoring(
        g: &Globals,
        scoring: &Scoring,
        default_provider: &str,
        cache_only: bool,
        retry: &crate::data::provider::retry::RetryPolicy,
    ) -> Result<Option<Arc<JudgeSet>>> {
        let mut checks = BTreeMap::new();
        let mut made: HashMap<String, Judge> = HashMap::new();
        for c in &scoring.checks {
            let Some(parts) = c.judge() else {
                continue;
            };
            let rubric = parts
                .rubric()
                .map_err(|e| eyre!("check {}: its stored rubric does not read: {e}", c.name))?;
            let names: Vec<String> = if parts.judges.is_empty() {
                vec![default_provider.to_string()]
            } else {
                parts.judges.to_vec()
            };
            let mut list = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for n in names {
                if !seen.insert(n.clone()) {
                    return Err(crate::data::exit::InvalidOptions(format!(
                        "check {}: judge `{n}` is listed twice (ask it for more votes instead)",
                        c.name
                    ))
                    .into());
                }
                if let Some(j) = made.get(&n) {
                    list.push(j.clone());
                    continue;
                }
                let profile = profile_named(g, &n)
                    .map_err(|e| eyre!("check {}: judge `{n}`: {e}", c.name))?;
                let sim = SimConfig {
                    chunk_ms: 0,
                    first_chunk_ms: 0,
                    ..SimConfig::default()
                };
                // Cache only: nothing is built (a profile's key is not needed).
                let provider: Arc<dyn Provider> = if cache_only {
                    Arc::new(CacheOnly(profile.label()))
                } else {
                    crate::data::provider::build(&profile, &sim).map_err(|e| eyre!("{e}"))?
                };
                let model = if profile.kind == crate::data::provider::ProviderKind::Simulated {
                    "simulated".to_string()
                } else {
                    format!("{}:{}", profile.kind.as_str(), profile.model)
                };
                let j = Judge {
                    name: provider.name(),
                    model,
                    provider,
                    price: price_of(g, &profile)?,
                    retry: retry.clone(),
                };
                made.insert(n, j.clone());
                list.push(j);
            }
            checks.insert(
                c.name.clone(),
                JudgeCheck {
                    rubric,
                    judges: list,
                    votes: parts.votes,
                },
            );
        }
        if checks.is_empty() {
            return Ok(None);
        }
        Ok(Some(Arc::new(JudgeSet {
            checks,
            cache: Arc::new(StoredCache::open(&g.db)?),
            rt: tokio::runtime::Handle::current(),
        })))
    }

    /// The judgment of every judge check on `output` of sample `sample_id`. Called
    /// from a thread outside the runtime (it waits for the answers).
    pub fn judge(
        &self,
        sample_id: &str,
        input: &Value,
        expected: Option<&Value>,
        output: &str,
    ) -> BTreeMap<String, Judgment> {
        let what = Judged {
            sample_id: sample_id.to_string(),
            input: input.clone(),
            expected: expected.cloned().unwrap_or(Value::Null),
            output: output.to_string(),
        };
        let cache = self.cache.as_ref();
        self.rt.block_on(async {
            let mut out = BTreeMap::new();
            for (name, c) in &self.checks {
                let j = judge(&c.judges, &c.rubric, c.votes, name, &what, cache).await;
                out.insert(name.clone(), j);
            }
            out
        })
    }
}
