//! Deterministic extractive summaries of old rounds.
//!
//! Each round becomes a few indented lines in two versions:
//!
//! - *full*: the first sentence(s) of every thought, answer and observation (within
//!   [`EXTRACT_CHARS`] / [`OBSERVATION_CHARS`] characters), each tool call with the start
//!   of its input ([`INPUT_CHARS`]), and the references below, one line per call:
//!   `  NAME [CALL_ID] INPUT → OBSERVATION; Data stored in file: PATH`;
//! - *references*: for every tool observation its tool name, its call id (`tool_use_id`),
//!   whether it failed, and every `Data stored in file: PATH` reference verbatim; user
//!   text extracts are kept too: `  NAME [CALL_ID] (error); Data stored in file: PATH`.
//!
//! The summary message shows a round in full when that is smaller than the round, and
//! falls back to the references of the oldest rounds when it would exceed its budget.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::message::Message;
use crate::base::protocol::messages::{ContentBlock, ContentBlockType};
use crate::base::tokens::TokenCounter;

/// The marker of a stored tool observation (seed 003: `Data stored in file: PATH`).
pub const DATA_FILE_MARK: &str = "Data stored in file:";
/// Most characters of a thought, answer or user text extract.
pub const EXTRACT_CHARS: usize = 160;
/// Most characters of an observation extract.
pub const OBSERVATION_CHARS: usize = 120;
/// Most characters of a tool input extract.
pub const INPUT_CHARS: usize = 80;
/// Longest data-file reference kept (characters); longer ones are cut.
const MAX_REF_CHARS: usize = 1024;
/// Estimated tokens of a `Round N:` line, for the budget.
const ROUND_LINE_TOKENS: u64 = 5;

/// The summary of one round, in its two versions (without the `Round N:` line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundSummary {
    /// Extracts and references.
    pub full: String,
    /// References only (tool, call id, data files) and user text.
    pub references: String,
    /// Tokens of `full`.
    pub full_tokens: u64,
    /// Tokens of `references`.
    pub references_tokens: u64,
    /// Tokens of the round's own messages.
    pub source_tokens: u64,
}

/// The first sentences of `text` that fit in `max_chars` characters, white space
/// collapsed; when even the first sentence is longer, its first `max_chars` characters
/// and `…`. Sentences end where [`crate::base::text::summary::ends_sentence`] says.
pub fn extract(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    let mut space = false;
    let mut cut = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if n + usize::from(space) >= max_chars {
            cut = true;
            break;
        }
        if space {
            out.push(' ');
            n += 1;
            space = false;
        }
        out.push(c);
        n += 1;
    }
    if !cut {
        return out;
    }
    // The last sentence end in what fits. The text goes on after it, so a Latin mark
    // at the very end is no sentence end unless a blank follows.
    let mut end = None;
    let mut chars = out.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map_or('…', |&(_, n)| n);
        if crate::base::text::summary::ends_sentence(c, Some(next)) {
            end = Some(i + c.len_utf8());
        }
    }
    match end {
        Some(e) => out.truncate(e),
        None => out.push('…'),
    }
    out
}

/// Most facts (ids, numbers, paths) an observation's digest lists past its first and
/// last lines.
pub const OBSERVATION_FACTS: usize = 12;

/// What an old observation keeps when its round is summarised: its first line and its
/// last (each cut at [`OBSERVATION_CHARS`]), and the ids, numbers and paths of the lines
/// between (words with a digit, a `/`, a `_` or an inner `.`), at most
/// [`OBSERVATION_FACTS`], so the facts a later step may need are not lost to a sentence.
pub fn observation_digest(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return String::new();
    };
    let mut out = extract(first, OBSERVATION_CHARS);
    if lines.len() < 2 {
        return out;
    }
    let mut facts: Vec<&str> = Vec::new();
    for word in lines[1..lines.len() - 1].iter().flat_map(|l| {
        l.split(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '[' | ']' | '"' | '`')
        })
    }) {
        let w = word.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '|'));
        let factual = w.chars().any(|c| c.is_ascii_digit())
            || w.contains('/')
            || w.contains('_')
            || w.trim_start_matches('.').contains('.');
        if factual && w.chars().count() <= 80 && !facts.contains(&w) {
            facts.push(w);
            if facts.len() == OBSERVATION_FACTS {
                break;
            }
        }
    }
    if !facts.is_empty() {
        let _ = write!(out, " [{}]", facts.join(", "));
    }
    let _ = write!(out, " … {}", extract(last, OBSERVATION_CHARS));
    out
}

/// Every `Data stored in file: PATH` reference in `text`, verbatim to the end of its line
/// (trailing blanks removed).
pub fn data_file_refs(text: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(DATA_FILE_MARK) {
        let tail = &rest[i..];
        let line = tail.split(['\n', '\r']).next().unwrap_or(tail).trim_end();
        let line = match line.char_indices().nth(MAX_REF_CHARS) {
            Some((cut, _)) => &line[..cut],
            None => line,
        };
        refs.push(line.to_string());
        rest = &tail[DATA_FILE_MARK.len()..];
    }
    refs
}

/// The observation text of a `tool_result` block: its `text` and the text of its
/// Claude-style `content`.
fn result_text(block: &ContentBlock) -> String {
    let mut parts: Vec<&str> = block.text.iter().map(String::as_str).collect();
    match block.extra.get("content") {
        Some(serde_json::Value::String(s)) => parts.push(s),
        Some(serde_json::Value::Array(items)) => parts.extend(
            items
                .iter()
                .filter_map(|i| i.get("text").and_then(|t| t.as_str())),
        ),
        _ => {}
    }
    parts.join("\n")
}

/// The text with its data-file reference lines removed (they are kept verbatim apart).
fn without_refs(text: &str) -> String {
    text.lines()
        .filter(|l| !l.contains(DATA_FILE_MARK))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The data-file references of a tool result whose text is `text`: those in the text,
/// and the block's own `data_file` when the text does not name it.
fn result_files(b: &ContentBlock, text: &str) -> Vec<String> {
    let mut files = data_file_refs(text);
    if let Some(serde_json::Value::String(f)) = b.extra.get("data_file") {
        if !files.iter().any(|r| r.contains(f.as_str())) {
            files.push(format!("{DATA_FILE_MARK} {f}"));
        }
    }
    files
}

/// Summarises the messages of one round; `source_tokens` are the round's own tokens.
pub fn summarise_round(
    messages: &[Message],
    counter: &TokenCounter,
    source_tokens: u64,
) -> RoundSummary {
    let answered: Vec<&str> = messages
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| b.block_type == ContentBlockType::ToolResult)
        .filter_map(|b| b.tool_use_id.as_deref())
        .collect();
    let mut calls: HashMap<&str, (&str, String, bool)> = HashMap::new();
    let mut full = String::new();
    let mut refs = String::new();
    for m in messages {
        for b in &m.content {
            match b.block_type {
                ContentBlockType::Thinking => {
                    if let Some(t) = b.thinking.as_deref().or(b.text.as_deref()) {
                        let _ = writeln!(full, "  thought: {}", extract(t, EXTRACT_CHARS));
                    }
                }
                ContentBlockType::Text => {
                    let Some(t) = &b.text else { continue };
                    let line = if m.is_assistant() {
                        format!("  said: {}\n", extract(t, EXTRACT_CHARS))
                    } else {
                        let line = format!("  user: {}\n", extract(t, EXTRACT_CHARS));
                        refs.push_str(&line);
                        line
                    };
                    full.push_str(&line);
                }
                ContentBlockType::ToolUse => {
                    let id = b.id.as_deref().unwrap_or("?");
                    let name = b.name.as_deref().unwrap_or("?");
                    let input = b
                        .input
                        .as_ref()
                        .map(|i| serde_json::to_string(i).unwrap_or_default())
                        .unwrap_or_default();
                    // A short input is kept whole, in the references form too: what a
                    // call asked says which of its kind it was.
                    let whole = input.chars().count() <= INPUT_CHARS;
                    let input = if whole {
                        input
                    } else {
                        extract(&input, INPUT_CHARS)
                    };
                    if answered.contains(&id) {
                        calls.insert(id, (name, input, whole));
                    } else {
                        let _ = writeln!(full, "  {name} [{id}] {input} → (no result)");
                    }
                }
                ContentBlockType::ToolResult => {
                    let id = b.tool_use_id.as_deref().unwrap_or("?");
                    let (name, input, whole) = calls
                        .get(id)
                        .map_or(("?", "", false), |(n, i, w)| (*n, i.as_str(), *w));
                    let text = result_text(b);
                    let files: String = result_files(b, &text)
                        .iter()
                        .map(|f| format!("; {f}"))
                        .collect();
                    let error = if b.is_error { " (error)" } else { "" };
                    let short = if whole && !input.is_empty() {
                        format!(" {input}")
                    } else {
                        String::new()
                    };
                    let _ = writeln!(refs, "  {name} [{id}]{short}{error}{files}");
                    let obs = observation_digest(&without_refs(&text));
                    let _ = writeln!(full, "  {name} [{id}] {input} →{error} {obs}{files}");
                }
            }
        }
    }
    RoundSummary {
        full_tokens: counter.count(&full),
        references_tokens: counter.count(&refs),
        full,
        references: refs,
        source_tokens,
    }
}

/// The text of the summary message over `rounds` (rounds 1..=n). A round is shown in
/// full when that is smaller than the round itself, else by its references; then, while
/// the estimate is over `budget` tokens, the oldest rounds shown in full fall back to
/// their references. Returns the text and how many rounds are shown by references.
pub fn render(rounds: &[Arc<RoundSummary>], budget: u64) -> (String, usize) {
    let header = format!(
        "[Summary of rounds 1–{}, compressed to save context: first sentences of thoughts \
         and answers; each tool call with its id, the start of its observation and its data \
         files (read a file again for its content).]\n",
        rounds.len()
    );
    let mut full: Vec<bool> = rounds
        .iter()
        .map(|r| r.full_tokens + ROUND_LINE_TOKENS < r.source_tokens)
        .collect();
    let shown = |r: &RoundSummary, full: bool| {
        ROUND_LINE_TOKENS
            + if full {
                r.full_tokens
            } else {
                r.references_tokens
            }
    };
    let mut estimate = 40
        + rounds
            .iter()
            .zip(&full)
            .map(|(r, &f)| shown(r, f))
            .sum::<u64>();
    for (r, f) in rounds.iter().zip(full.iter_mut()) {
        if estimate <= budget {
            break;
        }
        if *f {
            estimate -= r.full_tokens.saturating_sub(r.references_tokens);
            *f = false;
        }
    }
    let mut text = header;
    for (i, (r, &f)) in rounds.iter().zip(&full).enumerate() {
        let _ = writeln!(text, "Round {}:", i + 1);
        text.push_str(if f { &r.full } else { &r.references });
    }
    (text, full.iter().filter(|f| !**f).count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observation_keeps_its_first_and_last_lines_and_the_facts_between() {
        let obs = "Found 3 files matching **/*.md.\n- docs/plans.md (412 lines)\n- notes/n0.md\n\
                   the record ATOM_SCHOLAR_07 has score 0.83\nSearch took 12 ms.";
        let d = observation_digest(obs);
        assert!(d.starts_with("Found 3 files matching **/*.md."), "{d}");
        assert!(d.ends_with("… Search took 12 ms."), "{d}");
        for fact in [
            "docs/plans.md",
            "412",
            "notes/n0.md",
            "ATOM_SCHOLAR_07",
            "0.83",
        ] {
            assert!(d.contains(fact), "{fact} in {d}");
        }
        assert_eq!(observation_digest("one line only."), "one line only.");
    }

    #[test]
    fn extracts_keep_whole_sentences_within_the_budget() {
        assert_eq!(extract("  One.  Two!\nThree?  ", 100), "One. Two! Three?");
        assert_eq!(extract("First one. Second one is long.", 15), "First one.");
        assert_eq!(
            extract("先读取文件。再汇总数据。最后画图。", 10),
            "先读取文件。"
        );
        assert_eq!(extract("no sentence end here at all", 10), "no sentenc…");
        assert_eq!(extract("v1.2 is out", 6), "v1.2 i…");
        assert_eq!(extract("", 10), "");
    }

    #[test]
    fn data_file_references_are_verbatim() {
        let t =
            "rows: 3\nData stored in file: tool_data/call 1.json  \r\nx Data stored in file: b.csv";
        assert_eq!(
            data_file_refs(t),
            [
                "Data stored in file: tool_data/call 1.json",
                "Data stored in file: b.csv"
            ]
        );
    }
}
