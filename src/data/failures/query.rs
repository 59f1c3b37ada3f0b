//! Filters and sorts over a tree's index: pure functions that answer with row numbers
//! (`u32` indices into [`Tree::samples`]) in buffers reused from one query to the next,
//! so a keystroke costs no allocation of the list.

use std::sync::Arc;

use crate::base::protocol::handoff::FailurePriority;

use super::index::Tree;

/// Which samples to keep (every condition given must hold).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Exactly this failure type.
    pub failure_type: Option<String>,
    /// Exactly this priority.
    pub priority: Option<FailurePriority>,
    /// This checker among the failed ones.
    pub checker: Option<String>,
    /// This iteration.
    pub iteration: Option<u32>,
    /// Text searched, case-insensitively, in ids, failure types and failed checkers.
    pub search: String,
}

impl Filter {
    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.failure_type.is_none()
            && self.priority.is_none()
            && self.checker.is_none()
            && self.iteration.is_none()
            && self.search.is_empty()
    }
}

/// What to sort by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Sample id, numbers by value (`BS_MT_2` before `BS_MT_10`).
    #[default]
    Id,
    /// high, medium, low, then none.
    Priority,
    /// Failure type by name (none last).
    FailureType,
    /// Conversation turns (unknown last).
    Turns,
    /// Index order.
    Index,
}

/// A sort: key and direction; ties are broken by id, ascending.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sort {
    /// Key.
    pub key: SortKey,
    /// Largest first (for priority: low first).
    pub descending: bool,
}

/// Runs queries with reusable buffers.
#[derive(Debug, Default, Clone)]
pub struct Selector {
    rows: Vec<u32>,
    keys: Vec<(u64, u32)>,
    /// Per interned name (by pointer): whether it matches the search.
    names: rustc_hash::FxHashMap<usize, bool>,
    ranks: rustc_hash::FxHashMap<usize, u32>,
}

fn ptr(a: &Arc<str>) -> usize {
    Arc::as_ptr(a) as *const u8 as usize
}

/// Whether `needle` (already lowercased) occurs in `hay`, ignoring case.
fn contains_ci(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    if hay.is_ascii() && needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        return h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    hay.to_lowercase().contains(needle)
}

impl Selector {
    /// A selector with empty buffers.
    pub fn new() -> Selector {
        Selector::default()
    }

    /// The samples of `tree` that pass `filter`, sorted by `sort`, as row numbers.
    pub fn run(&mut self, tree: &Tree, filter: &Filter, sort: Sort) -> &[u32] {
        self.filter(tree, filter);
        self.sort(tree, sort);
        &self.rows
    }

    /// The rows of the last query.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    fn filter(&mut self, tree: &Tree, f: &Filter) {
        self.rows.clear();
        let needle = f.search.trim().to_lowercase();
        self.names.clear();
        let names = &mut self.names;
        let mut name_matches = |a: &Arc<str>| {
            *names
                .entry(ptr(a))
                .or_insert_with(|| contains_ci(a, &needle))
        };
        for (i, s) in tree.samples.iter().enumerate() {
            if let Some(t) = &f.failure_type {
                if s.failure_type.as_deref() != Some(t.as_str()) {
                    continue;
                }
            }
            if f.priority.is_some() && s.priority != f.priority {
                continue;
            }
            if let Some(c) = &f.checker {
                if !s.failed_checker(c) {
                    continue;
                }
            }
            if f.iteration.is_some_and(|n| n != s.iteration) {
                continue;
            }
            if !needle.is_empty()
                && !contains_ci(&s.id, &needle)
                && !s.failure_type.as_ref().is_some_and(&mut name_matches)
                && !s.checkers_failed.iter().any(&mut name_matches)
            {
                continue;
            }
            self.rows.push(i as u32);
        }
    }

    fn sort(&mut self, tree: &Tree, sort: Sort) {
        let rank = |i: u32| tree.id_rank.get(i as usize).copied().unwrap_or(i);
        if sort.key == SortKey::Index {
            if sort.descending {
                self.rows.reverse();
            }
            return;
        }
        if sort.key == SortKey::FailureType {
            self.ranks.clear();
            let mut names: Vec<&Arc<str>> = Vec::new();
            for s in &tree.samples {
                if let Some(t) = &s.failure_type {
                    if let std::collections::hash_map::Entry::Vacant(e) = self.ranks.entry(ptr(t)) {
                        e.insert(0);
                        names.push(t);
                    }
                }
            }
            names.sort();
            let mut r = 0u32;
            for (k, t) in names.iter().enumerate() {
                if k > 0 && names[k - 1] != *t {
                    r += 1;
                }
                self.ranks.insert(ptr(t), r);
            }
        }
        let desc = sort.descending;
        self.keys.clear();
        for &i in &self.rows {
            let s = &tree.samples[i as usize];
            // Unknown values sort last in either direction.
            let primary: u64 = match sort.key {
                SortKey::Id | SortKey::Index => 0,
                SortKey::Priority => match s.priority {
                    Some(FailurePriority::High) => 1,
                    Some(FailurePriority::Medium) => 2,
                    Some(FailurePriority::Low) => 3,
                    None => u32::MAX as u64,
                },
                SortKey::FailureType => s
                    .failure_type
                    .as_ref()
                    .and_then(|t| self.ranks.get(&ptr(t)))
                    .map_or(u32::MAX as u64, |&r| r as u64),
                SortKey::Turns => s.conversation_turns.map_or(u32::MAX as u64, u64::from),
            };
            let primary = if desc && primary != u32::MAX as u64 {
                u32::MAX as u64 - 1 - primary
            } else {
                primary
            };
            let tie = if desc && sort.key == SortKey::Id {
                u32::MAX - rank(i)
            } else {
                rank(i)
            };
            self.keys.push(((primary << 32) | tie as u64, i));
        }
        self.keys.sort_unstable();
        self.rows.clear();
        self.rows.extend(self.keys.iter().map(|&(_, i)| i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::failures::index::Sample;

    fn tree(samples: Vec<Sample>) -> Tree {
        Tree::from_samples(std::path::Path::new("."), samples)
    }

    fn sample(
        id: &str,
        ty: &str,
        p: Option<FailurePriority>,
        turns: u32,
        checkers: &[&str],
    ) -> Sample {
        let mut s = Sample::new(id, 1);
        s.failure_type = Some(ty.into());
        s.priority = p;
        s.conversation_turns = Some(turns);
        s.checkers_failed = checkers.iter().map(|c| Arc::from(*c)).collect();
        s
    }

    /// Four samples of two layers, priorities and checkers, their ids out of order.
    fn four_samples() -> Tree {
        use FailurePriority::*;
        tree(vec![
            sample(
                "BS_MT_10",
                "Layer1_BusinessRule",
                Some(High),
                8,
                &["leave_balance_deducted"],
            ),
            sample(
                "BS_MT_2",
                "Layer2_Agent",
                Some(Low),
                50,
                &["approval_chain_notified"],
            ),
            sample(
                "BS_MT_3",
                "Layer1_BusinessRule",
                None,
                12,
                &["leave_balance_deducted", "date_range_valid"],
            ),
            sample("BS_MT_1", "Layer1_CheckerDesign", Some(Medium), 3, &[]),
        ])
    }

    /// The ids of the selected rows, in order.
    fn ids(t: &Tree, rows: &[u32]) -> Vec<String> {
        rows.iter()
            .map(|&i| t.samples[i as usize].id.to_string())
            .collect()
    }

    #[test]
    fn sorts_by_id_priority_turns_and_type() {
        let t = four_samples();
        let mut q = Selector::new();
        let all = Filter::default();
        assert_eq!(
            ids(&t, q.run(&t, &all, Sort::default())),
            ["BS_MT_1", "BS_MT_2", "BS_MT_3", "BS_MT_10"]
        );
        let desc = Sort {
            key: SortKey::Id,
            descending: true,
        };
        assert_eq!(
            ids(&t, q.run(&t, &all, desc)),
            ["BS_MT_10", "BS_MT_3", "BS_MT_2", "BS_MT_1"]
        );
        let by_p = Sort {
            key: SortKey::Priority,
            descending: false,
        };
        assert_eq!(
            ids(&t, q.run(&t, &all, by_p)),
            ["BS_MT_10", "BS_MT_1", "BS_MT_2", "BS_MT_3"]
        );
        let by_turns = Sort {
            key: SortKey::Turns,
            descending: true,
        };
        assert_eq!(
            ids(&t, q.run(&t, &all, by_turns)),
            ["BS_MT_2", "BS_MT_3", "BS_MT_10", "BS_MT_1"]
        );
        let by_type = Sort {
            key: SortKey::FailureType,
            descending: false,
        };
        assert_eq!(
            ids(&t, q.run(&t, &all, by_type)),
            ["BS_MT_3", "BS_MT_10", "BS_MT_1", "BS_MT_2"]
        );
    }

    #[test]
    fn filters_by_checker_type_priority_search_and_iteration() {
        let t = four_samples();
        let mut q = Selector::new();
        let f = Filter {
            checker: Some("leave_balance_deducted".into()),
            ..Filter::default()
        };
        assert_eq!(
            ids(&t, q.run(&t, &f, Sort::default())),
            ["BS_MT_3", "BS_MT_10"]
        );
        let f = Filter {
            failure_type: Some("Layer1_BusinessRule".into()),
            priority: Some(FailurePriority::High),
            ..Filter::default()
        };
        assert_eq!(ids(&t, q.run(&t, &f, Sort::default())), ["BS_MT_10"]);
        let f = Filter {
            search: "layer2".into(),
            ..Filter::default()
        };
        assert_eq!(ids(&t, q.run(&t, &f, Sort::default())), ["BS_MT_2"]);
        let f = Filter {
            search: "DATE_RANGE".into(),
            ..Filter::default()
        };
        assert_eq!(ids(&t, q.run(&t, &f, Sort::default())), ["BS_MT_3"]);
        let f = Filter {
            search: "mt_1".into(),
            ..Filter::default()
        };
        assert_eq!(
            ids(&t, q.run(&t, &f, Sort::default())),
            ["BS_MT_1", "BS_MT_10"]
        );
        let f = Filter {
            iteration: Some(2),
            ..Filter::default()
        };
        assert!(q.run(&t, &f, Sort::default()).is_empty());
    }
}
