//! The asset ids the quality gate knows exist, as a set of 64-bit hashes: a run adds the
//! id of every atom it accepts, so a set of the ids' text grew by about 65 bytes per atom
//! (and one of a database with many runs was large from the start); a hash takes 8.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};

/// Answers whether an asset id exists (the gate flags references to ids that do not).
pub trait KnowsAssets {
    /// Whether asset `id` exists.
    fn knows(&self, id: &str) -> bool;
}

impl<S: BuildHasher> KnowsAssets for HashSet<String, S> {
    fn knows(&self, id: &str) -> bool {
        self.contains(id)
    }
}

/// The assets a set knows, and those a request listed as existing (`existing_assets`):
/// an atom that builds on an asset it was told of refers to no fabrication.
pub struct WithListed<'a, K: ?Sized> {
    /// The run's (and the database's) known assets.
    pub known: &'a K,
    /// The ids the request listed.
    pub listed: &'a [String],
}

impl<K: KnowsAssets + ?Sized> KnowsAssets for WithListed<'_, K> {
    fn knows(&self, id: &str) -> bool {
        self.listed.iter().any(|l| l == id) || self.known.knows(id)
    }
}

/// A set of asset ids held as 64-bit SipHash values of their text. Two ids share a hash
/// with a chance of about one in 2⁶⁴ per pair, so a fabricated reference passes for a
/// known one about once in 10¹³ references against a million known ids.
#[derive(Debug, Clone, Default)]
pub struct AssetIds {
    hashes: rustc_hash::FxHashSet<u64>,
}

impl AssetIds {
    /// Adds asset `id`.
    pub fn insert(&mut self, id: &str) {
        self.hashes.insert(hash_of(id));
    }

    /// Number of distinct ids held.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether no id is held.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

impl KnowsAssets for AssetIds {
    fn knows(&self, id: &str) -> bool {
        self.hashes.contains(&hash_of(id))
    }
}

impl<T: AsRef<str>> FromIterator<T> for AssetIds {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut ids = AssetIds::default();
        ids.extend(iter);
        ids
    }
}

impl<T: AsRef<str>> Extend<T> for AssetIds {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for id in iter {
            self.insert(id.as_ref());
        }
    }
}

/// The id's hash: the standard library's SipHash with fixed keys (the same all through a
/// process, which is all the set needs), a hash of good quality whatever the ids look like.
fn hash_of(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_the_ids_added_and_no_other() {
        let mut ids: AssetIds = ["MATH_VAD_ATTENTION_01", "ATOM-T1-1"].into_iter().collect();
        ids.insert("ATOM-T2-1");
        ids.insert("ATOM-T2-1");
        assert_eq!(ids.len(), 3);
        for id in ["MATH_VAD_ATTENTION_01", "ATOM-T1-1", "ATOM-T2-1"] {
            assert!(ids.knows(id), "{id}");
        }
        for id in ["ATOM-T3-1", "atom-t1-1", "", "ATOM-T1-1 "] {
            assert!(!ids.knows(id), "{id}");
        }
    }

    #[test]
    fn a_hundred_thousand_ids_share_no_hash() {
        let ids: AssetIds = (0..100_000).map(|i| format!("ATOM-T{i}-1")).collect();
        assert_eq!(ids.len(), 100_000);
        assert!(!ids.knows("ATOM-T100000-1"));
    }
}
