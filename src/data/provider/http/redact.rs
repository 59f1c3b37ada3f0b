//! Removes the API key from what a server sends back, twice: on the raw bytes, before
//! anything is decoded, truncated for a message, or kept ([`Redactor`]); and on the
//! decoded text, as the deltas of a streamed answer accumulate ([`TextRedactor`]). The raw
//! pass catches a key split across network reads; the text pass catches a key split across
//! SSE events (framing bytes between its halves). Both hold back what could be the start
//! of the key until the next piece arrives.
//!
//! Both find the key however it is spelt in JSON (the `key_match` module): a model that writes the
//! key inside a JSON string of its answer as `\u0073\u006b-…` or `sk-a\/b` gives a text
//! that a JSON decoder turns into the key, so those spellings are replaced too; and text
//! decoded from an answer (its atoms, a debate output) goes through
//! [`redact_serialized`] before it is kept.
//!
//! Keys shorter than [`MIN_KEY_LEN`] are placeholders (`EMPTY`, `ollama`) that local
//! servers accept; replacing them in model output would corrupt answers, so they are left.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::key_match::{Found, KeyPattern};

/// Shortest key that is redacted.
pub const MIN_KEY_LEN: usize = 12;

/// What a key is replaced by.
pub const REDACTED: &[u8] = b"[redacted]";

/// Streaming redaction of one response body.
#[derive(Debug, Clone)]
pub struct Redactor {
    key: Option<KeyPattern>,
    held: Vec<u8>,
    /// Backslashes at the end of what was passed on: a spelling of the key that starts
    /// with an escape is not one after an odd number of them (the first `\` is
    /// escaped itself).
    backslashes: usize,
}

/// What one pass over a buffer gives.
struct Pass {
    out: Vec<u8>,
    /// Where the held part (a possible start of the key at the end) begins.
    held_from: usize,
    /// Backslashes ending `out`.
    backslashes: usize,
}

impl Redactor {
    /// A redactor for `key` (`None`, or a short placeholder, redacts nothing).
    pub fn new(key: Option<&str>) -> Redactor {
        Redactor {
            key: key
                .filter(|k| k.len() >= MIN_KEY_LEN)
                .and_then(KeyPattern::new),
            held: Vec::new(),
            backslashes: 0,
        }
    }

    /// Feeds bytes; returns those that are safe to pass on (the bytes themselves, not a
    /// copy, when there is no key to look for).
    pub fn push<'b>(&mut self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        let Some(key) = &self.key else {
            return Cow::Borrowed(bytes);
        };
        let mut buf = std::mem::take(&mut self.held);
        buf.extend_from_slice(bytes);
        let pass = scan(key, &buf, self.backslashes, false);
        self.held = buf.split_off(pass.held_from);
        self.backslashes = pass.backslashes;
        Cow::Owned(pass.out)
    }

    /// The bytes still held at the end of the body (or of a body cut short): a start of
    /// the key, passed on when shorter than [`MIN_KEY_LEN`] (it may be ordinary text, and
    /// says little of the key), `[redacted]` when longer (half of an echoed key).
    pub fn finish(&mut self) -> Vec<u8> {
        let held = std::mem::take(&mut self.held);
        let before = std::mem::take(&mut self.backslashes);
        match &self.key {
            Some(key) => scan(key, &held, before, true).out,
            None => held,
        }
    }

    /// Redacts a whole text at once (a text ending in a long start of the key loses it).
    pub fn text(&self, text: &str) -> String {
        match &self.key {
            Some(k) => utf8(scan(k, text.as_bytes(), 0, true).out),
            None => text.to_string(),
        }
    }

    /// The text redacted, when it held the key in any spelling; `None` when it did not.
    pub fn found_in(&self, text: &str) -> Option<String> {
        let key = self.key.as_ref()?;
        let bytes = text.as_bytes();
        let mut at = 0;
        let mut hit = false;
        while let Some(i) = memchr::memchr2(b'\\', key.first_byte(), &bytes[at..]) {
            if key.at(bytes, at + i) != Found::No {
                hit = true;
                break;
            }
            at += i + 1;
        }
        hit.then(|| self.text(text))
    }
}

/// Replaces every spelling of `key` in `buf`. `before` counts the backslashes just
/// before `buf`; at the end of the text (`last`) a possible start of the key is passed on
/// when short and replaced when long, else it is held.
fn scan(key: &KeyPattern, buf: &[u8], before: usize, last: bool) -> Pass {
    let mut out = Vec::with_capacity(buf.len());
    let mut run = before;
    let mut i = 0;
    while i < buf.len() {
        let Some(off) = memchr::memchr2(b'\\', key.first_byte(), &buf[i..]) else {
            out.extend_from_slice(&buf[i..]);
            run = 0;
            i = buf.len();
            break;
        };
        let j = i + off;
        if j > i {
            out.extend_from_slice(&buf[i..j]);
            run = 0;
        }
        let escaped = buf[j] == b'\\' && run % 2 == 1;
        let found = if escaped && key.first_byte() != b'\\' {
            Found::No
        } else {
            key.at(buf, j)
        };
        match found {
            Found::Whole(n) => {
                out.extend_from_slice(REDACTED);
                run = 0;
                i = j + n;
            }
            Found::Partial(_) if !last => {
                return Pass {
                    out,
                    held_from: j,
                    backslashes: run,
                };
            }
            Found::Partial(matched) if matched >= MIN_KEY_LEN => {
                out.extend_from_slice(REDACTED);
                run = 0;
                i = buf.len();
            }
            Found::Partial(_) | Found::No => {
                out.push(buf[j]);
                run = if buf[j] == b'\\' { run + 1 } else { 0 };
                i = j + 1;
            }
        }
    }
    Pass {
        out,
        held_from: i.min(buf.len()),
        backslashes: run,
    }
}

/// Streaming redaction of decoded text: the answer's deltas, in order. A key split across
/// deltas is caught; only a suffix that could be the start of the key is held back, and
/// [`TextRedactor::finish`] hands it on when the text ends (the stream ends, fails or
/// times out), so no text is lost ([`Redactor::finish`] says how a long start is marked).
#[derive(Debug, Clone)]
pub struct TextRedactor(Redactor);

impl TextRedactor {
    /// A text redactor for `key` (`None`, or a short placeholder, redacts nothing).
    pub fn new(key: Option<&str>) -> TextRedactor {
        TextRedactor(Redactor::new(key))
    }

    /// Feeds one delta; returns the text that is safe to pass on (the text itself when
    /// there is no key to look for).
    pub fn push<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        match self.0.push(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(bytes) => Cow::Owned(utf8(bytes)),
        }
    }

    /// The text still held at the end; the redactor is then empty.
    pub fn finish(&mut self) -> String {
        utf8(self.0.finish())
    }

    /// Redacts a whole text at once.
    pub fn text(&self, text: &str) -> String {
        self.0.text(text)
    }

    /// The text redacted, when it held the key in any spelling; `None` when it did not.
    pub fn found_in(&self, text: &str) -> Option<String> {
        self.0.found_in(text)
    }

    /// Whether there is a key to redact.
    pub fn is_active(&self) -> bool {
        self.0.key.is_some()
    }
}

/// `value` with the key replaced in every string it holds (values and object keys),
/// whatever escapes the strings were decoded from: its JSON text is searched and, when
/// the key is in it, read back redacted. Unchanged (and not copied) when the key is not
/// there. An error when the redacted text no longer reads as the type.
pub fn redact_serialized<T: Serialize + DeserializeOwned>(
    value: T,
    redactor: &TextRedactor,
) -> Result<T, serde_json::Error> {
    if !redactor.is_active() {
        return Ok(value);
    }
    let text = serde_json::to_string(&value)?;
    match redactor.found_in(&text) {
        Some(clean) => serde_json::from_str(&clean),
        None => Ok(value),
    }
}

/// Bytes cut out of valid UTF-8 by [`Redactor`]. A match of a (valid UTF-8) key starts and
/// ends on character boundaries, and so does a held suffix equal to a prefix of the key,
/// so this never needs the lossy branch.
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-proj-abcdef0123456789";

    fn through(parts: &[&[u8]]) -> String {
        let mut r = Redactor::new(Some(KEY));
        let mut out = Vec::new();
        for p in parts {
            out.extend_from_slice(&r.push(p));
        }
        out.extend(r.finish());
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn a_key_split_anywhere_is_redacted() {
        let text = format!("error: Incorrect API key provided: {KEY}. data: x{KEY}y\n\n");
        let want = text.replace(KEY, "[redacted]");
        for cut in 0..text.len() {
            let (a, b) = text.as_bytes().split_at(cut);
            assert_eq!(through(&[a, b]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.as_bytes().chunks(1).collect();
        assert_eq!(through(&bytes), want);
    }

    #[test]
    fn only_possible_key_starts_are_held_back() {
        let mut r = Redactor::new(Some(KEY));
        assert_eq!(r.push(b"data: hello\n\n"), b"data: hello\n\n".to_vec());
        assert_eq!(r.push(b"tail sk-pr"), b"tail ".to_vec());
        assert_eq!(r.push(b"ize"), b"sk-prize".to_vec());
        assert_eq!(r.push(b" sk-proj-abc"), b" ".to_vec());
        assert_eq!(r.finish(), b"sk-proj-abc".to_vec());
    }

    fn text_through(parts: &[&str]) -> String {
        let mut r = TextRedactor::new(Some(KEY));
        let mut out = String::new();
        for p in parts {
            let safe = r.push(p);
            assert!(!safe.contains(KEY), "{safe:?} passed on");
            out.push_str(&safe);
        }
        out + &r.finish()
    }

    #[test]
    fn a_key_split_across_two_or_three_deltas_is_redacted() {
        let text = format!("é {KEY} and «{KEY}{KEY}» then sk-proj- alone ✓");
        let want = text.replace(KEY, "[redacted]");
        let cuts: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &i in &cuts {
            assert_eq!(text_through(&[&text[..i], &text[i..]]), want, "cut at {i}");
            for &j in cuts.iter().filter(|&&j| j >= i) {
                let parts = [&text[..i], &text[i..j], &text[j..]];
                assert_eq!(text_through(&parts), want, "cuts at {i}, {j}");
            }
        }
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(text_through(&chars), want);
    }

    #[test]
    fn only_possible_key_starts_are_held_back_in_text() {
        let mut r = TextRedactor::new(Some(KEY));
        assert_eq!(r.push("{\"a\": \"hello"), "{\"a\": \"hello");
        assert_eq!(r.push(" s"), " ");
        assert_eq!(r.push("k-proj-"), "");
        assert_eq!(r.push("x"), "sk-proj-x");
        assert_eq!(r.push("ssk-proj-abcdef01234"), "s");
        assert_eq!(r.push("56789 done"), "[redacted] done");
        assert_eq!(r.push("tail sk-pro"), "tail ");
        assert_eq!(r.finish(), "sk-pro");
        assert_eq!(r.finish(), "");
        assert_eq!(r.push("ok"), "ok");
        // A stream cut after half the key: the half is not passed on.
        assert_eq!(r.push("cut sk-proj-abcd"), "cut ");
        assert_eq!(r.finish(), "[redacted]");
    }

    #[test]
    fn placeholder_keys_are_left_alone() {
        let mut t = TextRedactor::new(Some("EMPTY"));
        assert_eq!(t.push("EMP"), "EMP");
        assert_eq!(TextRedactor::new(None).push("sk-anything"), "sk-anything");
        let mut r = Redactor::new(Some("EMPTY"));
        assert_eq!(r.push(b"EMPTY set"), b"EMPTY set".to_vec());
        assert_eq!(Redactor::new(None).text("anything"), "anything");
    }

    /// `KEY` with every character as a JSON `\uXXXX` escape.
    fn escaped(key: &str) -> String {
        key.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
    }

    #[test]
    fn a_key_the_model_wrote_with_json_escapes_is_redacted_split_anywhere() {
        let mixed = format!("\\u0073k-proj\\/abcdef{}", escaped("0123456789"));
        let slash_key = "sk-proj/abcdef0123456789";
        let text = format!(
            "{{\"content\": {{\"a\": \"{} x\", \"b\": \"{mixed}\"}}}}",
            escaped(KEY)
        );
        let want = format!("{{\"content\": {{\"a\": \"[redacted] x\", \"b\": \"{mixed}\"}}}}");
        assert_eq!(text_through(&[&text]), want);
        for cut in 0..=text.len() {
            assert_eq!(
                text_through(&[&text[..cut], &text[cut..]]),
                want,
                "cut {cut}"
            );
        }
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(text_through(&chars), want);
        // `\/` is `/`: a key with a slash is found written either way.
        let r = TextRedactor::new(Some(slash_key));
        let v: serde_json::Value =
            serde_json::from_str(&format!("{{\"b\": \"{mixed}\"}}")).expect("json");
        assert_eq!(v["b"], slash_key, "the test text decodes to the key");
        assert_eq!(r.text(&mixed), "[redacted]");
    }

    #[test]
    fn an_escaped_backslash_does_not_start_an_escape() {
        // `\\u0073…` decodes to a backslash and the text `u0073…`: not the key, left as
        // it is (replacing it would leave a broken escape behind).
        let text = format!("\"\\{}\"", escaped(KEY));
        let r = TextRedactor::new(Some(KEY));
        assert_eq!(r.text(&text), text);
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert!(!v.as_str().unwrap_or_default().contains(KEY));
        // Split between the backslashes: the first is held, and read again with the rest.
        for cut in 1..5 {
            assert_eq!(
                text_through(&[&text[..cut], &text[cut..]]),
                text,
                "cut {cut}"
            );
        }
        // Three backslashes: an escaped backslash, then a real escape.
        let text = format!("\"\\\\{}\"", escaped(KEY));
        assert_eq!(r.text(&text), "\"\\\\[redacted]\"");
    }

    #[test]
    fn decoded_strings_are_redacted_through_their_json() {
        let r = TextRedactor::new(Some(KEY));
        let v = serde_json::json!({"content": {"a": format!("key {KEY} here")}, KEY: 1});
        let clean = redact_serialized(v, &r).expect("redacted");
        assert_eq!(
            clean,
            serde_json::json!({"content": {"a": "key [redacted] here"}, "[redacted]": 1})
        );
        let v = serde_json::json!({"a": "nothing"});
        assert_eq!(redact_serialized(v.clone(), &r).expect("same"), v);
        let none = TextRedactor::new(None);
        assert_eq!(redact_serialized(v.clone(), &none).expect("same"), v);
    }
}
