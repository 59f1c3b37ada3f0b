//! Flood control at the source: the sink that receives a provider's streamed chunks,
//! keeps the whole text, and logs it as `chunk` events — one event per chunk when the
//! stream is slow, and at most `chunk_flush_max` chunks or `chunk_flush_ms` of stream
//! per event when it is fast, so the log equals what a consumer folds. Under a heavy load
//! (more than [`STREAMS_PER_STEP`] streams at once) both limits grow with the number of
//! streams, up to [`MAX_WINDOW`]: ten thousand calls in flight log their text in pieces of
//! up to a second rather than chunk by chunk, which no screen could show anyway, and the
//! events a call costs (each one encoded, written, folded) stay few.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::emit::Scope;
use super::run_ctx::RunCtx;
use crate::data::provider::ChunkSink;
use crate::model::event::{Chunk, EngineEvent};

/// Collects an invocation's stream.
pub struct StreamSink<'a> {
    ctx: &'a RunCtx,
    scope: &'a Scope,
    /// The whole text so far.
    pub text: String,
    /// Byte offset in `text` where the unlogged tail starts.
    logged: usize,
    pending_chunks: usize,
    last_flush: Instant,
    window: Duration,
    max_chunks: usize,
    /// The limits at the lightest load (the run's settings).
    base_window: Duration,
    base_chunks: usize,
    /// Chunks received from the provider.
    pub chunks: u64,
}

impl<'a> StreamSink<'a> {
    /// A sink for one invocation.
    pub fn new(ctx: &'a RunCtx, scope: &'a Scope) -> StreamSink<'a> {
        ctx.streams.fetch_add(1, Ordering::Relaxed);
        let base_window = Duration::from_millis(ctx.config.chunk_flush_ms);
        let base_chunks = ctx.config.chunk_flush_max.max(1);
        let mut sink = StreamSink {
            ctx,
            scope,
            // A typical answer's size, so that the text rarely has to grow.
            text: String::with_capacity(4096),
            logged: 0,
            pending_chunks: 0,
            last_flush: Instant::now(),
            window: base_window,
            max_chunks: base_chunks,
            base_window,
            base_chunks,
            chunks: 0,
        };
        sink.fit_to_load();
        sink
    }

    /// Widens the flush limits with the number of streams open (see the module's doc).
    fn fit_to_load(&mut self) {
        let streams = self.ctx.streams.load(Ordering::Relaxed);
        let factor = (streams / STREAMS_PER_STEP).max(1) as u32;
        self.window = (self.base_window * factor).min(MAX_WINDOW.max(self.base_window));
        self.max_chunks = self.base_chunks.saturating_mul(factor as usize);
    }

    /// Logs whatever has not been logged yet.
    pub fn flush(&mut self) {
        if self.logged < self.text.len() {
            let text = self.text[self.logged..].to_string();
            self.logged = self.text.len();
            if let Err(e) = self
                .ctx
                .emitter
                .emit(self.scope, EngineEvent::Chunk(Chunk { text }))
            {
                tracing::error!("cannot log a chunk: {e}");
            }
        }
        self.pending_chunks = 0;
        self.last_flush = Instant::now();
        self.fit_to_load();
    }

    /// Flushes and takes the text so far out of the sink (a thought of a tool-using
    /// loop, logged but not part of the answer that is parsed).
    pub fn take_text(&mut self) -> String {
        self.flush();
        self.logged = 0;
        std::mem::take(&mut self.text)
    }

    /// Flushes and hands back the whole text.
    pub fn finish(mut self) -> (String, u64) {
        self.flush();
        (std::mem::take(&mut self.text), self.chunks)
    }
}

/// Streams open at once up to which a sink logs at the run's own limits; each further
/// step of this many widens them once more.
pub const STREAMS_PER_STEP: usize = 64;
/// The widest flush window under load.
pub const MAX_WINDOW: Duration = Duration::from_secs(1);

impl Drop for StreamSink<'_> {
    fn drop(&mut self) {
        self.ctx.streams.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ChunkSink for StreamSink<'_> {
    fn chunk(&mut self, text: &str) {
        self.text.push_str(text);
        self.chunks += 1;
        self.pending_chunks += 1;
        if self.pending_chunks >= self.max_chunks || self.last_flush.elapsed() >= self.window {
            self.flush();
        }
    }
}
