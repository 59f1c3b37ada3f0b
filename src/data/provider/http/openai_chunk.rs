//! The fast reading of a streamed OpenAI chunk: the fields plexus uses, borrowed from the
//! event's text, without building a JSON tree. It reads only chunks of the usual shape
//! (each field absent, `null` or of its usual type, no `error`, no repeated key); any
//! other chunk is read by the general path ([`super::openai::Stream::event`] on a
//! `serde_json::Value`), so both give the same result on every input.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// One chunk of the usual shape.
#[derive(Debug, Deserialize)]
pub struct Chunk<'a> {
    /// `error`, present (even as `null`): the general path reads it.
    #[serde(default)]
    pub error: Present,
    /// `model`.
    #[serde(borrow, default)]
    pub model: Option<Text<'a>>,
    /// `usage`.
    #[serde(default)]
    pub usage: Option<Obj<UsageCounts>>,
    /// `choices[0]` (the others are skipped, as the general path skips them).
    #[serde(borrow, default)]
    pub choices: Option<First<Obj<Choice<'a>>>>,
}

/// Whether a field was present, whatever its value.
#[derive(Debug, Default, Clone, Copy)]
pub struct Present(pub bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Present, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// `usage`: the two counts (`null` or absent read as 0).
#[derive(Debug, Deserialize)]
pub struct UsageCounts {
    /// `prompt_tokens`.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// `completion_tokens`.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// `prompt_tokens_details`.
    #[serde(default)]
    pub prompt_tokens_details: Option<Obj<PromptDetails>>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Deserialize)]
pub struct PromptDetails {
    /// `cached_tokens`: prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// `choices[i]`.
#[derive(Debug, Deserialize)]
pub struct Choice<'a> {
    /// `delta`.
    #[serde(borrow, default)]
    pub delta: Option<Obj<Delta<'a>>>,
    /// `finish_reason`.
    #[serde(borrow, default)]
    pub finish_reason: Option<Text<'a>>,
}

/// `choices[0].delta`.
#[derive(Debug, Deserialize)]
pub struct Delta<'a> {
    /// `content`.
    #[serde(borrow, default)]
    pub content: Option<Text<'a>>,
    /// `reasoning_content` (DeepSeek, vLLM, llama.cpp): thinking, not the answer.
    #[serde(borrow, default)]
    pub reasoning_content: Option<Text<'a>>,
    /// `reasoning` (OpenRouter, Ollama): the same.
    #[serde(borrow, default)]
    pub reasoning: Option<Text<'a>>,
    /// `function_call`, the legacy form of a tool call: the general path reads it.
    #[serde(default)]
    pub function_call: Present,
    /// `tool_calls`.
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<Obj<ToolCallDelta<'a>>>>,
}

/// `delta.tool_calls[i]`.
#[derive(Debug, Deserialize)]
pub struct ToolCallDelta<'a> {
    /// `index`.
    #[serde(default)]
    pub index: Option<u64>,
    /// `id`.
    #[serde(borrow, default)]
    pub id: Option<Text<'a>>,
    /// `function`.
    #[serde(borrow, default)]
    pub function: Option<Obj<FunctionDelta<'a>>>,
}

/// `tool_calls[i].function`.
#[derive(Debug, Deserialize)]
pub struct FunctionDelta<'a> {
    /// `name`.
    #[serde(borrow, default)]
    pub name: Option<Text<'a>>,
    /// `arguments`.
    #[serde(borrow, default)]
    pub arguments: Option<Text<'a>>,
}

/// The chunk when it has the usual shape; `None` sends it to the general path.
pub fn read(data: &str) -> Option<Chunk<'_>> {
    serde_json::from_str::<Obj<Chunk<'_>>>(data)
        .ok()
        .map(|c| c.0)
        .filter(|c| !c.error.0)
        .filter(|c| {
            !c.choices
                .as_ref()
                .and_then(|f| f.0.as_ref())
                .and_then(|ch| ch.0.delta.as_ref())
                .is_some_and(|d| d.0.function_call.0)
        })
}

/// A string, borrowed from the event's text when it has no escapes.
#[derive(Debug)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text<'a>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The first element of a JSON array (`None` when it is empty), the others skipped.
#[derive(Debug)]
pub struct First<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<First<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<First<T>, A::Error> {
                let first = seq.next_element::<T>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(First(first))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// A JSON object read as `T` (serde would also read a struct from an array, which the
/// general path does not).
#[derive(Debug)]
pub struct Obj<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Obj<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::provider::http::emit::Emit;
    use crate::data::provider::http::openai::Stream;
    use crate::data::provider::http::redact::TextRedactor;
    use crate::data::provider::{ChunkSink, ProviderError, ProviderOutput};

    struct Sink(String);
    impl ChunkSink for Sink {
        fn chunk(&mut self, t: &str) {
            self.0.push_str(t);
        }
    }

    type Seen = (Vec<Result<bool, ProviderError>>, String, ProviderOutput);

    /// Feeds the events through `Stream::event` (fast path first) or, with `general`,
    /// through the JSON-tree path alone.
    fn run(events: &[&str], general: bool) -> Seen {
        let mut sink = Sink(String::new());
        let mut out = ProviderOutput::default();
        let mut results = Vec::new();
        {
            let mut emit = Emit::new(&mut sink, TextRedactor::new(None));
            let mut s = Stream::default();
            for e in events {
                results.push(if general {
                    s.event_general(e, &mut emit, &mut out)
                } else {
                    s.event(e, &mut emit, &mut out)
                });
            }
            s.ended(&mut out);
        }
        (results, sink.0, out)
    }

    /// Chunks of every odd shape: each must read the same through both paths.
    const ODD: &[&str] = &[
        r#"{"model":"m","choices":[{"delta":{"content":"a\n\"b\" \u00e9"}}]}"#,
        r#"{"usage":[3,4],"choices":[]}"#,
        r#"{"usage":{"prompt_tokens":-1,"completion_tokens":2.5}}"#,
        r#"{"usage":{"prompt_tokens":99999999999999999999,"completion_tokens":1}}"#,
        r#"{"usage":{"prompt_tokens":1099511627777,"completion_tokens":null}}"#,
        r#"{"usage":null,"model":5}"#,
        r#"{"usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0}}}"#,
        r#"{"usage":{"prompt_tokens_details":{"cached_tokens":-4},"prompt_tokens":9}}"#,
        r#"{"usage":{"prompt_tokens":9,"prompt_tokens_details":7}}"#,
        r#"{"usage":{"prompt_tokens":9,"prompt_tokens_details":null}}"#,
        r#"{"usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":null}}}"#,
        r#"{"model":"first","model":"second"}"#,
        r#"{"choices":{"0":{"delta":{"content":"no"}}}}"#,
        r#"{"choices":[{"delta":{"content":"x"}},7]}"#,
        r#"{"choices":[7,{"delta":{"content":"x"}}]}"#,
        r#"{"choices":[{"delta":{"content":"w"}},{"delta":{"content":"not this"}},[null]]}"#,
        r#"{"choices":[{"delta":[1,2],"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"delta":{"content":null,"tool_calls":[{"index":-1,"id":"a","function":{"name":"f"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":null},{"index":1.0,"function":{"arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":5000}]}}]}"#,
        r#"[{"model":"in an array"}]"#,
        r#"{"error":null}"#,
        r#"{"model":"m2","error":{"type":"server_error","message":"boom"}}"#,
        r#"{"choices":[{"delta":{"content":"y"}}]} trailing"#,
        "{not json",
        "null",
        r#"{"choices":[{"delta":{"content":"z"},"finish_reason":"length","logprobs":{"content":[{"t":[1,{"a":null}]}]}}],"usage":{"prompt_tokens":4,"completion_tokens":5,"details":{"cached":1}}}"#,
    ];

    #[test]
    fn odd_chunks_read_the_same_as_through_a_json_tree() {
        for e in ODD {
            assert_eq!(run(&[e], false), run(&[e], true), "chunk {e}");
        }
        assert_eq!(run(ODD, false), run(ODD, true), "all chunks in one stream");
    }

    #[test]
    fn usual_chunks_take_the_fast_path_and_borrow_their_text() {
        let c = read(r#"{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"plain"},"finish_reason":null}]}"#)
            .expect("a usual chunk is read fast");
        let choice = &c
            .choices
            .as_ref()
            .and_then(|c| c.0.as_ref())
            .expect("choices[0]")
            .0;
        let content = &choice.delta.as_ref().expect("delta").0.content;
        assert!(matches!(content, Some(super::Text(Cow::Borrowed("plain")))));
        // Escapes are decoded into an owned string.
        let c = read(r#"{"choices":[{"delta":{"content":"a\tb"}}]}"#).expect("fast");
        let choice = &c
            .choices
            .as_ref()
            .and_then(|c| c.0.as_ref())
            .expect("choices[0]")
            .0;
        let content = &choice.delta.as_ref().expect("delta").0.content;
        assert!(matches!(content, Some(super::Text(Cow::Owned(t))) if t == "a\tb"));
        // What the fast path must not read: an error (even null), arrays for objects,
        // repeated keys.
        for odd in [
            r#"{"error":null}"#,
            r#"{"usage":[1,2]}"#,
            r#"[1]"#,
            r#"{"model":"a","model":"b"}"#,
        ] {
            assert!(read(odd).is_none(), "{odd}");
        }
    }
}
