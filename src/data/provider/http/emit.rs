//! Decoded text on its way out of a provider: answer text goes to the [`ChunkSink`]
//! through a [`TextRedactor`] (a key split across deltas or JSON-escaped is caught), and
//! the rest of a finished answer (thinking, tool calls, model) is redacted as whole text.

use super::redact::TextRedactor;
use crate::data::provider::{ChunkSink, ProviderOutput};

/// Answer text going to the sink, redacted as it accumulates. What could be the start of
/// the key is held until the next delta; [`Emit::flush`] hands it on, and dropping an
/// `Emit` flushes too, so a call that fails, times out or is cancelled loses no text.
pub struct Emit<'a> {
    sink: &'a mut dyn ChunkSink,
    redactor: TextRedactor,
    /// Bytes of answer text emitted.
    pub emitted: usize,
}

impl<'a> Emit<'a> {
    /// Text for `sink` through `redactor`, none emitted yet.
    pub fn new(sink: &'a mut dyn ChunkSink, redactor: TextRedactor) -> Emit<'a> {
        Emit {
            sink,
            redactor,
            emitted: 0,
        }
    }

    /// Passes answer text on (all of it but a possible start of the key).
    pub fn text(&mut self, text: &str) {
        if !text.is_empty() {
            let safe = self.redactor.push(text);
            self.pass(&safe);
        }
    }

    /// Says the server is answering, whatever the bytes hold.
    pub fn progress(&mut self) {
        self.sink.progress();
    }

    /// Passes on the text held back: the answer has ended (or failed).
    pub fn flush(&mut self) {
        let held = self.redactor.finish();
        self.pass(&held);
    }

    fn pass(&mut self, text: &str) {
        if !text.is_empty() {
            self.emitted += text.len();
            self.sink.chunk(text);
        }
    }
}

impl Drop for Emit<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Redacts every text of a finished answer that was not streamed to the sink: thinking,
/// tool calls (arguments are whole here, however many deltas they came in), model and
/// finish reason.
pub fn redact_output(redactor: &TextRedactor, mut out: ProviderOutput) -> ProviderOutput {
    let r = |s: &mut String| {
        if !s.is_empty() {
            *s = redactor.text(s);
        }
    };
    r(&mut out.thinking);
    for call in &mut out.tool_calls {
        r(&mut call.id);
        r(&mut call.name);
        r(&mut call.arguments);
    }
    for s in [&mut out.model, &mut out.finish_reason]
        .into_iter()
        .flatten()
    {
        r(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::provider::http::anthropic;
    use crate::data::provider::ToolCall;

    const KEY: &str = "sk-ant-api03-secret-abc123";

    struct Chunks(Vec<String>);
    impl ChunkSink for Chunks {
        fn chunk(&mut self, t: &str) {
            self.0.push(t.to_string());
        }
    }

    #[test]
    fn held_text_is_flushed_when_the_emit_is_dropped() {
        let mut sink = Chunks(Vec::new());
        {
            let mut emit = Emit::new(&mut sink, TextRedactor::new(Some(KEY)));
            emit.text("partial answer sk-ant-");
            assert_eq!(emit.emitted, "partial answer ".len());
        }
        assert_eq!(sink.0, ["partial answer ", "sk-ant-"]);
    }

    #[test]
    fn thinking_and_tool_arguments_split_across_deltas_are_redacted() {
        let (a, b) = KEY.split_at(9);
        // The second half of each written with JSON escapes on the wire (`-` as `\u002d`).
        let b_escaped = b.replace('-', r"\u002d");
        let events = [
            r#"{"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}"#.to_string(),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#.to_string(),
            format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"thinking_delta","thinking":"the key is {a}"}}}}"#),
            format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"thinking_delta","thinking":"{b_escaped}!"}}}}"#),
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#.to_string(),
            format!(r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{{\"k\":\"{a}"}}}}"#),
            format!(r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{b_escaped}\"}}"}}}}"#),
            r#"{"type":"message_stop"}"#.to_string(),
        ];
        let mut sink = Chunks(Vec::new());
        let mut emit = Emit::new(&mut sink, TextRedactor::new(Some(KEY)));
        let mut out = ProviderOutput::default();
        let mut s = anthropic::Stream::default();
        for e in &events {
            s.event(e, &mut emit, &mut out).expect("valid event");
        }
        assert!(
            out.thinking.contains(KEY),
            "the test needs the key whole here"
        );
        let out = redact_output(&TextRedactor::new(Some(KEY)), out);
        assert_eq!(out.thinking, "the key is [redacted]!");
        assert_eq!(out.tool_calls[0].arguments, r#"{"k":"[redacted]"}"#);
    }

    #[test]
    fn every_text_of_an_output_is_redacted() {
        let out = ProviderOutput {
            model: Some(format!("m-{KEY}")),
            finish_reason: Some(KEY.into()),
            tool_calls: vec![ToolCall {
                id: KEY.into(),
                name: format!("{KEY}{KEY}"),
                arguments: String::new(),
            }],
            ..ProviderOutput::default()
        };
        let text = serde_json::to_string(&redact_output(&TextRedactor::new(Some(KEY)), out))
            .expect("json");
        assert!(
            !text.contains(KEY) && text.contains("m-[redacted]"),
            "{text}"
        );
    }
}
