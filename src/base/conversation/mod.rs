//! Conversations of ReAct agents (seed 003): messages of content blocks with exact,
//! cached token counts, rounds, and compression of old rounds into an extractive summary
//! when the context window fills up.
//!
//! - [`count`]: what is counted in a message, and the fixed overhead per message;
//! - [`history`]: [`Conversation`] (the cache, the definition of a round, metrics);
//! - [`compress`]: [`ContextManager`] (the 80% threshold rule, what is kept);
//! - [`summary`]: the deterministic summary of old rounds;
//! - [`bench`]: a benchmark over a realistic ~200,000-token conversation.

pub mod bench;
pub mod compress;
pub mod count;
pub mod history;
pub mod message;
pub mod summary;

pub use bench::{bench_conversation, sample_conversation, BenchFigures};
pub use compress::{Compression, ContextManager, Pinned, KEEP_ROUNDS, THRESHOLD};
pub use count::{block_texts, block_tokens, message_tokens, MESSAGE_OVERHEAD};
pub use history::{Conversation, ConversationStats, Round};
pub use message::{text_block, thinking_block, tool_result_block, tool_use_block, Message};
pub use summary::{RoundSummary, DATA_FILE_MARK};
