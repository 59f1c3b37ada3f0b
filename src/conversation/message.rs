//! A message of a conversation (a role and content blocks, Claude compatible) and
//! constructors for the four kinds of content block.

use serde::{Deserialize, Serialize};

use crate::protocol::messages::{ContentBlock, ContentBlockType, MessageType};
use crate::protocol::Extra;

/// One message: who speaks and what (seed 003 content blocks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `user` or `assistant` (a `system` message is treated as a user one).
    pub role: MessageType,
    /// Content blocks, in order.
    pub content: Vec<ContentBlock>,
}

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

/// An empty block of `block_type`.
fn block(block_type: ContentBlockType) -> ContentBlock {
    ContentBlock {
        block_type,
        text: None,
        thinking: None,
        id: None,
        name: None,
        input: None,
        tool_use_id: None,
        is_error: false,
        extra: Extra::new(),
    }
}

/// A `text` block.
pub fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock {
        text: Some(text.into()),
        ..block(ContentBlockType::Text)
    }
}

/// A `thinking` block.
pub fn thinking_block(thinking: impl Into<String>) -> ContentBlock {
    ContentBlock {
        thinking: Some(thinking.into()),
        ..block(ContentBlockType::Thinking)
    }
}

/// A `tool_use` block: call `id` of tool `name` with arguments `input`.
pub fn tool_use_block(
    id: impl Into<String>,
    name: impl Into<String>,
    input: Extra,
) -> ContentBlock {
    ContentBlock {
        id: Some(id.into()),
        name: Some(name.into()),
        input: Some(input),
        ..block(ContentBlockType::ToolUse)
    }
}

/// A `tool_result` block answering call `tool_use_id`, its observation in `text` (as in
/// the seed 003 example).
pub fn tool_result_block(
    tool_use_id: impl Into<String>,
    text: impl Into<String>,
    is_error: bool,
) -> ContentBlock {
    ContentBlock {
        tool_use_id: Some(tool_use_id.into()),
        text: Some(text.into()),
        is_error,
        ..block(ContentBlockType::ToolResult)
    }
}
