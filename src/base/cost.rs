//! Money: the config's price table (`[prices."MODEL"]`, US dollars per million tokens),
//! what one model call cost, running totals that know which calls had no price, and how
//! an amount is written (`$0.0123`, `—` when nothing was priced, never a made-up 0).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One model's prices, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Prompt tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Prompt tokens the provider served from its cache (`None`: priced as `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

/// The tokens one call is billed for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallTokens {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    /// Of those, the ones read from the provider's cache.
    pub cached_input: u64,
    /// Output tokens.
    pub output: u64,
}

impl Price {
    /// What `tokens` cost at this price, in US dollars.
    pub fn cost(&self, tokens: CallTokens) -> f64 {
        let cached = tokens.cached_input.min(tokens.input);
        let fresh = tokens.input - cached;
        let per = 1e-6;
        fresh as f64 * self.input * per
            + cached as f64 * self.cached_input.unwrap_or(self.input) * per
            + tokens.output as f64 * self.output * per
    }
}

/// The config's price table, by model name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<String, Price>,
}

impl PriceTable {
    /// A table of these prices.
    pub fn new(prices: BTreeMap<String, Price>) -> PriceTable {
        PriceTable { prices }
    }

    /// Reads the `[prices."MODEL"]` tables of `config` (none: an empty table). The
    /// loader has checked each key against its declaration, so a value that is not a
    /// number here is still named rather than trusted.
    pub fn from_config(config: &crate::base::config::Config) -> Result<PriceTable, String> {
        let file = config.file_label();
        let Some(v) = config.other.get("prices") else {
            return Ok(PriceTable::default());
        };
        let Some(models) = v.as_table() else {
            return Err(format!("{file}: prices must be tables: [prices.\"MODEL\"]"));
        };
        let mut prices = BTreeMap::new();
        for (model, table) in models {
            let number = |key: &str| -> Result<Option<f64>, String> {
                match table.get(key) {
                    None => Ok(None),
                    Some(toml::Value::Integer(n)) => Ok(Some(*n as f64)),
                    Some(toml::Value::Float(x)) if x.is_finite() && *x >= 0.0 => Ok(Some(*x)),
                    Some(_) => Err(format!(
                        "{file}: prices.\"{model}\".{key} must be a number of US dollars per million tokens, 0 or more"
                    )),
                }
            };
            let need = |key: &str| {
                number(key)?.ok_or_else(|| {
                    format!("{file}: [prices.\"{model}\"] needs `{key}` (US dollars per million tokens)")
                })
            };
            prices.insert(
                model.clone(),
                Price {
                    input: need("input")?,
                    output: need("output")?,
                    cached_input: number("cached_input")?,
                },
            );
        }
        Ok(PriceTable { prices })
    }

    /// The price of `model`, when the table has it.
    pub fn price(&self, model: &str) -> Option<Price> {
        self.prices.get(model).copied()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.prices.is_empty()
    }
}

/// A sum of call costs that remembers the calls it could not price.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// US dollars of the priced calls.
    pub usd: f64,
    /// Calls with a cost.
    pub priced: u32,
    /// Calls without one (no price for their model).
    pub unpriced: u32,
}

impl Spend {
    /// Adds one call's cost (`None`: it had no price).
    pub fn add(&mut self, cost: Option<f64>) {
        match cost {
            Some(usd) if usd.is_finite() => {
                self.usd += usd;
                self.priced += 1;
            }
            _ => self.unpriced += 1,
        }
    }

    /// Adds another sum.
    pub fn merge(&mut self, other: Spend) {
        self.usd += other.usd;
        self.priced += other.priced;
        self.unpriced += other.unpriced;
    }

    /// The sum as a person reads it: `—` when no call had a price, `≥ $1.23` when some
    /// did not, else `$1.23`.
    pub fn label(&self) -> String {
        match (self.priced, self.unpriced) {
            (0, _) => NO_PRICE.to_string(),
            (_, 0) => usd(self.usd),
            _ => format!("≥{}", usd(self.usd)),
        }
    }

    /// The amount when every call counted had a price (`None` otherwise, and when there
    /// was no call): what `--json` reports, so an unknown cost is never 0.
    pub fn known(&self) -> Option<f64> {
        (self.priced > 0 && self.unpriced == 0).then_some(self.usd)
    }
}

/// What an unknown cost reads.
pub const NO_PRICE: &str = "—";

/// `$1.23`, with more places for small amounts (`$0.0042`, `$0.000012`).
pub fn usd(amount: f64) -> String {
    let a = amount.abs();
    let places = if a == 0.0 || a >= 1.0 {
        2
    } else if a >= 0.01 {
        3
    } else if a >= 0.0001 {
        4
    } else {
        6
    };
    format!("${amount:.places$}")
}

/// One call's cost in words, `—` when unknown.
pub fn label(cost: Option<f64>) -> String {
    cost.map_or_else(|| NO_PRICE.to_string(), usd)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GPT: Price = Price {
        input: 2.5,
        output: 10.0,
        cached_input: Some(1.25),
    };

    #[test]
    fn a_call_costs_its_tokens_at_the_model_s_prices_cached_ones_at_their_own() {
        let t = CallTokens {
            input: 1_000_000,
            cached_input: 400_000,
            output: 100_000,
        };
        // 600k fresh × 2.5 + 400k cached × 1.25 + 100k × 10, per million.
        assert!((GPT.cost(t) - (1.5 + 0.5 + 1.0)).abs() < 1e-9);
        let no_cache_price = Price {
            cached_input: None,
            ..GPT
        };
        assert!((no_cache_price.cost(t) - (2.5 + 1.0)).abs() < 1e-9);
    }

    #[test]
    fn more_cached_tokens_than_prompt_tokens_are_not_billed_twice() {
        let t = CallTokens {
            input: 10,
            cached_input: 50,
            output: 0,
        };
        assert!((GPT.cost(t) - 10.0 * 1.25e-6).abs() < 1e-12);
    }

    #[test]
    fn a_sum_with_no_priced_call_reads_a_dash_never_zero() {
        let mut s = Spend::default();
        assert_eq!(s.label(), "—");
        s.add(None);
        assert_eq!(s.label(), "—");
        assert_eq!(s.known(), None);
        s.add(Some(0.5));
        assert_eq!(s.label(), "≥$0.500");
        assert_eq!(s.known(), None);
        let mut all = Spend::default();
        all.add(Some(0.0));
        assert_eq!(all.label(), "$0.00");
        assert_eq!(all.known(), Some(0.0));
    }

    #[test]
    fn small_amounts_keep_their_figures() {
        assert_eq!(usd(12.345), "$12.35");
        assert_eq!(usd(0.0421), "$0.042");
        assert_eq!(usd(0.00123), "$0.0012");
        assert_eq!(usd(0.0000123), "$0.000012");
    }

    #[test]
    fn the_price_table_reads_integers_and_floats_and_names_a_missing_price() {
        let mut cfg = crate::base::config::Config::default();
        let t: toml::Table =
            toml::from_str("[prices.\"gpt-4o\"]\ninput = 2.5\noutput = 10\n").expect("toml");
        cfg.other = t;
        let table = PriceTable::from_config(&cfg).expect("table");
        assert_eq!(
            table.price("gpt-4o"),
            Some(Price {
                input: 2.5,
                output: 10.0,
                cached_input: None
            })
        );
        assert_eq!(table.price("gpt-4o-mini"), None);
        let t: toml::Table = toml::from_str("[prices.m]\ninput = 1\n").expect("toml");
        cfg.other = t;
        let e = PriceTable::from_config(&cfg).expect_err("no output price");
        assert!(e.contains("[prices.\"m\"] needs `output`"), "{e}");
    }
}
