//! Reasoning a model writes before its answer (`<think>…</think>`, as DeepSeek R1, Qwen
//! and many local models do, or `<thinking>`/`<reasoning>`): kept apart as thinking and
//! never read as the answer. Only a block the text opens with counts; a tag inside the
//! answer is the answer's.

/// The tags a reasoning block may be written with.
const TAGS: [&str; 3] = ["think", "thinking", "reasoning"];

/// `text` split into the reasoning it opens with (empty when none) and the answer after
/// it. A block never closed (the model stopped while it thought) is all reasoning.
pub fn split(text: &str) -> (&str, &str) {
    // Most answers open with no tag at all: nothing is built for them.
    let Some(opened) = text.trim_start().strip_prefix('<') else {
        return ("", text);
    };
    for tag in TAGS {
        let Some(rest) = opened.strip_prefix(tag).and_then(|r| r.strip_prefix('>')) else {
            continue;
        };
        // The first `</tag>`: `</` cannot overlap itself, so every one is looked at.
        let close = rest.match_indices("</").find_map(|(i, _)| {
            let after = rest[i + 2..].strip_prefix(tag)?.strip_prefix('>')?;
            Some((i, rest.len() - after.len()))
        });
        return match close {
            Some((end, after)) => (rest[..end].trim(), rest[after..].trim_start()),
            None => (rest.trim(), ""),
        };
    }
    ("", text)
}

/// The answer of `text`, its opening reasoning left out.
pub fn answer(text: &str) -> &str {
    split(text).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_block_is_reasoning_and_the_rest_the_answer() {
        let (t, a) = split("  <think>the user wants {\"x\": 1}?</think>\n{\"atoms\": []}");
        assert_eq!(t, "the user wants {\"x\": 1}?");
        assert_eq!(a, "{\"atoms\": []}");
        assert_eq!(split("<thinking>a</thinking>b"), ("a", "b"));
        assert_eq!(split("<think>never closed {"), ("never closed {", ""));
        // The close of another tag, or a partial one, does not end the block.
        assert_eq!(
            split("<think>a</thinking> b</thin</think>c"),
            ("a</thinking> b</thin", "c")
        );
        assert_eq!(split("<reasoning>r</reasoning>"), ("r", ""));
        assert_eq!(
            split("<thinker>x</thinker>y"),
            ("", "<thinker>x</thinker>y")
        );
    }

    #[test]
    fn a_tag_inside_the_answer_is_the_answer() {
        let text = "{\"note\": \"<think>x</think>\"}";
        assert_eq!(split(text), ("", text));
        assert_eq!(answer("plain"), "plain");
    }
}
