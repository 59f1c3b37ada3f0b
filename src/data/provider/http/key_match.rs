//! Finding an API key in text whatever JSON escapes it is written with: each of its
//! characters as itself, as `\uXXXX` (either case of hex digits; a surrogate pair beyond
//! the BMP), or as a short escape (`\/`, `\\`, `\"`, `\n`, …). What a JSON decoder would
//! turn into the key is found, not only the key as it is spelt.

/// The key to look for.
#[derive(Debug, Clone)]
pub(super) struct KeyPattern {
    chars: Vec<char>,
    /// The first byte of the key as written plainly.
    first: u8,
}

/// What is at one place of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// Not the key.
    No,
    /// The key, in this many bytes of the text.
    Whole(usize),
    /// The text ends inside what may be the key; so many bytes of the key (decoded)
    /// were matched.
    Partial(usize),
}

/// One character at `hay[p..]`: how many bytes it took, or the text ended inside a
/// possible spelling of it, or it is another character.
enum Step {
    Took(usize),
    Ended,
    Other,
}

impl KeyPattern {
    /// The pattern of `key` (not empty).
    pub(super) fn new(key: &str) -> Option<KeyPattern> {
        let first = *key.as_bytes().first()?;
        Some(KeyPattern {
            chars: key.chars().collect(),
            first,
        })
    }

    /// The first byte of the key as written plainly (a match starts with it or with `\`).
    pub(super) fn first_byte(&self) -> u8 {
        self.first
    }

    /// What is at `at` in `hay`.
    pub(super) fn at(&self, hay: &[u8], at: usize) -> Found {
        let mut p = at;
        let mut matched = 0;
        for &c in &self.chars {
            match step(hay, p, c) {
                Step::Took(n) => {
                    p += n;
                    matched += c.len_utf8();
                }
                Step::Ended => return Found::Partial(matched),
                Step::Other => return Found::No,
            }
        }
        Found::Whole(p - at)
    }
}

/// The short JSON escape of `c`, when it has one.
fn short_escape(c: char) -> Option<u8> {
    Some(match c {
        '"' => b'"',
        '\\' => b'\\',
        '/' => b'/',
        '\u{8}' => b'b',
        '\u{c}' => b'f',
        '\n' => b'n',
        '\r' => b'r',
        '\t' => b't',
        _ => return None,
    })
}

/// Matches `c` at `hay[p..]`, escaped forms first (so a backslash of the key is taken as
/// `\\` where it can be).
fn step(hay: &[u8], p: usize, c: char) -> Step {
    let rest = &hay[p.min(hay.len())..];
    let mut ended = false;
    if let Some(e) = short_escape(c) {
        match compare(rest, &[b'\\', e], false) {
            Step::Took(n) => return Step::Took(n),
            Step::Ended => ended = true,
            Step::Other => {}
        }
    }
    let mut units = [0u16; 2];
    let mut form = [0u8; 12];
    let mut n = 0;
    for &u in c.encode_utf16(&mut units).iter() {
        form[n..n + 6].copy_from_slice(&u_escape(u));
        n += 6;
    }
    match compare(rest, &form[..n], true) {
        Step::Took(n) => return Step::Took(n),
        Step::Ended => ended = true,
        Step::Other => {}
    }
    let mut buf = [0u8; 4];
    match compare(rest, c.encode_utf8(&mut buf).as_bytes(), false) {
        Step::Took(n) => Step::Took(n),
        _ if ended => Step::Ended,
        other => other,
    }
}

/// `\uXXXX` of one UTF-16 unit (lower-case hex).
fn u_escape(u: u16) -> [u8; 6] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let d = |shift: u16| HEX[usize::from((u >> shift) & 0xf)];
    [b'\\', b'u', d(12), d(8), d(4), d(0)]
}

/// Whether `rest` starts with `form` (hex digits in either case when `hex`), or ends
/// inside it.
fn compare(rest: &[u8], form: &[u8], hex: bool) -> Step {
    for (i, &f) in form.iter().enumerate() {
        let Some(&b) = rest.get(i) else {
            return Step::Ended;
        };
        let same = if hex && f.is_ascii_hexdigit() {
            b.eq_ignore_ascii_case(&f)
        } else {
            b == f
        };
        if !same {
            return Step::Other;
        }
    }
    Step::Took(form.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-a/b";

    fn pat() -> KeyPattern {
        KeyPattern::new(KEY).expect("a key")
    }

    #[test]
    fn the_key_is_found_in_every_spelling() {
        for text in [
            "sk-a/b",
            "sk-a\\/b",
            "\\u0073\\u006b\\u002d\\u0061\\u002f\\u0062",
            "\\u0073k-a/\\u0062",
            "\\u0073\\u006B-a\\u002F\\u0062",
        ] {
            assert_eq!(
                pat().at(text.as_bytes(), 0),
                Found::Whole(text.len()),
                "{text}"
            );
        }
        // Not `\U` (JSON has only `\u`), not another character.
        assert_eq!(pat().at(b"\\U0073k-a/b", 0), Found::No);
        assert_eq!(pat().at(b"sk-a/c", 0), Found::No);
    }

    #[test]
    fn a_text_ending_inside_the_key_is_a_partial_match() {
        assert_eq!(pat().at(b"sk-", 0), Found::Partial(3));
        assert_eq!(pat().at(b"sk-a\\", 0), Found::Partial(4));
        assert_eq!(pat().at(b"sk-a\\u00", 0), Found::Partial(4));
        assert_eq!(pat().at(b"\\u00", 0), Found::Partial(0));
        assert_eq!(pat().at(b"\\u01", 0), Found::No);
    }

    #[test]
    fn characters_beyond_the_bmp_match_as_surrogate_pairs() {
        let p = KeyPattern::new("k😀y").expect("a key");
        assert_eq!(p.at("k😀y".as_bytes(), 0), Found::Whole(6));
        let escaped = b"k\\ud83d\\ude00y";
        assert_eq!(p.at(escaped, 0), Found::Whole(escaped.len()));
    }
}
