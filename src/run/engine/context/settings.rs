//! What a task's `transfer_config` sets for the payloads of its inputs: the summary
//! strategy, the cap on an input's tokens, the priority levels passed and the preview
//! of a reference.

use serde_json::Value;

use super::payload::{atoms_of, retain_atoms_by_priority};
use crate::base::text::summary::{Strategy, SummaryFields};

/// What a task's `transfer_config` sets for its inputs' payloads.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferSettings {
    /// Atoms shown inline in reference mode (`inline_preview_count`, 3).
    pub preview_count: usize,
    /// How summaries are made (`summary_strategy`; an abstractive one starts extractive
    /// and is replaced by the provider's text).
    pub strategy: Strategy,
    /// Most tokens of one input's payload (`max_tokens`): a summary is made within it,
    /// and an input that would go whole over it is summarised instead.
    pub max_tokens: Option<u64>,
    /// Only the atoms of these priority levels are passed (`priority_filter`, 1 claims …
    /// 4 citations and raw text).
    pub priority_filter: Option<Vec<u8>>,
    /// The summary's size in tokens (`summary_config.max_length`); by its ratio when
    /// not given.
    pub summary_length: Option<u64>,
    /// The summary's share of the input (`summary_config.summary_ratio`, 0.3).
    pub summary_ratio: f64,
    /// The atoms' fields a summary keeps whole and summarises
    /// (`summary_config.preserve_fields`, `summarize_fields`).
    pub fields: SummaryFields,
    /// Data under this many tokens goes whole (a fifth of the receiving agent's window,
    /// set by the engine; 0 leaves the size bands alone).
    pub full_under: u64,
}

impl Default for TransferSettings {
    fn default() -> TransferSettings {
        TransferSettings {
            preview_count: 3,
            strategy: Strategy::Extractive,
            max_tokens: None,
            priority_filter: None,
            summary_length: None,
            summary_ratio: 0.3,
            fields: SummaryFields::default(),
            full_under: 0,
        }
    }
}

impl TransferSettings {
    /// The settings of a task's `transfer_config` (the defaults where it has none).
    pub fn of(config: Option<&crate::base::protocol::context::TransferConfig>) -> TransferSettings {
        let Some(c) = config else {
            return TransferSettings::default();
        };
        let strategy = match c.extra.get("summary_strategy").and_then(Value::as_str) {
            Some("key_points") => Strategy::KeyPoints,
            Some("truncate") => Strategy::Truncate,
            Some("abstractive") => Strategy::Abstractive,
            _ => Strategy::Extractive,
        };
        let summary = c.extra.get("summary_config");
        let given = |k: &str| summary.and_then(|s| s.get(k));
        let names = |k: &str| -> Option<Vec<String>> {
            given(k)?
                .as_array()?
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        let defaults = SummaryFields::default();
        TransferSettings {
            preview_count: c.inline_preview_count.map_or(3, |n| n as usize),
            strategy,
            max_tokens: c.max_tokens,
            priority_filter: c.priority_filter.clone(),
            summary_length: given("max_length").and_then(Value::as_u64),
            summary_ratio: given("summary_ratio")
                .and_then(Value::as_f64)
                .unwrap_or(0.3),
            fields: SummaryFields {
                preserve: names("preserve_fields").unwrap_or(defaults.preserve),
                summarize: names("summarize_fields").unwrap_or(defaults.summarize),
            },
            full_under: 0,
        }
    }

    /// The tokens of a summary of an input of `tokens`: the length given, else its
    /// share of the input within 200 and 2,000 (or a tenth of the input, when more),
    /// and never over the task's cap.
    pub(super) fn summary_target(&self, tokens: u64) -> u64 {
        let target = self.summary_length.unwrap_or_else(|| {
            ((tokens as f64 * self.summary_ratio) as u64)
                .clamp(200.min(tokens), 2_000.max((tokens as f64 * 0.1) as u64))
        });
        self.max_tokens.map_or(target, |m| target.min(m))
    }

    /// `data` with only the atoms of the filter's levels, when a filter is set and the
    /// data holds atoms.
    pub(super) fn filtered<'a>(&self, data: &'a Value) -> std::borrow::Cow<'a, Value> {
        let (Some(levels), Some(_)) = (&self.priority_filter, atoms_of(data)) else {
            return std::borrow::Cow::Borrowed(data);
        };
        let mut out = data.clone();
        retain_atoms_by_priority(&mut out, |p| levels.contains(&p));
        std::borrow::Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::payload::count;
    use super::super::plan::tests::{atoms, input};
    use super::super::plan::{plan, Input};
    use super::super::select::{DataType, Rule};
    use super::*;
    use crate::base::protocol::context::TransferMode;
    use crate::base::tokens::TokenCounter;
    use serde_json::json;

    /// A text of paragraphs whose sentences differ, summarised by the task's strategy.
    fn paragraphs() -> Input {
        let text: String = (0..40)
            .map(|i| {
                format!(
                    "Paragraph {i} opens on its own point about step {i}. It goes on with detail number {} on the schedule. The noise level at step {i} is lower than before.\n\n",
                    i * 7
                )
            })
            .collect();
        Input {
            data_type: DataType::Text,
            configured: Some(TransferMode::Summary),
            ..input("file:notes.md", Value::String(text), 2)
        }
    }

    /// The context the Critic (a 100K window) is given for `inputs` under `settings`.
    fn critic(inputs: &[Input], settings: &TransferSettings) -> super::super::plan::Planned {
        let c = TokenCounter::default();
        plan(
            "t",
            "Strategic_Critic",
            82_800,
            500,
            200,
            inputs,
            settings,
            &c,
        )
    }

    fn summary_of(settings: &TransferSettings) -> Value {
        let p = critic(&[paragraphs()], settings);
        assert_eq!(
            p.payloads[0]["transfer_mode"], "summary",
            "{:?}",
            p.payloads
        );
        p.payloads[0].clone()
    }

    #[test]
    fn each_summary_strategy_makes_its_own_summary_and_says_which() {
        let with = |strategy| TransferSettings {
            strategy,
            ..TransferSettings::default()
        };
        let extractive = summary_of(&with(Strategy::Extractive));
        let key_points = summary_of(&with(Strategy::KeyPoints));
        let truncate = summary_of(&with(Strategy::Truncate));
        assert_ne!(extractive["data"], key_points["data"]);
        assert_ne!(extractive["data"], truncate["data"]);
        assert_ne!(key_points["data"], truncate["data"]);
        assert_eq!(key_points["summary_config"]["strategy"], "key_points");
        assert_eq!(truncate["summary_config"]["strategy"], "truncate");
        // Truncation keeps the text's start.
        let t = truncate["data"].as_str().unwrap_or_default();
        assert!(t.starts_with("Paragraph 0 opens"), "{t}");
    }

    #[test]
    fn max_tokens_caps_a_summary_and_summarises_what_would_go_whole() {
        let c = TokenCounter::default();
        let capped = TransferSettings {
            max_tokens: Some(300),
            ..TransferSettings::default()
        };
        let s = summary_of(&capped);
        assert_eq!(s["summary_config"]["max_length"], 300);
        assert!(count(&s["data"], &c) <= 330, "{}", count(&s["data"], &c));
        // Small enough to go whole, but over the cap: summarised within it.
        let data = atoms(6, 20);
        let whole = critic(&[input("a", data.clone(), 1)], &TransferSettings::default());
        assert_eq!(whole.inputs[0].mode, TransferMode::Full);
        let small = TransferSettings {
            max_tokens: Some(150),
            ..TransferSettings::default()
        };
        let p = critic(&[input("a", data, 1)], &small);
        assert_eq!(p.inputs[0].mode, TransferMode::Summary);
        assert_eq!(p.inputs[0].rule, Rule::Configured);
        assert_eq!(p.payloads[0]["summary_config"]["max_length"], 150);
    }

    #[test]
    fn a_priority_filter_keeps_only_its_levels() {
        // 12 atoms: 9 claims (priority 1), 3 background (priority 3).
        let only_claims = TransferSettings {
            priority_filter: Some(vec![1]),
            ..TransferSettings::default()
        };
        let p = critic(&[input("a", atoms(12, 2), 1)], &only_claims);
        let sent = p.payloads[0]["data"]["atoms"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(sent, 9, "{}", p.payloads[0]);
        let all = critic(&[input("a", atoms(12, 2), 1)], &TransferSettings::default());
        assert_eq!(
            all.payloads[0]["data"]["atoms"]
                .as_array()
                .map_or(0, Vec::len),
            12
        );
    }

    #[test]
    fn settings_are_read_from_the_task_s_transfer_config() {
        let config: crate::base::protocol::context::TransferConfig =
            serde_json::from_value(json!({
                "max_tokens": 300, "priority_filter": [1, 2], "inline_preview_count": 5,
                "summary_strategy": "key_points"
            }))
            .expect("config");
        let s = TransferSettings::of(Some(&config));
        assert_eq!(
            s,
            TransferSettings {
                preview_count: 5,
                strategy: Strategy::KeyPoints,
                max_tokens: Some(300),
                priority_filter: Some(vec![1, 2]),
                ..TransferSettings::default()
            }
        );
        assert_eq!(TransferSettings::of(None), TransferSettings::default());
    }

    /// A plan's `summary_config` is used as given (it was replaced by defaults: 1,326
    /// tokens, four fields, 0.3): the length, the one field kept, the ratio.
    #[test]
    fn a_summary_config_is_used_as_given() {
        let config: crate::base::protocol::context::TransferConfig =
            serde_json::from_value(json!({"summary_config": {
                "max_length": 300, "preserve_fields": ["asset_id"], "summary_ratio": 0.1
            }}))
            .expect("config");
        let settings = TransferSettings::of(Some(&config));
        let c = TokenCounter::default();
        let summarised = Input {
            configured: Some(TransferMode::Summary),
            ..input("a", atoms(12, 40), 1)
        };
        let p = critic(&[summarised], &settings);
        let sent = &p.payloads[0];
        assert_eq!(sent["transfer_mode"], "summary", "{sent}");
        let cfg = &sent["summary_config"];
        assert_eq!(cfg["max_length"], 300, "{cfg}");
        assert_eq!(cfg["preserve_fields"], json!(["asset_id"]), "{cfg}");
        assert_eq!(cfg["summary_ratio"], 0.1, "{cfg}");
        let first = &sent["data"]["atoms_summary"][0];
        assert!(first.get("asset_id").is_some(), "{first}");
        assert!(first.get("atom_type").is_none(), "not kept: {first}");
        assert!(first.get("content_summary").is_some(), "{first}");
        assert!(
            count(&sent["data"], &c) <= 330,
            "{}",
            count(&sent["data"], &c)
        );
        // Without a length, the ratio sizes it (0.1 of the input, at least 200).
        let ratio_only: crate::base::protocol::context::TransferConfig =
            serde_json::from_value(json!({"summary_config": {"summary_ratio": 0.1}}))
                .expect("config");
        let s = TransferSettings::of(Some(&ratio_only));
        assert_eq!(s.summary_target(10_000), 1_000);
        assert_eq!(s.summary_target(1_000), 200);
        assert_eq!(TransferSettings::default().summary_target(3_000), 900);
    }
}
