//! Removes the API key from what a server sends back, twice: on the raw bytes, before
//! anything is decoded, truncated for a message, or kept ([`Redactor`]); and on the
//! decoded text, as the deltas of a streamed answer accumulate ([`TextRedactor`]). The raw
//! pass catches a key split across network reads; the text pass catches a key split across
//! SSE events (framing bytes between its halves) or written with JSON escapes (`\u002d`).
//! Both hold back what could be the start of the key until the next piece arrives.
//!
//! Keys shorter than [`MIN_KEY_LEN`] are placeholders (`EMPTY`, `ollama`) that local
//! servers accept; replacing them in model output would corrupt answers, so they are left.

/// Shortest key that is redacted.
pub const MIN_KEY_LEN: usize = 12;

/// What a key is replaced by.
pub const REDACTED: &[u8] = b"[redacted]";

/// Streaming redaction of one response body.
#[derive(Debug, Clone)]
pub struct Redactor {
    key: Option<Vec<u8>>,
    held: Vec<u8>,
}

impl Redactor {
    /// A redactor for `key` (`None`, or a short placeholder, redacts nothing).
    pub fn new(key: Option<&str>) -> Redactor {
        Redactor {
            key: key
                .filter(|k| k.len() >= MIN_KEY_LEN)
                .map(|k| k.as_bytes().to_vec()),
            held: Vec::new(),
        }
    }

    /// Feeds bytes; returns those that are safe to pass on.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let Some(key) = &self.key else {
            return bytes.to_vec();
        };
        let mut buf = std::mem::take(&mut self.held);
        buf.extend_from_slice(bytes);
        let mut out = replace_all(&buf, key);
        let hold = partial_key_suffix(&out, key);
        self.held = out.split_off(out.len() - hold);
        out
    }

    /// The bytes still held at the end of the body (or of a body cut short): a start of
    /// the key, passed on when shorter than [`MIN_KEY_LEN`] (it may be ordinary text, and
    /// says little of the key), `[redacted]` when longer (half of an echoed key).
    pub fn finish(&mut self) -> Vec<u8> {
        let held = std::mem::take(&mut self.held);
        if held.len() >= MIN_KEY_LEN {
            REDACTED.to_vec()
        } else {
            held
        }
    }

    /// Redacts a whole text at once.
    pub fn text(&self, text: &str) -> String {
        match &self.key {
            Some(k) => String::from_utf8_lossy(&replace_all(text.as_bytes(), k)).into_owned(),
            None => text.to_string(),
        }
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

    /// Feeds one delta; returns the text that is safe to pass on.
    pub fn push(&mut self, text: &str) -> String {
        utf8(self.0.push(text.as_bytes()))
    }

    /// The text still held at the end; the redactor is then empty.
    pub fn finish(&mut self) -> String {
        utf8(self.0.finish())
    }

    /// Redacts a whole text at once.
    pub fn text(&self, text: &str) -> String {
        self.0.text(text)
    }
}

/// Bytes cut out of valid UTF-8 by [`Redactor`]. A match of a (valid UTF-8) key starts and
/// ends on character boundaries, and so does a held suffix equal to a prefix of the key,
/// so this never needs the lossy branch.
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn replace_all(hay: &[u8], key: &[u8]) -> Vec<u8> {
    let finder = memchr::memmem::Finder::new(key);
    let mut out = Vec::with_capacity(hay.len());
    let mut last = 0;
    for at in finder.find_iter(hay) {
        out.extend_from_slice(&hay[last..at]);
        out.extend_from_slice(REDACTED);
        last = at + key.len();
    }
    out.extend_from_slice(&hay[last..]);
    out
}

/// Length of the longest suffix of `buf` that is a proper prefix of `key`.
fn partial_key_suffix(buf: &[u8], key: &[u8]) -> usize {
    let max = (key.len() - 1).min(buf.len());
    (1..=max)
        .rev()
        .find(|&n| buf[buf.len() - n..] == key[..n])
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-proj-abcdef0123456789";

    fn through(parts: &[&[u8]]) -> String {
        let mut r = Redactor::new(Some(KEY));
        let mut out = Vec::new();
        for p in parts {
            out.extend(r.push(p));
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
}
