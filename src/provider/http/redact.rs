//! Removes the API key from what a server sends back, on the raw bytes, before anything
//! is decoded, truncated for a message, or kept. A key split across network reads is
//! caught: the bytes that could be the start of the key are held until the next read.
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

    /// The bytes still held at the end of the body.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }

    /// Redacts a whole text at once.
    pub fn text(&self, text: &str) -> String {
        match &self.key {
            Some(k) => String::from_utf8_lossy(&replace_all(text.as_bytes(), k)).into_owned(),
            None => text.to_string(),
        }
    }
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

    #[test]
    fn placeholder_keys_are_left_alone() {
        let mut r = Redactor::new(Some("EMPTY"));
        assert_eq!(r.push(b"EMPTY set"), b"EMPTY set".to_vec());
        assert_eq!(Redactor::new(None).text("anything"), "anything");
    }
}
