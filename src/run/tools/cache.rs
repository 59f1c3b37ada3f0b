//! The results of idempotent tools within one run, keyed by (tool, canonical arguments,
//! output level), least recently used entries dropped first.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::base::protocol::messages::{OutputLevel, ToolResultMessage};

/// Entries a cache keeps by default.
pub const DEFAULT_CACHE_ENTRIES: usize = 256;

/// Largest observation (bytes) kept; a larger one is recomputed when asked again.
pub const MAX_CACHED_OBSERVATION: usize = 256 * 1024;

/// A cache key: tool name, the arguments' canonical JSON and the effective level.
pub type CacheKey = (String, String, OutputLevel);

/// Cache of successful results of idempotent tool calls; one per run, owned by the
/// caller, shareable between concurrent calls (it locks inside).
#[derive(Debug)]
pub struct ToolCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    tick: u64,
    entries: HashMap<CacheKey, (ToolResultMessage, u64)>,
}

impl Default for ToolCache {
    fn default() -> Self {
        Self::new(DEFAULT_CACHE_ENTRIES)
    }
}

impl ToolCache {
    /// A cache holding at most `capacity` results (0 caches nothing).
    pub fn new(capacity: usize) -> Self {
        ToolCache {
            capacity,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The key of a call.
    pub fn key(tool: &str, args: &Value, level: OutputLevel) -> CacheKey {
        (tool.to_string(), canonical_json(args), level)
    }

    /// The stored result for `key`, marked as just used.
    pub fn get(&self, key: &CacheKey) -> Option<ToolResultMessage> {
        let mut inner = self.inner.lock().ok()?;
        inner.tick += 1;
        let tick = inner.tick;
        let (result, used) = inner.entries.get_mut(key)?;
        *used = tick;
        Some(result.clone())
    }

    /// Stores a successful result (failures and very large observations are not kept),
    /// dropping the least recently used entry when full.
    pub fn put(&self, key: CacheKey, result: &ToolResultMessage) {
        if self.capacity == 0
            || !result.success
            || result.observation.len() > MAX_CACHED_OBSERVATION
        {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.tick += 1;
        let tick = inner.tick;
        if !inner.entries.contains_key(&key) && inner.entries.len() >= self.capacity {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                inner.entries.remove(&k);
            }
        }
        inner.entries.insert(key, (result.clone(), tick));
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.entries.len())
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `v` as compact JSON with every object's keys sorted, so arguments that differ only in
/// key order give one key.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(obs: &str) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "c".into(),
            observation: obs.into(),
            output_level: OutputLevel::Standard,
            data_file: None,
            data_size_bytes: 0,
            data_summary: None,
            success: true,
            error_type: None,
            error_code: None,
            error_message: None,
        }
    }

    #[test]
    fn canonical_json_ignores_key_order() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "q\""}});
        let b = json!({"a": {"x": "q\"", "y": [1, {"c": 3, "d": 2}]}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&b),
            r#"{"a":{"x":"q\"","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
    }

    #[test]
    fn keeps_the_recently_used_and_drops_the_oldest() {
        let c = ToolCache::new(2);
        let k = |n: i32| ToolCache::key("t", &json!({ "n": n }), OutputLevel::Standard);
        c.put(k(1), &ok("one"));
        c.put(k(2), &ok("two"));
        assert!(c.get(&k(1)).is_some());
        c.put(k(3), &ok("three"));
        assert_eq!(c.len(), 2);
        assert!(c.get(&k(2)).is_none(), "2 was least recently used");
        assert_eq!(c.get(&k(1)).map(|r| r.observation), Some("one".into()));
        let mut failed = ok("no");
        failed.success = false;
        c.put(k(4), &failed);
        assert!(c.get(&k(4)).is_none(), "failures are not cached");
        let other_level = ToolCache::key("t", &json!({ "n": 1 }), OutputLevel::Brief);
        assert!(c.get(&other_level).is_none());
    }
}
