//! A message of a conversation (a role and content blocks, Claude compatible) and
//! constructors for the four kinds of content block.

use crate::base::protocol::messages::{ContentBlock, MessageType};
use crate::base::protocol::Extra;

/// One message: who speaks and what (the protocol's own type; `system` counts as a
/// user turn here).
pub use crate::base::protocol::messages::Message;

impl Message {
    /// A message of `role` with `content`.
    pub fn new(role: MessageType, content: Vec<ContentBlock>) -> Message {
        Message { role, content }
    }

    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Message {
        Message::new(MessageType::User, vec![text_block(text)])
    }

    /// An assistant message of `content`.
    pub fn assistant(content: Vec<ContentBlock>) -> Message {
        Message::new(MessageType::Assistant, content)
    }

    /// A user message of `content` (usually tool results).
    pub fn user(content: Vec<ContentBlock>) -> Message {
        Message::new(MessageType::User, content)
    }

    /// Whether this is an assistant turn.
    pub fn is_assistant(&self) -> bool {
        self.role == MessageType::Assistant
    }
}

/// A `text` block.
pub fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::text(text)
}

/// A `thinking` block.
pub fn thinking_block(thinking: impl Into<String>) -> ContentBlock {
    ContentBlock::thinking(thinking)
}

/// A `tool_use` block: call `id` of tool `name` with arguments `input`.
pub fn tool_use_block(
    id: impl Into<String>,
    name: impl Into<String>,
    input: Extra,
) -> ContentBlock {
    ContentBlock::tool_use(id, name, serde_json::Value::Object(input))
}

/// A `tool_result` block answering call `tool_use_id` with its observation.
pub fn tool_result_block(
    tool_use_id: impl Into<String>,
    text: impl Into<String>,
    is_error: bool,
) -> ContentBlock {
    ContentBlock::tool_result(tool_use_id, text, is_error)
}
