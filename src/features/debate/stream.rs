//! The text of a debate turn while the agent writes it, logged as `chunk` events so the
//! Debate screen shows it as it streams: whole words only, at most one event every
//! [`FLUSH_MS`], and only text that passes the built-in content check (no terminal
//! controls, no script, nothing shaped like a credential, not the provider's key). Text
//! that fails stops the stream for the rest of the try; a session whose profile names a
//! moderation endpoint streams no text at all (what a person reads passes that check
//! first), only the time the turn takes.

use std::time::{Duration, Instant};

use super::content::text_problems;
use super::shared::Session;
use crate::data::provider::ChunkSink;
use crate::model::event::{Chunk, EngineEvent};
use crate::run::engine::emit::Scope;

/// Shortest time between two logged pieces of a stream, in ms.
pub const FLUSH_MS: u64 = 100;

/// Collects one try's streamed text and logs it as it goes.
pub struct TurnStream<'a> {
    s: &'a Session,
    scope: &'a Scope,
    /// The whole text so far.
    pub text: String,
    logged: usize,
    last: Instant,
    live: bool,
}

impl<'a> TurnStream<'a> {
    /// A stream for one try, logged under `scope`.
    pub fn new(s: &'a Session, scope: &'a Scope) -> TurnStream<'a> {
        TurnStream {
            s,
            scope,
            text: String::new(),
            logged: 0,
            last: Instant::now(),
            live: s.moderator.is_none(),
        }
    }

    /// Logs the text not logged yet: up to its last whitespace, or all of it at `end`.
    pub fn flush(&mut self, end: bool) {
        if !self.live {
            return;
        }
        let upto = if end {
            self.text.len()
        } else {
            self.text
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map_or(0, |(i, c)| i + c.len_utf8())
        };
        if upto <= self.logged {
            return;
        }
        let shown = &self.text[..upto];
        let leaks = self
            .s
            .provider
            .secret_redactor()
            .is_some_and(|r| r.found_in(shown).is_some());
        if leaks || !text_problems(shown).is_empty() {
            self.live = false;
            return;
        }
        let piece = self.text[self.logged..upto].to_string();
        self.logged = upto;
        self.last = Instant::now();
        if let Err(e) = self
            .s
            .emitter
            .emit(self.scope, EngineEvent::Chunk(Chunk { text: piece }))
        {
            tracing::error!("cannot log a debate chunk: {e}");
        }
    }

    /// Flushes what is left and hands back the whole text.
    pub fn finish(mut self) -> String {
        self.flush(true);
        self.text
    }
}

impl ChunkSink for TurnStream<'_> {
    fn chunk(&mut self, text: &str) {
        self.text.push_str(text);
        if self.last.elapsed() >= Duration::from_millis(FLUSH_MS) {
            self.flush(false);
        }
    }
}
