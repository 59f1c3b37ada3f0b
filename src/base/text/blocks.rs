//! Shortening code and formulas without breaking them (seed 000 §5.3: code and formulas
//! are not compressed): the text is cut into its top-level blocks (a function, a class,
//! an `impl`, a formula's display block), whole blocks are kept in their order while
//! they fit, and each one left out is named by its first line, so a model knows what
//! exists and can ask for it.

use crate::base::tokens::TokenCounter;

/// One top-level block of a text: its lines, the first naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// The block's text, its line ends included.
    pub text: &'a str,
    /// Its first line that is not blank, trimmed.
    pub head: &'a str,
}

/// Whether `line` closes a block rather than opening one (`}`, `end`, `)` …).
fn closes(line: &str) -> bool {
    let t = line.trim_end();
    t.starts_with('}') || t.starts_with(')') || t.starts_with(']') || t == "end" || t == "fi"
}

/// Whether `line` starts at the left margin and can open a block: code or a formula
/// environment, not a closing brace, a decorator's continuation or a comment's middle.
fn opens(line: &str) -> bool {
    match line.chars().next() {
        None => false,
        Some(c) if c.is_whitespace() => false,
        _ => !closes(line),
    }
}

/// The top-level blocks of `text`: a new block starts at a line at the left margin that
/// follows a blank line (comments, decorators and attributes just above a definition stay
/// with it, as they are not separated by a blank line).
pub fn top_level_blocks(text: &str) -> Vec<Block<'_>> {
    let mut starts = vec![0];
    let mut offset = 0;
    let mut blank_before = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if blank_before && opens(bare) && offset > 0 {
            starts.push(offset);
        }
        blank_before = bare.trim().is_empty();
        offset += line.len();
    }
    starts.push(text.len());
    starts
        .windows(2)
        .map(|w| &text[w[0]..w[1]])
        .filter(|t| !t.trim().is_empty())
        .map(|t| Block {
            text: t,
            head: t
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or(""),
        })
        .collect()
}

/// `text` within `target` tokens as whole blocks: those that fit, in order, and a
/// closing list of the blocks left out by their first lines. The text itself when it fits.
pub fn whole_blocks(text: &str, target: u64, counter: &TokenCounter) -> String {
    if counter.count(text) <= target {
        return text.to_string();
    }
    let blocks = top_level_blocks(text);
    let tokens: Vec<u64> = blocks.iter().map(|b| counter.count(b.text)).collect();
    // The list of what is left out takes its room first: about 12 tokens a line.
    let room = target.saturating_sub((blocks.len() as u64).min(40) * 12);
    let mut used = 0u64;
    let mut kept: Vec<bool> = tokens
        .iter()
        .map(|&t| {
            let fits = used + t <= room;
            used += if fits { t } else { 0 };
            fits
        })
        .collect();
    // Blocks counted apart can count a little less than together: drop the last kept
    // block until the whole is within the target.
    loop {
        let out = render(&blocks, &tokens, &kept);
        match kept.iter().rposition(|k| *k) {
            Some(last) if counter.count(&out) > target => kept[last] = false,
            _ => return out,
        }
    }
}

/// The kept blocks in order, then the list of the others.
fn render(blocks: &[Block<'_>], tokens: &[u64], kept: &[bool]) -> String {
    let mut out = String::new();
    let mut left: Vec<(&str, u64)> = Vec::new();
    for ((b, &t), &k) in blocks.iter().zip(tokens).zip(kept) {
        if k {
            out.push_str(b.text);
        } else {
            left.push((b.head, t));
        }
    }
    if left.is_empty() {
        return out;
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let total: u64 = left.iter().map(|(_, t)| t).sum();
    out.push_str(&format!(
        "\n[{} blocks left out, {total} tokens; each whole, by its first line:]\n",
        left.len()
    ));
    for (head, t) in left.iter().take(40) {
        let head = crate::base::text::cut::cut_chars(head, 100);
        out.push_str(&format!("- {head} ({t} tokens)\n"));
    }
    if left.len() > 40 {
        out.push_str(&format!("- … and {} more\n", left.len() - 40));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: &str = "import os\n\n\n@cached\ndef load(path):\n    with open(path) as f:\n\n        return f.read()\n\n\nclass Planner:\n    def step(self, x):\n        return x + 1\n\n\ndef main():\n    print(load('a'))\n";

    #[test]
    fn python_splits_at_its_definitions_keeping_decorators_and_inner_blank_lines() {
        let heads: Vec<&str> = top_level_blocks(PY).iter().map(|b| b.head).collect();
        assert_eq!(
            heads,
            ["import os", "@cached", "class Planner:", "def main():"]
        );
        let load = &top_level_blocks(PY)[1];
        assert!(load.text.contains("return f.read()"), "{}", load.text);
    }

    #[test]
    fn rust_braces_close_blocks_and_do_not_open_them() {
        let rs = "use std::fs;\n\n/// Loads.\npub fn load() -> String {\n    let a = 1;\n\n    a.to_string()\n}\n\nimpl Planner {\n    fn step(&self) {}\n}\n";
        let heads: Vec<&str> = top_level_blocks(rs).iter().map(|b| b.head).collect();
        assert_eq!(heads, ["use std::fs;", "/// Loads.", "impl Planner {"]);
    }

    #[test]
    fn a_cut_keeps_whole_blocks_and_names_the_rest() {
        let c = TokenCounter::default();
        let body = "    x = compute(step, weight, scene)\n".repeat(60);
        let code: String = (0..6)
            .map(|i| format!("def f{i}(step):\n{body}    return x\n\n\n"))
            .collect();
        let cut = whole_blocks(&code, 1_000, &c);
        assert!(c.count(&cut) <= 1_000, "{}", c.count(&cut));
        // Every function kept is whole: its `return` follows its `def`.
        for b in top_level_blocks(&cut)
            .iter()
            .filter(|b| b.head.starts_with("def "))
        {
            assert!(b.text.contains("return x"), "{}", b.text);
        }
        assert!(cut.contains("blocks left out"), "{cut}");
        assert!(cut.contains("- def f5(step):"), "{cut}");
        assert_eq!(whole_blocks(PY, 10_000, &c), PY);
    }
}
