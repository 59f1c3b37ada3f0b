//! Duplicate keys in JSON text. serde_json keeps the last of two equal keys of an object
//! without a word; a plan refuses them, and this pass over the text finds every one,
//! with its line and the path of its object.
//!
//! It runs on text serde_json has already parsed, so it only follows the structure:
//! strings (found with `memchr`), brackets, commas and colons.

use std::borrow::Cow;
use std::collections::HashMap;

/// One key written twice in the same object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    /// Path of the key, like `tasks[3].constraints.max_tokens`.
    pub path: String,
    /// The key.
    pub key: String,
    /// 1-based line of the second (or later) occurrence.
    pub line: usize,
    /// 1-based line of the first.
    pub first_line: usize,
}

/// Objects with more keys than this are looked up through a hash map.
const LINEAR_MAX: usize = 16;

/// The keys seen so far in one object.
#[derive(Default)]
struct KeySet<'a> {
    keys: Vec<(Cow<'a, str>, usize)>,
    index: HashMap<Cow<'a, str>, usize>,
}

impl<'a> KeySet<'a> {
    fn clear(&mut self) {
        self.keys.clear();
        self.index.clear();
    }

    /// Records `key` at `line`; the line of its first occurrence when it is a duplicate.
    fn insert(&mut self, key: Cow<'a, str>, line: usize) -> Option<usize> {
        if self.keys.len() < LINEAR_MAX {
            if let Some((_, first)) = self.keys.iter().find(|(k, _)| *k == key) {
                return Some(*first);
            }
            self.keys.push((key, line));
            return None;
        }
        if self.index.is_empty() {
            self.index.extend(self.keys.iter().cloned());
        }
        if let Some(first) = self.index.get(&key) {
            return Some(*first);
        }
        self.index.insert(key.clone(), line);
        self.keys.push((key, line));
        None
    }
}

enum Frame<'a> {
    /// An object: its keys, the key whose value is being read, whether a key comes next.
    Object {
        keys: KeySet<'a>,
        current: Option<Cow<'a, str>>,
        key_next: bool,
    },
    /// An array and the index of the element being read.
    Array(usize),
}

/// Every duplicate key of `text` (valid JSON), in the order they appear.
pub(crate) fn duplicate_keys(text: &str) -> Vec<DuplicateKey> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut pool: Vec<KeySet<'_>> = Vec::new();
    let mut line = 1usize;
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' => line += 1,
            b'{' => {
                let mut keys = pool.pop().unwrap_or_default();
                keys.clear();
                stack.push(Frame::Object {
                    keys,
                    current: None,
                    key_next: true,
                });
            }
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                if let Some(Frame::Object { keys, .. }) = stack.pop() {
                    pool.push(keys);
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key_next, .. }) => *key_next = true,
                Some(Frame::Array(n)) => *n += 1,
                None => {}
            },
            b'"' => {
                let end = string_end(bytes, i + 1);
                found.extend(key_at(text, &mut stack, i + 1, end, line));
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// When the string at `start..end` of `text` is a key of the innermost object, records
/// it there as the object's current key; the duplicate it makes, if it is one.
fn key_at<'a>(
    text: &'a str,
    stack: &mut [Frame<'a>],
    start: usize,
    end: usize,
    line: usize,
) -> Option<DuplicateKey> {
    let Some(Frame::Object {
        keys,
        current,
        key_next,
    }) = stack.last_mut()
    else {
        return None;
    };
    if !*key_next {
        return None;
    }
    let key = unescape(&text[start..end.min(text.len())]);
    *key_next = false;
    *current = Some(key.clone());
    let first_line = keys.insert(key.clone(), line)?;
    Some(DuplicateKey {
        path: path_of(stack),
        key: key.into_owned(),
        line,
        first_line,
    })
}

/// Index of the closing quote of the string whose text starts at `from` (or the end).
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    loop {
        let rest = bytes.get(from..).unwrap_or_default();
        match memchr::memchr2(b'"', b'\\', rest) {
            Some(k) if rest[k] == b'\\' => from += k + 2,
            Some(k) => return from + k,
            None => return bytes.len(),
        }
    }
}

/// A key's text without its escapes (as serde_json reads it).
fn unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    match serde_json::from_str::<String>(&format!("\"{raw}\"")) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(raw),
    }
}

/// The path of the innermost object's current key: `tasks[3].constraints.max_tokens`.
fn path_of(stack: &[Frame<'_>]) -> String {
    let mut path = String::new();
    for frame in stack {
        match frame {
            Frame::Object {
                current: Some(k), ..
            } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Frame::Object { current: None, .. } => {}
            Frame::Array(n) => {
                path.push('[');
                path.push_str(&n.to_string());
                path.push(']');
            }
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_duplicate_with_line_and_path() {
        let text = "{\"a\": 1,\n \"tasks\": [{\"x\": 1}, {\"x\": 2,\n \"c\": {\"k\": 1, \"k\": [1, {\"k\": 2}]},\n \"x\": 3}],\n \"a\": 2}";
        let found = duplicate_keys(text);
        let got: Vec<(&str, &str, usize, usize)> = found
            .iter()
            .map(|d| (d.path.as_str(), d.key.as_str(), d.line, d.first_line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("tasks[1].c.k", "k", 3, 3),
                ("tasks[1].x", "x", 4, 2),
                ("a", "a", 5, 1)
            ]
        );
    }

    #[test]
    fn escapes_braces_in_strings_and_big_objects() {
        // The same key spelt with an escape; braces, quotes and commas inside strings.
        let text = r#"{"k{,": "v}\",[", "\u006b{,": 1}"#;
        let found = duplicate_keys(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].key, "k{,");
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}, \"k33\": 0}}", many.join(", "));
        let found = duplicate_keys(&text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "k33");
        assert!(duplicate_keys(r#"{"a": {"b": 1}, "b": {"a": 1}}"#).is_empty());
    }
}
