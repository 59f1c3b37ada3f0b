//! Built-in summaries (seed 000 §4.2): `extractive` (the highest-scoring sentences, in
//! their order), `key_points` (the lead sentence of each paragraph or bullet) and
//! `truncate`; each to a token budget counted with the run's counter. Atom lists are
//! summarised field by field: identifying fields kept, `content` summarised.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::base::tokens::TokenCounter;

/// A summary strategy of §4.2 (`abstractive` needs a model and is done by the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Key sentences.
    Extractive,
    /// A model writes the summary.
    Abstractive,
    /// Lead sentences of paragraphs and bullets.
    KeyPoints,
    /// The beginning, cut.
    Truncate,
}

impl Strategy {
    /// Its name in plans and reports (`key_points`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Extractive => "extractive",
            Strategy::Abstractive => "abstractive",
            Strategy::KeyPoints => "key_points",
            Strategy::Truncate => "truncate",
        }
    }
}

/// Whether `c` ends a sentence, `next` being the character after it (`None`: the text
/// ends there): a CJK end mark always, a Latin one before a blank or the end. The one
/// rule of sentence ends, for summaries and for cuts alike.
pub fn ends_sentence(c: char, next: Option<char>) -> bool {
    match c {
        '。' | '！' | '？' | '；' => true,
        '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
        _ => false,
    }
}

/// Splits text into sentences (at the ends [`ends_sentence`] knows, and line ends).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = if c == '\n' {
            Some(i)
        } else if ends_sentence(c, chars.peek().map(|&(_, n)| n)) {
            Some(i + c.len_utf8())
        } else {
            None
        };
        if let Some(e) = end {
            let s = text[start..e].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = if c == '\n' { i + 1 } else { e };
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 3 || w.chars().any(|c| c as u32 >= 0x3400))
        .map(str::to_lowercase)
}

/// The highest-scoring sentences (term frequency, a bonus for the lead sentence) kept in
/// their original order, as many as fit `target` tokens.
pub fn extractive(text: &str, target: u64, counter: &TokenCounter) -> String {
    if counter.count(text) <= target {
        return text.to_string();
    }
    let sents = sentences(text);
    let mut tf: HashMap<String, f64> = HashMap::new();
    for s in &sents {
        for w in words(s) {
            *tf.entry(w).or_insert(0.0) += 1.0;
        }
    }
    let mut scored: Vec<(usize, f64)> = sents
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let ws: Vec<String> = words(s).collect();
            let score = ws
                .iter()
                .map(|w| tf.get(w).copied().unwrap_or(0.0))
                .sum::<f64>()
                / (ws.len() as f64 + 1.0).sqrt();
            (i, score + if i == 0 { 1.0 } else { 0.0 })
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    pick(&sents, scored.into_iter().map(|(i, _)| i), target, counter)
}

/// The first sentence of each paragraph or bullet line, as many as fit `target`.
pub fn key_points(text: &str, target: u64, counter: &TokenCounter) -> String {
    if counter.count(text) <= target {
        return text.to_string();
    }
    let leads: Vec<&str> = text
        .split('\n')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| sentences(p).into_iter().next())
        .collect();
    pick(&leads, 0..leads.len(), target, counter)
}

/// Chooses sentences in `order` while they fit; returns them in text order.
fn pick(
    sents: &[&str],
    order: impl Iterator<Item = usize>,
    target: u64,
    counter: &TokenCounter,
) -> String {
    let mut chosen = Vec::new();
    let mut used = 0;
    for i in order {
        let t = counter.count(sents[i]) + 1;
        if used + t > target {
            continue;
        }
        used += t;
        chosen.push(i);
    }
    chosen.sort_unstable();
    let out: Vec<&str> = chosen.into_iter().map(|i| sents[i]).collect();
    if out.is_empty() {
        return truncate(sents.first().copied().unwrap_or(""), target, counter);
    }
    out.join(" ")
}

/// The longest prefix (on a character boundary) within `target` tokens, with `…` when cut.
pub fn truncate(text: &str, target: u64, counter: &TokenCounter) -> String {
    if counter.count(text) <= target {
        return text.to_string();
    }
    if target == 0 {
        return String::new();
    }
    // Binary search over character boundaries.
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if counter.count(&text[..bounds[mid]]) < target {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    format!("{}…", &text[..bounds[lo]])
}

/// Summarises text with a strategy (abstractive falls back to extractive here).
pub fn summarize_text(text: &str, target: u64, s: Strategy, counter: &TokenCounter) -> String {
    match s {
        Strategy::Extractive | Strategy::Abstractive => extractive(text, target, counter),
        Strategy::KeyPoints => key_points(text, target, counter),
        Strategy::Truncate => truncate(text, target, counter),
    }
}

/// Fields kept whole in an atom summary (§4.2 `preserve_fields`).
pub const PRESERVE: [&str; 5] = ["atom_id", "asset_id", "atom_type", "confidence", "category"];

/// Which fields of an atom a summary keeps whole and which it summarises (§4.2
/// `preserve_fields`, `summarize_fields`); the others are left out and named.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryFields {
    /// Kept whole.
    pub preserve: Vec<String>,
    /// Each summarised into `FIELD_summary`.
    pub summarize: Vec<String>,
}

impl Default for SummaryFields {
    fn default() -> SummaryFields {
        SummaryFields {
            preserve: PRESERVE.iter().map(|s| s.to_string()).collect(),
            summarize: vec!["content".into()],
        }
    }
}

/// Text of a JSON value for summarising: strings joined, keys dropped.
pub fn text_of(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(s);
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            Value::Number(n) => {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&n.to_string());
            }
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// The §4.2 summary of a list of atoms within `target` tokens: each atom keeps its
/// identifying fields and gets a `content_summary`; when even that does not fit, the
/// last atoms are left out (`summarized_atoms` says how many made it).
pub fn summarize_atoms(atoms: &[Value], target: u64, s: Strategy, counter: &TokenCounter) -> Value {
    summarize_atoms_with(atoms, target, s, &SummaryFields::default(), counter)
}

/// [`summarize_atoms`] keeping and summarising the fields `fields` names.
pub fn summarize_atoms_with(
    atoms: &[Value],
    target: u64,
    s: Strategy,
    fields: &SummaryFields,
    counter: &TokenCounter,
) -> Value {
    let n = atoms.len().max(1) as u64;
    let per_atom = (target / n).saturating_sub(24).max(8);
    let per_field = (per_atom / fields.summarize.len().max(1) as u64).max(8);
    let mut omitted: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut used = 20u64;
    for a in atoms {
        let mut m = Map::new();
        if let Value::Object(o) = a {
            for (k, v) in o {
                if fields.preserve.contains(k) {
                    m.insert(k.clone(), v.clone());
                } else if !fields.summarize.contains(k) && !omitted.contains(k) {
                    omitted.push(k.clone());
                }
            }
            for f in &fields.summarize {
                // `content` is summarised even when empty: every atom has its summary.
                let Some(text) = o
                    .get(f)
                    .map(text_of)
                    .or_else(|| (f == "content").then(String::new))
                else {
                    continue;
                };
                m.insert(
                    format!("{f}_summary"),
                    Value::String(summarize_text(&text, per_field, s, counter)),
                );
            }
        } else {
            m.insert(
                "content_summary".into(),
                Value::String(summarize_text(&text_of(a), per_atom, s, counter)),
            );
        }
        let v = Value::Object(m);
        let t = counter.count(&v.to_string());
        if used + t > target && !out.is_empty() {
            break;
        }
        used += t;
        out.push(v);
    }
    omitted.sort();
    json!({
        "atoms_summary": out,
        "total_atoms": atoms.len(),
        "summarized_atoms": out.len(),
        "omitted_fields": omitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Diffusion planners denoise trajectories step by step. \
The reverse process removes a little noise at each step, conditioned on the scene. \
Pedestrians step out between parked cars with no line of sight.\n\
Reaction time budgets of 150 ms are typical. The planner runs at 18 ms per plan.\n\
扩散模型的去噪公式很重要。每一步都去掉一点噪声。";

    #[test]
    fn sentences_split_on_latin_and_cjk_marks() {
        let s = sentences(TEXT);
        assert_eq!(s.len(), 7, "{s:?}");
        assert_eq!(s[5], "扩散模型的去噪公式很重要。");
        assert_eq!(sentences("v1.2 is out. Next"), vec!["v1.2 is out.", "Next"]);
    }

    #[test]
    fn one_rule_ends_a_sentence() {
        for (c, next, ends) in [
            ('。', Some('下'), true),
            ('；', None, true),
            ('.', Some(' '), true),
            ('.', None, true),
            ('.', Some('2'), false),
            ('?', Some('\n'), true),
            ('a', None, false),
        ] {
            assert_eq!(ends_sentence(c, next), ends, "{c:?} before {next:?}");
        }
        // The conversation's cut keeps whole sentences by the same rule.
        let cut = crate::base::conversation::summary::extract("一句。二句；三句还没有完", 8);
        assert_eq!(cut, "一句。二句；");
    }

    #[test]
    fn every_strategy_fits_its_budget() {
        let c = TokenCounter::default();
        let full = c.count(TEXT);
        for target in [5, 12, 20, 40] {
            for s in [
                Strategy::Extractive,
                Strategy::KeyPoints,
                Strategy::Truncate,
            ] {
                let out = summarize_text(TEXT, target, s, &c);
                assert!(c.count(&out) <= target + 1, "{s:?} {target}: {out}");
                assert!(!out.is_empty());
            }
        }
        assert_eq!(extractive(TEXT, full, &c), TEXT, "fits: unchanged");
        let k = key_points(TEXT, 30, &c);
        assert!(k.starts_with("Diffusion planners"), "{k}");
    }

    #[test]
    fn truncate_cuts_on_char_boundaries() {
        let c = TokenCounter::default();
        let t = truncate("去噪公式去噪公式去噪公式去噪公式", 4, &c);
        assert!(t.ends_with('…'));
        assert!(c.count(&t) <= 5);
        assert_eq!(truncate("abc", 0, &c), "");
    }

    #[test]
    fn atoms_keep_their_identity_and_lose_detail() {
        let c = TokenCounter::default();
        let atoms: Vec<Value> = (0..10)
            .map(|i| {
                json!({"asset_id": format!("A{i}"), "atom_type": "claim", "confidence": 0.9,
                       "content": {"text": TEXT}, "metadata": {"x": 1}, "evidence": ["e1"]})
            })
            .collect();
        let s = summarize_atoms(&atoms, 400, Strategy::Extractive, &c);
        assert!(
            c.count(&s.to_string()) <= 400 + 40,
            "{}",
            c.count(&s.to_string())
        );
        assert_eq!(s["total_atoms"], 10);
        assert_eq!(s["omitted_fields"], json!(["evidence", "metadata"]));
        let first = &s["atoms_summary"][0];
        assert_eq!(first["asset_id"], "A0");
        assert_eq!(first["atom_type"], "claim");
        assert!(first["content_summary"]
            .as_str()
            .is_some_and(|t| !t.is_empty()));
    }
}
