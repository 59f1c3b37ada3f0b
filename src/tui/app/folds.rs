//! Which steps of a tool-using loop are folded in the output pane (the state; the
//! folding of lines is drawn by the UI).

use std::collections::BTreeSet;

/// Which steps of one task's loop are folded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folds {
    /// Every step folded.
    pub all: bool,
    /// These steps folded.
    pub steps: BTreeSet<u32>,
    /// These steps open although `all` is set.
    pub open: BTreeSet<u32>,
}

impl Folds {
    /// Whether step `n` is folded.
    pub fn folded(&self, n: u32) -> bool {
        (self.all && !self.open.contains(&n)) || self.steps.contains(&n)
    }

    /// Whether anything is folded.
    pub fn any(&self) -> bool {
        self.all || !self.steps.is_empty()
    }

    /// Folds (or opens) step `n`, or every step when `n` is `None`.
    pub fn set(&mut self, n: Option<u32>, fold: bool) {
        match n {
            None => {
                self.all = fold;
                self.steps.clear();
                self.open.clear();
            }
            Some(n) if fold => {
                self.steps.insert(n);
                self.open.remove(&n);
            }
            Some(n) => {
                self.steps.remove(&n);
                if self.all {
                    self.open.insert(n);
                }
            }
        }
    }
}
