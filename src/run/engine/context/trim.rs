//! Priority trimming (seed 000 §6.3) and the `context_management` report (§7.2).
//!
//! Items are taken by priority (1 critical → 4 optional). When everything does not fit:
//! composite critical items first drop their own parts above priority 2
//! (`filter_by_priority`), critical items are compressed only if they alone overflow,
//! important items are summarised once the running total would pass 80 % of the limit,
//! supplementary ones are left out past 90 % and optional ones past 95 %.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::protocol::context::{ContextManagement, InputSize, Resolution, TrimAction};

/// A part of a composite item (an atom of a task's output) with its own priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// Priority 1–4.
    pub priority: u8,
    /// Tokens.
    pub tokens: u64,
}

/// One input of an invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Name in the report (`scholar_output`, `system_prompt`, …).
    pub name: String,
    /// Priority 1–4.
    pub priority: u8,
    /// Tokens.
    pub tokens: u64,
    /// Parts with their own priorities (empty for plain items).
    pub parts: Vec<Part>,
    /// Whether it may be summarised or compressed (not the system prompt or instructions).
    pub compressible: bool,
    /// A list whose tail may be dropped (the context's dependencies and existing assets):
    /// unlike a summary it can shrink below [`MIN_SUMMARY_RATIO`], down to nothing.
    pub truncatable: bool,
}

/// What happens to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Decision {
    /// Passed as is.
    Keep,
    /// Parts above `max_priority` dropped.
    FilterByPriority {
        /// Highest priority kept.
        max_priority: u8,
        /// Tokens after.
        tokens: u64,
    },
    /// Summarised (or compressed) to about `tokens`.
    Summarize {
        /// Tokens after.
        tokens: u64,
    },
    /// Left out.
    Omit,
}

impl Decision {
    /// Tokens the item takes after the decision.
    pub fn tokens_after(&self, item: &Item) -> u64 {
        match *self {
            Decision::Keep => item.tokens,
            Decision::FilterByPriority { tokens, .. } | Decision::Summarize { tokens } => tokens,
            Decision::Omit => 0,
        }
    }
}

/// The outcome: one decision per item (same order) and the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Trimmed {
    /// Decisions, in the order of the items given.
    pub decisions: Vec<Decision>,
    /// The §7.2 report.
    pub report: ContextManagement,
}

/// Smallest share of an item a summary keeps (the extractive strategy's 0.2 of §4.2).
pub const MIN_SUMMARY_RATIO: f64 = 0.2;

/// The fewest tokens compressing `it` may leave: a summary keeps at least
/// [`MIN_SUMMARY_RATIO`]; a truncatable list can lose every entry.
fn floor_of(it: &Item) -> u64 {
    if it.truncatable {
        0
    } else {
        (it.tokens as f64 * MIN_SUMMARY_RATIO) as u64
    }
}

/// Trims `items` to `limit` tokens by the §6.3 algorithm.
pub fn trim(task_id: &str, items: &[Item], limit: u64) -> Trimmed {
    let total: u64 = items.iter().map(|i| i.tokens).sum();
    let mut decisions = vec![Decision::Keep; items.len()];
    let mut actions = Vec::new();
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Within a level, what cannot be compressed (the system prompt, the instruction)
    // takes its room first, so the room left to compress the rest into is known.
    order.sort_by_key(|&i| (items[i].priority.clamp(1, 4), items[i].compressible));
    let mut current = 0u64;
    if total > limit {
        // Critical composites keep only their critical and important parts.
        for &i in &order {
            if let Some(d) = filtered(&items[i]) {
                decisions[i] = d;
            }
        }
        for &i in &order {
            let it = &items[i];
            let size = decisions[i].tokens_after(it);
            if let Some(d) = level_decision(it, size, current, limit) {
                decisions[i] = d;
            }
            current += decisions[i].tokens_after(it);
        }
        // Report the actions lowest priority first, as the seed lists them.
        actions = order
            .iter()
            .rev()
            .filter_map(|&i| trim_action(&items[i], decisions[i]))
            .collect();
    } else {
        current = total;
    }
    Trimmed {
        decisions,
        report: report(task_id, items, limit, actions, current),
    }
}

/// A critical composite's own filter: only its critical and important parts, when it
/// has others.
fn filtered(it: &Item) -> Option<Decision> {
    if it.priority > 1 || it.parts.is_empty() || !it.compressible {
        return None;
    }
    let kept: u64 = it
        .parts
        .iter()
        .filter(|p| p.priority <= 2)
        .map(|p| p.tokens)
        .sum();
    let whole: u64 = it.parts.iter().map(|p| p.tokens).sum();
    if kept >= whole {
        return None;
    }
    // Parts may not add up to the item's count exactly (framing).
    let tokens = it.tokens.saturating_sub(whole - kept);
    Some(Decision::FilterByPriority {
        max_priority: 2,
        tokens,
    })
}

/// What item `it` (of `size` tokens so far) becomes by its priority's rule, with
/// `current` tokens taken before it; `None` leaves its decision as it is.
fn level_decision(it: &Item, size: u64, current: u64, limit: u64) -> Option<Decision> {
    let lim = limit as f64;
    let fits = |share: f64| ((current + size) as f64) < lim * share;
    let summarize = |room: u64| Decision::Summarize {
        tokens: room.max(floor_of(it)).min(size),
    };
    match it.priority.clamp(1, 4) {
        1 if current + size > limit && it.compressible => {
            Some(summarize(limit.saturating_sub(current)))
        }
        2 if !fits(0.8) && it.compressible => {
            Some(summarize(((lim * 0.8) as u64).saturating_sub(current)))
        }
        1 | 2 => None,
        3 => (!fits(0.9)).then_some(Decision::Omit),
        _ => (!fits(0.95)).then_some(Decision::Omit),
    }
}

/// The report's entry for decision `d` on item `it` (none for an item kept as is).
fn trim_action(it: &Item, d: Decision) -> Option<TrimAction> {
    let (action, filter) = match d {
        Decision::Keep => return None,
        Decision::FilterByPriority { max_priority, .. } => (
            "filter_by_priority",
            Some(format!("priority <= {max_priority}")),
        ),
        Decision::Summarize { .. } if it.truncatable => ("truncate", None),
        Decision::Summarize { .. } if it.priority <= 1 => ("compress", None),
        Decision::Summarize { .. } => ("summarize", None),
        Decision::Omit => ("omit", None),
    };
    Some(TrimAction {
        data: it.name.clone(),
        action: action.into(),
        filter,
        original_tokens: it.tokens,
        reduced_tokens: d.tokens_after(it),
    })
}

/// The §7.2 report of trimming `items` to `limit` with `actions`, leaving `current`
/// tokens.
fn report(
    task_id: &str,
    items: &[Item],
    limit: u64,
    actions: Vec<TrimAction>,
    current: u64,
) -> ContextManagement {
    let total: u64 = items.iter().map(|i| i.tokens).sum();
    let mut inputs = BTreeMap::new();
    for it in items {
        inputs.insert(
            it.name.clone(),
            InputSize {
                tokens: it.tokens,
                priority: it.priority,
            },
        );
    }
    ContextManagement {
        task_id: task_id.to_string(),
        total_input_data: inputs,
        total_tokens: total,
        context_limit: limit,
        overflow: total.saturating_sub(limit),
        resolution: Resolution {
            strategy: if total > limit {
                "priority_based_trimming".into()
            } else {
                "none".into()
            },
            actions,
            final_tokens: current,
            within_limit: current <= limit,
        },
    }
}

/// Default priority of an atom by its type (§6.3 table): claims and conclusions are
/// critical; evidence, methods, formulas, code and scenarios important; background and
/// metadata supplementary; citations and raw text optional.
pub fn atom_priority(atom_type: &str) -> u8 {
    let t = atom_type.to_ascii_lowercase();
    if t.contains("claim") || t.contains("conclusion") || t.contains("decision") {
        1
    } else if t.contains("background") || t.contains("metadata") || t.contains("future") {
        3
    } else if t.contains("citation") || t.contains("raw") || t.contains("appendix") {
        4
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str, priority: u8, tokens: u64) -> Item {
        Item {
            name: name.into(),
            priority,
            tokens,
            parts: vec![],
            compressible: true,
            truncatable: false,
        }
    }

    /// Seed 000 §7.2: 95,000 tokens against 82,800.
    fn scenario() -> Vec<Item> {
        let mut scholar = item("scholar_output", 1, 45_000);
        // Claims and evidence (38,000) plus background and raw text (7,000).
        scholar.parts = vec![
            Part {
                priority: 1,
                tokens: 20_000,
            },
            Part {
                priority: 2,
                tokens: 18_000,
            },
            Part {
                priority: 3,
                tokens: 4_000,
            },
            Part {
                priority: 4,
                tokens: 3_000,
            },
        ];
        let mut sys = item("system_prompt", 1, 5_000);
        sys.compressible = false;
        let mut ins = item("task_instructions", 1, 2_000);
        ins.compressible = false;
        vec![
            scholar,
            item("validator_output", 1, 8_000),
            item("db_query_result", 2, 35_000),
            sys,
            ins,
        ]
    }

    #[test]
    fn the_7_2_scenario_is_brought_within_the_limit() {
        let t = trim("task_vault_001", &scenario(), 82_800);
        let r = &t.report;
        assert_eq!(r.total_tokens, 95_000);
        assert_eq!(r.context_limit, 82_800);
        assert_eq!(r.overflow, 12_200);
        assert_eq!(r.resolution.strategy, "priority_based_trimming");
        assert!(r.resolution.within_limit);
        assert!(r.resolution.final_tokens <= 82_800);
        let acts: Vec<(&str, &str, u64, u64)> = r
            .resolution
            .actions
            .iter()
            .map(|a| {
                (
                    a.data.as_str(),
                    a.action.as_str(),
                    a.original_tokens,
                    a.reduced_tokens,
                )
            })
            .collect();
        // The seed's two actions: the db result summarised, the scholar output filtered
        // to priority <= 2 (45,000 → 38,000).
        assert_eq!(acts.len(), 2, "{acts:?}");
        assert_eq!(acts[0].0, "db_query_result");
        assert_eq!(acts[0].1, "summarize");
        assert_eq!(acts[0].2, 35_000);
        assert!(acts[0].3 < 35_000 && acts[0].3 >= 7_000);
        assert_eq!(
            acts[1],
            ("scholar_output", "filter_by_priority", 45_000, 38_000)
        );
        assert_eq!(
            r.resolution.actions[1].filter.as_deref(),
            Some("priority <= 2")
        );
        // 38,000 + 8,000 + 5,000 + 2,000 critical, and the summary fills to 80 %.
        assert_eq!(r.resolution.final_tokens, 53_000 + acts[0].3);
        assert_eq!(acts[0].3, 66_240 - 53_000);
    }

    #[test]
    fn nothing_changes_within_the_limit() {
        let t = trim("t", &scenario(), 95_000);
        assert!(t.decisions.iter().all(|d| *d == Decision::Keep));
        assert_eq!(t.report.resolution.strategy, "none");
        assert_eq!(t.report.overflow, 0);
        assert_eq!(t.report.resolution.final_tokens, 95_000);
    }

    #[test]
    fn levels_3_and_4_are_dropped_at_90_and_95_percent() {
        let items = vec![
            item("core", 1, 80),
            item("background", 3, 15),
            item("appendix", 4, 10),
            item("extra", 2, 1),
        ];
        let t = trim("t", &items, 100);
        // core 80; extra: 81 is not below 80 % → summarised (to its floor, 0);
        // background: 95 is not below 90 % → omitted; appendix: 90 is below 95 % → kept.
        assert_eq!(t.decisions[3], Decision::Summarize { tokens: 0 });
        assert_eq!(t.decisions[1], Decision::Omit);
        assert_eq!(t.decisions[2], Decision::Keep);
        assert_eq!(t.report.resolution.final_tokens, 90);
        assert!(t.report.resolution.within_limit);
        let items = vec![
            item("core", 1, 50),
            item("background", 3, 30),
            item("appendix", 4, 30),
        ];
        let t = trim("t", &items, 100);
        assert_eq!(t.decisions[1], Decision::Keep, "80 < 90");
        assert_eq!(t.decisions[2], Decision::Omit, "110 >= 95");
    }

    #[test]
    fn critical_items_are_compressed_only_when_they_alone_overflow() {
        let mut sys = item("system_prompt", 1, 30);
        sys.compressible = false;
        let items = vec![sys, item("scholar_output", 1, 200)];
        let t = trim("t", &items, 100);
        assert_eq!(t.decisions[0], Decision::Keep);
        assert_eq!(t.decisions[1], Decision::Summarize { tokens: 70 });
        assert_eq!(t.report.resolution.actions[0].action, "compress");
        assert!(t.report.resolution.within_limit);
        // Nothing compressible left: the report says it does not fit.
        let mut big = item("system_prompt", 1, 150);
        big.compressible = false;
        let t = trim("t", &[big], 100);
        assert!(!t.report.resolution.within_limit);
    }

    #[test]
    fn a_truncatable_list_can_shrink_below_the_summary_floor() {
        let mut list = item("existing_assets", 2, 1_000);
        list.truncatable = true;
        let items = vec![item("core", 1, 70), list.clone(), item("notes", 2, 1_000)];
        let t = trim("t", &items, 100);
        // 80 % of 100 leaves 10 tokens for the list; a summary would keep 200.
        assert_eq!(t.decisions[1], Decision::Summarize { tokens: 10 });
        assert_eq!(t.decisions[2], Decision::Summarize { tokens: 200 });
        assert_eq!(t.report.resolution.actions[1].action, "truncate");
        assert_eq!(t.report.resolution.actions[0].action, "summarize");
    }

    #[test]
    fn what_cannot_be_compressed_takes_its_room_first() {
        // The instruction comes after a compressible critical input, yet the input is
        // compressed into the room the instruction leaves.
        let mut ins = item("task_instructions", 1, 60);
        ins.compressible = false;
        let items = vec![item("task_output:U", 1, 100), ins];
        let t = trim("t", &items, 100);
        assert_eq!(t.decisions[0], Decision::Summarize { tokens: 40 });
        assert_eq!(t.decisions[1], Decision::Keep);
        assert!(t.report.resolution.within_limit);
    }

    #[test]
    fn default_priorities_by_data_type() {
        assert_eq!(atom_priority("claim"), 1);
        assert_eq!(atom_priority("evidence"), 2);
        assert_eq!(atom_priority("methodology"), 2);
        assert_eq!(atom_priority("background"), 3);
        assert_eq!(atom_priority("metadata"), 3);
        assert_eq!(atom_priority("full_citation"), 4);
        assert_eq!(atom_priority("raw_text"), 4);
        assert_eq!(atom_priority("Math_Atom"), 2);
    }
}
