//! The size of the code held by a test: no function in `src/` over 200 lines, at most
//! 3 functions over 100 lines per 10,000 lines of code, no block nested deeper than 5
//! levels inside a function, and no file over 600 lines. A function is measured from its
//! `fn` line to its closing brace (its doc and attributes left out), a nested function
//! both on its own and inside its parent; nesting is the depth of braces inside the
//! function's body (its body is level 0; a struct literal counts like a block, a JSON
//! value written with `json!` does not).

/// The longest a function may be.
const MAX_FN_LINES: usize = 200;
/// A function longer than this counts as long.
const LONG_FN_LINES: usize = 100;
/// Long functions allowed per 10,000 lines.
const LONG_PER_10K: f64 = 3.0;
/// The deepest a block may sit inside a function's body.
const MAX_NESTING: usize = 5;
/// The longest a file may be.
const MAX_FILE_LINES: usize = 600;

/// One function: where it starts, its name, its length and its deepest block.
#[derive(Debug, Clone, PartialEq)]
struct Function {
    line: usize,
    name: String,
    lines: usize,
    nesting: usize,
}

/// `text` with comments, strings and character literals blanked (each replaced by
/// spaces, line breaks kept), so that braces are only the code's.
fn blank_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }))
    };
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            rest.windows(2)
                .position(|w| w == b"*/")
                .map_or(rest.len(), |p| p + 2)
        } else if let Some(n) = raw_string_len(rest) {
            n
        } else if rest[0] == b'"' {
            string_len(rest)
        } else if rest[0] == b'\'' {
            char_literal_len(rest).unwrap_or(1)
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        let keep_quote = rest[0] == b'\'' && end == 1;
        if keep_quote {
            out.push(b'\'');
        } else {
            blank(&mut out, &rest[..end]);
        }
        i += end;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The length of a raw string (`r"…"`, `r#"…"#`, `br"…"`) at the start of `s`.
fn raw_string_len(s: &[u8]) -> Option<usize> {
    let start = if s.starts_with(b"br") {
        2
    } else if s.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = s[start..].iter().take_while(|&&c| c == b'#').count();
    if s.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let body = start + hashes + 1;
    let at = s[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())?;
    Some(body + at + close.len())
}

/// The length of a string literal at the start of `s`.
fn string_len(s: &[u8]) -> usize {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// The length of a character literal at the start of `s` (`None`: a lifetime).
fn char_literal_len(s: &[u8]) -> Option<usize> {
    if s.get(1) == Some(&b'\\') {
        return s[2..].iter().position(|&c| c == b'\'').map(|p| p + 3);
    }
    let text = std::str::from_utf8(&s[1..s.len().min(6)])
        .unwrap_or_else(|e| std::str::from_utf8(&s[1..1 + e.valid_up_to()]).unwrap_or_default());
    let c = text.chars().next()?;
    let after = 1 + c.len_utf8();
    (s.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// `code` with the braces inside `json!(…)` blanked: a JSON value written in the code
/// is data, not nested blocks.
fn blank_json(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(at) = code[from..].find("json!(") {
        let open = from + at + "json!".len();
        let mut depth = 0usize;
        let mut end = code.len();
        for (i, c) in code[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        for b in &mut out[open..end] {
            if matches!(*b, b'{' | b'}') {
                *b = b' ';
            }
        }
        from = end.max(open + 1);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every function of a file's code (literals blanked): its length, and its nesting with
/// JSON values left out.
fn functions(code: &str) -> Vec<Function> {
    let lines: Vec<&str> = code.lines().collect();
    let without_json = blank_json(code);
    let flat: Vec<&str> = without_json.lines().collect();
    let mut out = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        let Some(name) = fn_name(l) else { continue };
        let (Some((end, _)), Some((_, nesting))) = (body_of(&lines, n), body_of(&flat, n)) else {
            continue;
        };
        out.push(Function {
            line: n + 1,
            name,
            lines: end - n + 1,
            nesting,
        });
    }
    out
}

/// The name of the function a line declares, if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "fn" {
            let next = words.peek()?;
            let name: String = next
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            return (!name.is_empty()).then_some(name);
        }
        let qualifier = w.starts_with("pub")
            || matches!(
                w,
                "async" | "const" | "unsafe" | "extern" | "\"C\"" | "default"
            );
        if !qualifier {
            return None;
        }
    }
    None
}

/// The line a function's body ends on and its deepest block, from its `fn` line
/// (`None`: a declaration without a body).
fn body_of(lines: &[&str], start: usize) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut opened = false;
    for (n, l) in lines.iter().enumerate().skip(start) {
        for c in l.chars() {
            match c {
                ';' if !opened && depth == 0 => return None,
                '{' => {
                    depth += 1;
                    opened = true;
                    deepest = deepest.max(depth);
                }
                '}' => {
                    depth = depth.saturating_sub(1);
                    if opened && depth == 0 {
                        return Some((n, deepest.saturating_sub(1)));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

#[test]
fn functions_are_short_and_shallow_and_files_small() {
    let files = crate::common::src_files();
    let total: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    let mut problems = Vec::new();
    let mut long = Vec::new();
    for (file, text) in &files {
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            problems.push(format!("{file}: {n} lines (at most {MAX_FILE_LINES})"));
        }
        for f in functions(&blank_literals(text)) {
            let at = format!("{file}:{} `{}`", f.line, f.name);
            if f.lines > MAX_FN_LINES {
                problems.push(format!("{at}: {} lines (at most {MAX_FN_LINES})", f.lines));
            }
            if f.lines > LONG_FN_LINES {
                long.push(format!("{at}: {} lines", f.lines));
            }
            if f.nesting > MAX_NESTING {
                problems.push(format!(
                    "{at}: nested {} deep (at most {MAX_NESTING})",
                    f.nesting
                ));
            }
        }
    }
    let per_10k = long.len() as f64 * 10_000.0 / total as f64;
    eprintln!(
        "{total} lines, {} functions over {LONG_FN_LINES} lines ({per_10k:.1} per 10k)",
        long.len()
    );
    if per_10k > LONG_PER_10K {
        problems.push(format!(
            "{} functions over {LONG_FN_LINES} lines in {total}: {per_10k:.1} per 10k (at most {LONG_PER_10K}):\n  {}",
            long.len(),
            long.join("\n  ")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_measure_reads_lengths_nesting_and_literals_as_rust_does() {
    let code = r##"
/// Doc.
pub(crate) async fn outer(x: u8) -> u8 {
    let s = "} not a brace {";
    let r = r#"{{{"#;
    let c = '{';
    // a comment }
    fn inner<'a>(v: &'a str) -> &'a str {
        if v.is_empty() {
            match v {
                _ => {
                    v
                }
            }
        } else {
            v
        }
    }
    let v = json!({"a": {"b": {"c": {"d": {"e": 1}}}}});
    x
}
fn declared();
"##;
    let fs = functions(&blank_literals(code));
    let by_name = |n: &str| fs.iter().find(|f| f.name == n).cloned().expect(n);
    assert_eq!(by_name("outer").lines, 19);
    assert_eq!(by_name("outer").nesting, 4);
    assert_eq!(by_name("inner").lines, 11);
    assert_eq!(by_name("inner").nesting, 3);
    assert!(fs.iter().all(|f| f.name != "declared"));
}
