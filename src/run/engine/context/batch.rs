//! Batching (seed 000 §6.2): data too large for one invocation is split into batches of
//! `batch_size_tokens` with `overlap_tokens` repeated between neighbours, at most
//! `max_batches`; the batches' results are aggregated by merge, vote, latest or weighted.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use crate::base::protocol::context::BatchConfig;

/// The seed's default batch configuration.
pub fn default_config() -> BatchConfig {
    BatchConfig {
        enabled: true,
        batch_size_tokens: 30_000,
        overlap_tokens: 500,
        max_batches: 10,
        aggregation_strategy: "merge".into(),
        batch_priority: "chronological".into(),
    }
}

/// How items were split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Item ranges, one per batch (neighbours may overlap).
    pub batches: Vec<Range<usize>>,
    /// Items left out because `max_batches` was reached.
    pub dropped: usize,
}

/// Splits items of the given token sizes into batches. An item larger than a batch gets
/// a batch of its own. Each batch after the first starts with the previous batch's last
/// items worth at least `overlap_tokens` (when they are not the whole previous batch).
pub fn split(sizes: &[u64], cfg: &BatchConfig) -> Split {
    let cap = cfg.batch_size_tokens.max(1);
    let max = cfg.max_batches.max(1) as usize;
    let mut batches: Vec<Range<usize>> = Vec::new();
    let mut start = 0usize;
    while start < sizes.len() && batches.len() < max {
        let mut end = start;
        let mut used = 0u64;
        while end < sizes.len() && (end == start || used + sizes[end] <= cap) {
            used += sizes[end];
            end += 1;
        }
        batches.push(start..end);
        if end >= sizes.len() {
            break;
        }
        // Overlap: step back over the last items worth `overlap_tokens`.
        let mut back = end;
        let mut ov = 0u64;
        while back > start + 1 && ov < cfg.overlap_tokens {
            back -= 1;
            ov += sizes[back];
        }
        start = if ov >= cfg.overlap_tokens && back > start {
            back
        } else {
            end
        };
    }
    Split {
        dropped: sizes
            .len()
            .saturating_sub(batches.last().map_or(0, |b| b.end)),
        batches,
    }
}

/// Aggregates the atoms of each batch's answer (§6.2).
/// - `merge`: all atoms, the first of each asset id kept;
/// - `vote`: atoms whose asset id appears in more than half of the batches;
/// - `latest`: the last batch's atoms;
/// - `weighted`: all asset ids, each with the version of highest confidence.
pub fn aggregate(strategy: &str, batches: &[Vec<Value>]) -> Result<Vec<Value>, String> {
    match strategy {
        "merge" => {
            let mut seen = std::collections::HashSet::new();
            Ok(batches
                .iter()
                .flatten()
                .filter(|a| seen.insert(atom_key(a)))
                .cloned()
                .collect())
        }
        "latest" => Ok(batches.last().cloned().unwrap_or_default()),
        "vote" => Ok(by_vote(batches)),
        "weighted" => Ok(by_confidence(batches)),
        other => Err(format!(
            "unknown aggregation_strategy `{other}` (merge, vote, latest or weighted)"
        )),
    }
}

/// What tells an atom apart from the others: its asset id, else its atom id, else its
/// whole text.
fn atom_key(a: &Value) -> String {
    a.get("asset_id")
        .or_else(|| a.get("atom_id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| a.to_string())
}

/// The `vote` strategy: the first version of each atom found in more than half of the
/// batches, in the order first found.
fn by_vote(batches: &[Vec<Value>]) -> Vec<Value> {
    let mut votes: HashMap<String, (usize, usize)> = HashMap::new();
    let mut order = Vec::new();
    for (b, atoms) in batches.iter().enumerate() {
        let mut once = std::collections::HashSet::new();
        for (k, a) in atoms.iter().enumerate() {
            let key = atom_key(a);
            if !once.insert(key.clone()) {
                continue;
            }
            let e = votes.entry(key.clone()).or_insert_with(|| {
                order.push((b, k));
                (0, order.len() - 1)
            });
            e.0 += 1;
        }
    }
    let need = batches.len() / 2 + 1;
    order
        .iter()
        .filter(|&&(b, k)| {
            votes
                .get(&atom_key(&batches[b][k]))
                .is_some_and(|v| v.0 >= need)
        })
        .map(|&(b, k)| batches[b][k].clone())
        .collect()
}

/// The `weighted` strategy: every atom, each in its version of highest confidence (the
/// first of equals).
fn by_confidence(batches: &[Vec<Value>]) -> Vec<Value> {
    let conf = |a: &Value| a.get("confidence").and_then(Value::as_f64).unwrap_or(0.0);
    let mut best: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Value> = Vec::new();
    for a in batches.iter().flatten() {
        let key = atom_key(a);
        match best.get(&key) {
            Some(&i) if conf(&out[i]) >= conf(a) => {}
            Some(&i) => out[i] = a.clone(),
            None => {
                best.insert(key, out.len());
                out.push(a.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_seed_example_150k_in_30k_batches() {
        // 150 items of 1,000 tokens: 30 per batch, 500 tokens of overlap = 1 item.
        let sizes = vec![1_000u64; 150];
        let s = split(&sizes, &default_config());
        assert_eq!(s.batches.len(), 6, "{:?}", s.batches);
        assert_eq!(s.batches[0], 0..30);
        assert_eq!(s.batches[1], 29..59, "one item of overlap");
        assert_eq!(s.dropped, 0);
        for w in s.batches.windows(2) {
            assert_eq!(w[1].start + 1, w[0].end);
        }
        assert_eq!(s.batches.last().map(|b| b.end), Some(150));
    }

    #[test]
    fn max_batches_and_oversized_items() {
        let mut cfg = default_config();
        cfg.max_batches = 2;
        cfg.overlap_tokens = 0;
        let s = split(&[20_000, 20_000, 20_000, 20_000], &cfg);
        assert_eq!(s.batches, vec![0..1, 1..2]);
        assert_eq!(s.dropped, 2);
        let s = split(&[90_000, 10], &default_config());
        assert_eq!(s.batches[0], 0..1, "an item larger than a batch goes alone");
        assert!(split(&[], &default_config()).batches.is_empty());
    }

    #[test]
    fn aggregation_strategies() {
        let a = |id: &str, c: f64| json!({"asset_id": id, "confidence": c});
        let batches = vec![
            vec![a("x", 0.5), a("y", 0.9)],
            vec![a("x", 0.8), a("z", 0.4)],
            vec![a("x", 0.7), a("y", 0.6)],
        ];
        let ids = |v: Vec<Value>| {
            v.iter()
                .map(|x| {
                    (
                        x["asset_id"].as_str().unwrap_or("").to_string(),
                        x["confidence"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ids(aggregate("merge", &batches).expect("merge")),
            vec![("x".into(), 0.5), ("y".into(), 0.9), ("z".into(), 0.4)]
        );
        assert_eq!(
            ids(aggregate("latest", &batches).expect("latest")),
            vec![("x".into(), 0.7), ("y".into(), 0.6)]
        );
        assert_eq!(
            ids(aggregate("vote", &batches).expect("vote")),
            vec![("x".into(), 0.5), ("y".into(), 0.9)],
            "z is in one batch of three"
        );
        assert_eq!(
            ids(aggregate("weighted", &batches).expect("weighted")),
            vec![("x".into(), 0.8), ("y".into(), 0.9), ("z".into(), 0.4)]
        );
        assert!(aggregate("average", &batches).is_err());
    }
}
