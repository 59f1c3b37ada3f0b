//! What a run spends: each call's cost at its model's price, the running total (with
//! what the run spent before a resume), and whether the run's money budget is reached.

use std::sync::Mutex;

use crate::base::cost::{CallTokens, Price};
use crate::data::provider::Usage;

/// A run's prices, budget and spending so far.
#[derive(Debug, Default)]
pub(crate) struct Money {
    /// The price of the run's model (`None`: its calls have no cost).
    price: Option<Price>,
    /// The budget, US dollars (`None`: no budget).
    limit: Option<f64>,
    /// US dollars spent, calls of earlier sessions of the run included.
    spent: Mutex<f64>,
}

impl Money {
    /// The run's money at `price` with budget `limit`, `before` already spent.
    pub(crate) fn new(price: Option<Price>, limit: Option<f64>, before: f64) -> Money {
        Money {
            price,
            limit,
            spent: Mutex::new(before),
        }
    }

    /// What a call cost, from the usage its provider reported, else from plexus's own
    /// counts (`counted`), and adds it to the run's spending; `None` without a price.
    pub(crate) fn charge(&self, reported: Option<Usage>, counted: CallTokens) -> Option<f64> {
        let price = self.price?;
        let tokens = match reported {
            Some(u) => CallTokens {
                input: u.prompt_tokens,
                cached_input: u.cached_prompt_tokens,
                output: u.completion_tokens,
            },
            None => counted,
        };
        let cost = price.cost(tokens);
        if let Ok(mut spent) = self.spent.lock() {
            *spent += cost;
        }
        Some(cost)
    }

    /// [`Money::charge`] for a call that ended: one the provider refused before
    /// answering (`answered` false: nothing streamed, no usage reported, such as a 429 or
    /// a refused connection) is not billed.
    pub(crate) fn charge_call(
        &self,
        reported: Option<Usage>,
        counted: CallTokens,
        answered: bool,
    ) -> Option<f64> {
        if answered || reported.is_some() {
            self.charge(reported, counted)
        } else {
            self.charge(None, CallTokens::default())
        }
    }

    /// US dollars spent so far.
    pub(crate) fn spent(&self) -> f64 {
        self.spent.lock().map_or(0.0, |s| *s)
    }

    /// The budget, when the run has one.
    pub(crate) fn limit(&self) -> Option<f64> {
        self.limit
    }

    /// Whether the run has spent its whole budget: no new call starts.
    pub(crate) fn reached(&self) -> bool {
        self.limit.is_some_and(|l| self.spent() >= l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_usage_is_billed_before_plexus_s_own_counts_and_the_budget_is_reached() {
        let price = Price {
            input: 1.0,
            output: 2.0,
            cached_input: Some(0.5),
        };
        let m = Money::new(Some(price), Some(0.000_009_5), 0.000_002);
        let counted = CallTokens {
            input: 1,
            cached_input: 0,
            output: 1,
        };
        let reported = Usage {
            prompt_tokens: 4,
            completion_tokens: 1,
            cached_prompt_tokens: 2,
        };
        // 2 fresh × 1 + 2 cached × 0.5 + 1 × 2 = 5 per million.
        let c = m.charge(Some(reported), counted).expect("priced");
        assert!((c - 5e-6).abs() < 1e-12);
        assert!(!m.reached());
        let c = m.charge(None, counted).expect("priced");
        assert!((c - 3e-6).abs() < 1e-12);
        assert!(
            m.reached(),
            "2 + 5 + 3 = 10 millionths spent of a budget of 9.5"
        );
        let unpriced = Money::new(None, Some(0.0), 0.0);
        assert_eq!(unpriced.charge(Some(reported), counted), None);
    }
}
