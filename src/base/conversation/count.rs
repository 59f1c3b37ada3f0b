//! Exact token counts of messages.
//!
//! The tokens of a message are [`MESSAGE_OVERHEAD`] plus, for every content block, the
//! sum of [`TokenCounter::count`] over the block's texts ([`block_texts`]), each text
//! counted on its own:
//!
//! - `text` block: `text`;
//! - `thinking` block: `thinking`;
//! - `tool_use` block: `id`, `name`, and `input` as compact JSON;
//! - `tool_result` block: `tool_use_id`, `text`, and the Claude-style `content` (a string
//!   as it is; a list: the `text` of each text item, other items as compact JSON).
//!
//! Whatever of these fields a block carries is counted, whatever its type, so a malformed
//! block is never under-counted. Call ids are counted because the model reads them.
//! The system prompt counts as one message (its text plus the overhead; nothing when it
//! is empty).

use std::borrow::Cow;

use serde_json::Value;

use super::message::Message;
use crate::base::protocol::messages::ContentBlock;
use crate::base::tokens::TokenCounter;

/// Fixed tokens per message: the role and the delimiters that frame a message in the
/// chat formats (OpenAI's `tokens_per_message` is 3: `<|start|>role<|message|>…<|end|>`).
pub const MESSAGE_OVERHEAD: u64 = 3;

/// The texts of a block that are counted, in order (see the module's list).
pub fn block_texts(block: &ContentBlock) -> Vec<Cow<'_, str>> {
    let mut out: Vec<Cow<'_, str>> = Vec::new();
    for s in [&block.id, &block.name, &block.tool_use_id]
        .into_iter()
        .flatten()
    {
        out.push(Cow::Borrowed(s));
    }
    if let Some(t) = &block.thinking {
        out.push(Cow::Borrowed(t));
    }
    if let Some(t) = &block.text {
        out.push(Cow::Borrowed(t));
    }
    if let Some(input) = &block.input {
        out.push(Cow::Owned(serde_json::to_string(input).unwrap_or_default()));
    }
    if let Some(content) = block.extra.get("content") {
        content_texts(content, &mut out);
    }
    out
}

/// The texts of a Claude `tool_result` `content` value.
fn content_texts<'a>(content: &'a Value, out: &mut Vec<Cow<'a, str>>) {
    match content {
        Value::String(s) => out.push(Cow::Borrowed(s)),
        Value::Array(items) => {
            for item in items {
                match item.get("text") {
                    Some(Value::String(s)) => out.push(Cow::Borrowed(s)),
                    _ => out.push(Cow::Owned(item.to_string())),
                }
            }
        }
        Value::Null => {}
        other => out.push(Cow::Owned(other.to_string())),
    }
}

/// Tokens of one block: the sum of the counts of its texts.
pub fn block_tokens(counter: &TokenCounter, block: &ContentBlock) -> u64 {
    block_texts(block).iter().map(|t| counter.count(t)).sum()
}

/// Tokens of one message: [`MESSAGE_OVERHEAD`] plus its blocks.
pub fn message_tokens(counter: &TokenCounter, message: &Message) -> u64 {
    MESSAGE_OVERHEAD
        + message
            .content
            .iter()
            .map(|b| block_tokens(counter, b))
            .sum::<u64>()
}

/// Tokens of a system prompt: its text plus [`MESSAGE_OVERHEAD`]; 0 when empty.
pub fn system_tokens(counter: &TokenCounter, system: &str) -> u64 {
    if system.is_empty() {
        0
    } else {
        MESSAGE_OVERHEAD + counter.count(system)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::conversation::message::{text_block, tool_result_block, tool_use_block};

    #[test]
    fn tool_blocks_count_ids_names_json_and_content() {
        let c = TokenCounter::default();
        let mut input = crate::base::protocol::Extra::new();
        input.insert("pattern".into(), Value::String("**/*.py".into()));
        let b = tool_use_block("toolu_1", "file_search", input);
        let texts = block_texts(&b);
        assert_eq!(
            texts,
            ["toolu_1", "file_search", "{\"pattern\":\"**/*.py\"}"]
        );
        // The seed's own shape: the observation in `text`, beside a Claude `content`.
        let mut r = tool_result_block("toolu_1", "", false);
        r.text = Some("found".into());
        r.extra.insert(
            "content".into(),
            serde_json::json!([{"type": "text", "text": "more"}, {"type": "image", "source": {}}]),
        );
        let texts = block_texts(&r);
        assert_eq!(texts[..3], ["toolu_1", "found", "more"]);
        assert!(texts[3].contains("image"));
        let m = Message::user(vec![text_block("hi"), r]);
        let want = MESSAGE_OVERHEAD
            + c.count("hi")
            + block_texts(&m.content[1])
                .iter()
                .map(|t| c.count(t))
                .sum::<u64>();
        assert_eq!(message_tokens(&c, &m), want);
        assert_eq!(system_tokens(&c, ""), 0);
    }
}
