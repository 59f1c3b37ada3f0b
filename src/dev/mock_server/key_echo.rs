//! A mock answer that echoes the request's key inside its text, as a server might: split
//! across stream events, or written with JSON escapes, so that tests can check that plexus
//! redacts the decoded text and not only the raw bytes.

use serde::{Deserialize, Serialize};

use super::answer::{sse_events, whole, Call};

/// How the key is put into the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyEcho {
    /// One character per stream event.
    PerChar,
    /// Cut in the middle, across two stream events.
    Halves,
    /// Cut in the middle, every character of the key JSON-escaped on the wire (`\u002d`).
    Escaped,
}

/// An answer text with the key inside.
pub struct KeyedAnswer {
    text: String,
    at: usize,
    key: String,
    how: KeyEcho,
}

impl KeyedAnswer {
    /// `text` with `key` at the start of its first `content` string (at the end when it
    /// has none).
    pub fn new(text: &str, key: &str, how: KeyEcho) -> KeyedAnswer {
        let at = text
            .find("\"content\": {")
            .and_then(|c| text[c..].find("\": \"").map(|v| c + v + 4))
            .unwrap_or(text.len());
        let sep = if at == text.len() { " " } else { "" };
        let tail = if at == text.len() { "" } else { " " };
        let text = format!("{}{sep}{key}{tail}{}", &text[..at], &text[at..]);
        KeyedAnswer {
            at: at + sep.len(),
            text,
            key: key.to_string(),
            how,
        }
    }

    /// The answer text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The SSE events (opening, pieces, closing) with the key split as asked.
    pub fn events(
        &self,
        call: &Call,
        chunks: usize,
        usage: (u64, u64),
    ) -> (Vec<String>, Vec<String>, Vec<String>) {
        let end = self.at + self.key.len();
        let key = &self.text[self.at..end];
        let (before, after) = (&self.text[..self.at], &self.text[end..]);
        // As many pieces after the key as before: the key is in the middle of the events,
        // where a fault scripted for half the answer (a cut, a stall) strikes.
        let n = (chunks / 2).max(before.len().max(after.len()) / 96).max(1);
        let mut parts = pieces_exactly(before, n);
        let first = parts.len();
        match self.how {
            KeyEcho::PerChar => parts.extend(key.char_indices().map(|(i, c)| {
                let e = i + c.len_utf8();
                &key[i..e]
            })),
            KeyEcho::Halves | KeyEcho::Escaped => {
                let mut mid = key.len() / 2;
                while !key.is_char_boundary(mid) {
                    mid += 1;
                }
                parts.extend([&key[..mid], &key[mid..]]);
            }
        }
        let last = parts.len();
        parts.extend(pieces_exactly(after, n));
        let (open, mut body, close) = sse_events(call, &parts, usage);
        if self.how == KeyEcho::Escaped {
            for i in first..last {
                body[i] = body[i].replace(parts[i], &escaped(parts[i]));
            }
        }
        (open, body, close)
    }

    /// The whole (non-streamed) answer body.
    pub fn whole(&self, call: &Call, usage: (u64, u64)) -> String {
        let body = whole(call, &self.text, usage);
        if self.how == KeyEcho::Escaped {
            body.replace(&self.key, &escaped(&self.key))
        } else {
            body
        }
    }
}

/// `text` in `n` pieces on character boundaries (some empty when it is short).
fn pieces_exactly(text: &str, n: usize) -> Vec<&str> {
    let cuts: Vec<usize> = (0..=n)
        .map(|i| {
            let mut at = text.len() * i / n;
            while !text.is_char_boundary(at) {
                at += 1;
            }
            at
        })
        .collect();
    cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// Every character as a JSON `\uXXXX` escape.
fn escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dev::mock_server::answer::Api;

    const KEY: &str = "sk-test-0123456789abcdef";

    fn call(api: Api) -> Call {
        Call {
            api,
            model: "m".into(),
            stream: true,
            prompt: String::new(),
            text: String::new(),
            tool_calls: Vec::new(),
            fragments: 2,
            answer_tool: false,
        }
    }

    /// The text of the answer's events, decoded and joined.
    fn decoded(body: &[String]) -> String {
        body.iter()
            .map(|e| {
                let data = e.lines().find_map(|l| l.strip_prefix("data: "));
                let v: serde_json::Value =
                    serde_json::from_str(data.unwrap_or_default()).expect("json");
                let t = &v["choices"][0]["delta"]["content"];
                let t = if t.is_string() {
                    t
                } else {
                    &v["delta"]["text"]
                };
                t.as_str().unwrap_or_default().to_string()
            })
            .collect()
    }

    #[test]
    fn the_key_goes_into_the_first_content_string_split_as_asked() {
        let text = "{\n  \"atoms\": [{\"content\": {\n \"a\": \"x y\"}}]}";
        for api in [Api::Openai, Api::Anthropic] {
            for how in [KeyEcho::PerChar, KeyEcho::Halves, KeyEcho::Escaped] {
                let k = KeyedAnswer::new(text, KEY, how);
                assert_eq!(k.text(), text.replace("x y", &format!("{KEY} x y")));
                let (_, body, _) = k.events(&call(api), 4, (1, 1));
                assert_eq!(decoded(&body), k.text(), "{api:?} {how:?}");
                assert!(body.iter().all(|e| !e.contains(KEY)), "{api:?} {how:?}");
                let escaped = body.iter().any(|e| e.contains("\\u002d"));
                assert_eq!(escaped, how == KeyEcho::Escaped);
                if how == KeyEcho::Halves {
                    // The key in the middle of the events: half of them end before its
                    // second half.
                    let half = body.len() / 2;
                    assert!(body[half - 1].contains(&KEY[..KEY.len() / 2]), "{body:?}");
                    assert!(body[half].contains(&KEY[KEY.len() / 2..]), "{body:?}");
                }
            }
        }
        let k = KeyedAnswer::new("pong", KEY, KeyEcho::Escaped);
        assert_eq!(k.text(), format!("pong {KEY}"));
        let body = k.whole(&call(Api::Openai), (1, 1));
        assert!(!body.contains(KEY) && body.contains("\\u0073\\u006b\\u002d"));
    }
}
