//! The on-demand token budget of seed 002 ("建议控制 token 消耗在合理范围（约40K）"):
//! what a reader has opened, each document counted once, against a configurable limit.

use std::path::{Path, PathBuf};

use super::doc::Doc;

/// The seed's suggested budget for what the Init agent loads on demand: about 40 K.
pub const DEFAULT_BUDGET: u64 = 40_000;

/// Share of the budget from which [`BudgetLevel::Near`] applies.
pub const NEAR_FRACTION: f64 = 0.8;

/// Where the running total stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetLevel {
    /// Below 80 % of the limit.
    Under,
    /// From 80 % up to the limit.
    Near,
    /// Past the limit.
    Over,
}

/// Documents opened and their token counts, against a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBudget {
    /// The limit (tokens).
    pub limit: u64,
    opened: Vec<(PathBuf, u64)>,
    total: u64,
}

impl Default for TokenBudget {
    fn default() -> Self {
        TokenBudget::new(DEFAULT_BUDGET)
    }
}

impl TokenBudget {
    /// An empty budget of `limit` tokens.
    pub fn new(limit: u64) -> TokenBudget {
        TokenBudget {
            limit,
            opened: Vec::new(),
            total: 0,
        }
    }

    /// Counts `doc` as opened; a document already counted (same path) is not counted
    /// again. Returns whether it was added.
    pub fn open(&mut self, doc: &Doc) -> bool {
        self.open_path(&doc.path, doc.tokens)
    }

    /// Counts `tokens` for `path` unless the path is already counted.
    pub fn open_path(&mut self, path: &Path, tokens: u64) -> bool {
        if self.is_open(path) {
            return false;
        }
        self.opened.push((path.to_path_buf(), tokens));
        self.total += tokens;
        true
    }

    /// Whether `path` is counted.
    pub fn is_open(&self, path: &Path) -> bool {
        self.opened.iter().any(|(p, _)| p == path)
    }

    /// Removes `path` from the total (a document closed); returns its tokens.
    pub fn close(&mut self, path: &Path) -> Option<u64> {
        let i = self.opened.iter().position(|(p, _)| p == path)?;
        let (_, t) = self.opened.remove(i);
        self.total -= t;
        Some(t)
    }

    /// Forgets everything opened.
    pub fn reset(&mut self) {
        self.opened.clear();
        self.total = 0;
    }

    /// Tokens of everything opened.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Tokens left before the limit (0 when past it).
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.total)
    }

    /// Total as a share of the limit (may exceed 1; 0 for a zero limit with nothing open).
    pub fn fraction(&self) -> f64 {
        if self.limit == 0 {
            return if self.total == 0 { 0.0 } else { f64::INFINITY };
        }
        self.total as f64 / self.limit as f64
    }

    /// Where the total stands.
    pub fn level(&self) -> BudgetLevel {
        if self.total > self.limit {
            BudgetLevel::Over
        } else if self.fraction() >= NEAR_FRACTION {
            BudgetLevel::Near
        } else {
            BudgetLevel::Under
        }
    }

    /// Whether opening `tokens` more would pass the limit.
    pub fn would_exceed(&self, tokens: u64) -> bool {
        self.total.saturating_add(tokens) > self.limit
    }

    /// The documents counted, in the order opened.
    pub fn opened(&self) -> &[(PathBuf, u64)] {
        &self.opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_once_and_levels() {
        let mut b = TokenBudget::new(100);
        assert!(b.open_path(Path::new("a"), 50));
        assert!(!b.open_path(Path::new("a"), 50));
        assert_eq!(b.total(), 50);
        assert_eq!(b.level(), BudgetLevel::Under);
        b.open_path(Path::new("b"), 30);
        assert_eq!(b.level(), BudgetLevel::Near);
        assert!(b.would_exceed(21));
        b.open_path(Path::new("c"), 30);
        assert_eq!(b.level(), BudgetLevel::Over);
        assert_eq!(b.remaining(), 0);
        assert_eq!(b.close(Path::new("b")), Some(30));
        assert_eq!(b.total(), 80);
        b.reset();
        assert_eq!(b.total(), 0);
    }
}
