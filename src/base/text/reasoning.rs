//! Reasoning a model writes before its answer (`<think>…</think>`, as DeepSeek R1, Qwen
//! and many local models do, or `<thinking>`/`<reasoning>`): kept apart as thinking and
//! never read as the answer. Only a block the text opens with counts; a tag inside the
//! answer is the answer's.

/// The tags a reasoning block may be written with.
const TAGS: [&str; 3] = ["think", "thinking", "reasoning"];

/// `text` split into the reasoning it opens with (empty when none) and the answer after
/// it. A block never closed (the model stopped while it thought) is all reasoning.
pub fn split(text: &str) -> (&str, &str) {
    let start = text.trim_start();
    for tag in TAGS {
        let open = format!("<{tag}>");
        if let Some(rest) = start.strip_prefix(open.as_str()) {
            let close = format!("</{tag}>");
            return match rest.find(close.as_str()) {
                Some(end) => (rest[..end].trim(), rest[end + close.len()..].trim_start()),
                None => (rest.trim(), ""),
            };
        }
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
    }

    #[test]
    fn a_tag_inside_the_answer_is_the_answer() {
        let text = "{\"note\": \"<think>x</think>\"}";
        assert_eq!(split(text), ("", text));
        assert_eq!(answer("plain"), "plain");
    }
}
