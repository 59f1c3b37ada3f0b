//! A conversation: the system prompt and the messages, each message's token count cached
//! (adding a message counts that message only), and its division into rounds.
//!
//! # Rounds
//!
//! A round is one model turn and what answers it: an assistant message and every
//! non-assistant message after it up to the next assistant message (normally the one
//! user message of `tool_result` blocks answering its tool calls; a follow-up user
//! message belongs to the round it follows). The messages before the first assistant
//! message are the *head*: the initial instruction (and, once compressed, the summary of
//! older rounds). The head belongs to no round and is always kept. Rounds are numbered
//! from 1 over the whole conversation, the summarised ones included.

use std::sync::Arc;

use serde::Serialize;

use super::count::{message_tokens, system_tokens};
use super::message::Message;
use super::summary::RoundSummary;
use crate::base::tokens::TokenCounter;

/// One round of the messages in context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// Number over the whole conversation (1-based, summarised rounds included).
    pub number: usize,
    /// Index of its assistant message.
    pub start: usize,
    /// Index after its last message.
    pub end: usize,
    /// Tokens of its messages.
    pub tokens: u64,
}

/// Metrics of a conversation, for events and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConversationStats {
    /// Rounds so far, summarised ones included.
    pub rounds: usize,
    /// Rounds still whole in context.
    pub rounds_in_context: usize,
    /// Rounds folded into the summary.
    pub rounds_summarised: usize,
    /// Compressions made.
    pub compressions: u32,
    /// Messages in context (the summary included).
    pub messages: usize,
    /// Tokens of the system prompt and every message in context.
    pub total_tokens: u64,
}

/// The summary message of a compressed conversation and what it covers.
#[derive(Debug, Clone)]
pub(crate) struct SummaryState {
    /// Index of the summary message (in the head).
    pub index: usize,
    /// Summaries of rounds 1..=n, in order.
    pub rounds: Vec<Arc<RoundSummary>>,
}

/// A system prompt and messages with cached token counts.
#[derive(Debug, Clone)]
pub struct Conversation {
    counter: TokenCounter,
    system: String,
    system_tokens: u64,
    messages: Vec<Message>,
    tokens: Vec<u64>,
    total: u64,
    pub(crate) summary: Option<SummaryState>,
    compressions: u32,
}

impl Conversation {
    /// An empty conversation with `system` as its system prompt, counted with `counter`.
    pub fn new(counter: TokenCounter, system: impl Into<String>) -> Conversation {
        let system = system.into();
        let system_tokens = system_tokens(&counter, &system);
        Conversation {
            counter,
            system,
            system_tokens,
            messages: Vec::new(),
            tokens: Vec::new(),
            total: system_tokens,
            summary: None,
            compressions: 0,
        }
    }

    /// Appends `message`, counting it (only it); returns its tokens.
    pub fn push(&mut self, message: Message) -> u64 {
        let n = message_tokens(&self.counter, &message);
        self.messages.push(message);
        self.tokens.push(n);
        self.total += n;
        n
    }

    /// The counter used.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &str {
        &self.system
    }

    /// Tokens of the system prompt (see [`super::count`]).
    pub fn system_tokens(&self) -> u64 {
        self.system_tokens
    }

    /// The messages in context, in order (the summary message included, in the head).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Tokens of each message, parallel to [`messages`](Self::messages).
    pub fn message_tokens(&self) -> &[u64] {
        &self.tokens
    }

    /// Tokens of the system prompt and every message (cached sum).
    pub fn total_tokens(&self) -> u64 {
        self.total
    }

    /// Counts every message again without the cache (for checks and benchmarks); equal
    /// to [`total_tokens`](Self::total_tokens).
    pub fn recount(&self) -> u64 {
        system_tokens(&self.counter, &self.system)
            + self
                .messages
                .iter()
                .map(|m| message_tokens(&self.counter, m))
                .sum::<u64>()
    }

    /// Index of the first assistant message: the head is `messages()[..head_len()]`.
    pub fn head_len(&self) -> usize {
        self.messages
            .iter()
            .position(Message::is_assistant)
            .unwrap_or(self.messages.len())
    }

    /// Rounds folded into the summary so far.
    pub fn rounds_summarised(&self) -> usize {
        self.summary.as_ref().map_or(0, |s| s.rounds.len())
    }

    /// The index of the summary message, once compressed.
    pub fn summary_index(&self) -> Option<usize> {
        self.summary.as_ref().map(|s| s.index)
    }

    /// The rounds in context, in order (see the module's definition).
    pub fn rounds(&self) -> Vec<Round> {
        let first = self.rounds_summarised() + 1;
        let mut rounds: Vec<Round> = Vec::new();
        for i in self.head_len()..self.messages.len() {
            if self.messages[i].is_assistant() {
                rounds.push(Round {
                    number: first + rounds.len(),
                    start: i,
                    end: i + 1,
                    tokens: self.tokens[i],
                });
            } else if let Some(r) = rounds.last_mut() {
                r.end = i + 1;
                r.tokens += self.tokens[i];
            }
        }
        rounds
    }

    /// Rounds, compressions and tokens.
    pub fn stats(&self) -> ConversationStats {
        let in_context = self.rounds().len();
        ConversationStats {
            rounds: self.rounds_summarised() + in_context,
            rounds_in_context: in_context,
            rounds_summarised: self.rounds_summarised(),
            compressions: self.compressions,
            messages: self.messages.len(),
            total_tokens: self.total,
        }
    }

    /// Replaces the messages of rounds before `keep_from` (a round's start index) by the
    /// summary message `summary` (of `summary_tokens`, as [`message_tokens`] counts it)
    /// covering `rounds`; the head stays, its old summary message replaced in place.
    pub(crate) fn fold(
        &mut self,
        keep_from: usize,
        summary: Message,
        summary_tokens: u64,
        rounds: Vec<Arc<RoundSummary>>,
    ) {
        let head = self.head_len().min(keep_from);
        let old_index = self.summary.as_ref().map(|s| s.index).filter(|&i| i < head);
        let old = std::mem::take(&mut self.messages)
            .into_iter()
            .zip(std::mem::take(&mut self.tokens));
        for (i, (m, n)) in old.enumerate() {
            let summarised = (head..keep_from).contains(&i);
            if !summarised && Some(i) != old_index {
                self.messages.push(m);
                self.tokens.push(n);
            }
        }
        // every head message before the old summary was kept, so its index still holds
        let index = old_index.unwrap_or(head);
        self.messages.insert(index, summary);
        self.tokens.insert(index, summary_tokens);
        self.total = self.system_tokens + self.tokens.iter().sum::<u64>();
        self.summary = Some(SummaryState { index, rounds });
        self.compressions += 1;
    }
}
