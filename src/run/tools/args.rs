//! Reading arguments already checked against a schema (so a wrong type is treated as
//! absent rather than trusted), and the small helpers the file tools share.

use serde_json::Value;

use super::error::ToolError;

/// A string argument.
pub fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A string argument that is present and not blank.
pub fn nonblank_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    str_arg(args, key).filter(|s| !s.trim().is_empty())
}

/// An integer argument (`2` and `2.0` alike).
pub fn int_arg(args: &Value, key: &str) -> Option<i64> {
    let v = args.get(key)?;
    v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// A boolean argument, `default` when absent.
pub fn bool_arg(args: &Value, key: &str, default: bool) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// A positive count argument, `default` when absent, refused outside `1..=max`.
pub fn count_arg(args: &Value, key: &str, default: usize, max: usize) -> Result<usize, ToolError> {
    match int_arg(args, key) {
        None => Ok(default),
        Some(n) if n >= 1 && n as u64 <= max as u64 => Ok(n as usize),
        Some(n) => Err(ToolError::arguments(format!(
            "{key} must be between 1 and {max}, not {n}"
        ))),
    }
}

/// Whether `bytes` look like binary data: a NUL byte in the first 8 KB.
pub fn looks_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some()
}

/// `s` on one line, at most `max` characters (with `…` when cut).
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_integers_and_counts() {
        let a = json!({"a": 2, "b": 2.0, "c": 2.5, "d": "2", "e": 0});
        assert_eq!(int_arg(&a, "a"), Some(2));
        assert_eq!(int_arg(&a, "b"), Some(2));
        assert_eq!(int_arg(&a, "c"), None);
        assert_eq!(int_arg(&a, "d"), None);
        assert_eq!(count_arg(&a, "a", 5, 10).ok(), Some(2));
        assert_eq!(count_arg(&a, "zz", 5, 10).ok(), Some(5));
        assert!(count_arg(&a, "e", 5, 10).is_err());
    }

    #[test]
    fn flattens_and_cuts_lines() {
        assert_eq!(one_line("  a\tb\nc  ", 10), "a b c");
        assert_eq!(one_line("ééé", 2), "éé…");
        assert!(looks_binary(b"ab\0c"));
        assert!(!looks_binary("plain é".as_bytes()));
    }
}
