//! `file_reader`: a text file of the workspace, whole or a range of lines, under the
//! escape rules of file references ([`crate::data::resolve::file::locate`]).

use std::path::Path;

use serde_json::{json, Value};

use super::args::{int_arg, looks_binary, str_arg};
use super::context::ToolContext;
use super::error::{ToolError, ToolErrorCode};
use super::tool::{run_blocking, Tool, ToolData, ToolFuture};
use crate::data::resolve::file::{decode, locate};

/// Largest file read, in bytes.
pub const MAX_READ_BYTES: u64 = 10 << 20;

/// Reads text files of the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileReader;

impl Tool for FileReader {
    fn name(&self) -> &str {
        "file_reader"
    }

    fn description(&self) -> &str {
        "Reads a text file of the workspace, whole or lines start_line..end_line (1-based, \
         inclusive). Paths are relative to the workspace root (or start with /workspace/); \
         nothing outside the workspace can be read. Binary files and files over 10 MB are refused."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                         "description": "File path relative to the workspace root, e.g. docs/plans.md"},
                "start_line": {"type": "integer", "minimum": 1,
                               "description": "First line to read, 1-based (default 1)"},
                "end_line": {"type": "integer", "minimum": 1,
                             "description": "Last line to read, inclusive (default: the last line)"},
                "encoding": {"type": "string", "enum": ["utf-8", "utf-16le", "utf-16be", "latin-1"],
                             "description": "Text encoding (default utf-8)"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn is_idempotent(&self, _args: &Value) -> bool {
        true
    }

    fn run<'a>(&'a self, ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a> {
        run_blocking(ctx, args, read)
    }
}

/// `real` relative to `root`, with `/` separators (the path as the model should write it).
pub fn workspace_relative(root: &Path, real: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let rel = real.strip_prefix(&root).unwrap_or(real);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn read(ctx: &ToolContext, args: &Value) -> Result<ToolData, ToolError> {
    let path = str_arg(args, "path").unwrap_or_default();
    let real = locate(&ctx.workspace_root, path)?;
    let shown = workspace_relative(&ctx.workspace_root, &real);
    let meta = std::fs::metadata(&real).map_err(|e| ToolError::io(&format!("`{shown}`"), &e))?;
    if !meta.is_file() {
        return Err(ToolError::arguments(format!(
            "`{shown}` is a directory, not a file (file_search lists files)"
        )));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(ToolError::invalid(
            ToolErrorCode::FileTooLarge,
            format!(
                "`{shown}` is {} bytes; file_reader reads files up to {MAX_READ_BYTES} bytes",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(&real).map_err(|e| ToolError::io(&format!("`{shown}`"), &e))?;
    let encoding = str_arg(args, "encoding");
    let utf16 = encoding.is_some_and(|e| e.starts_with("utf-16"));
    if !utf16 && looks_binary(&bytes) {
        return Err(ToolError::invalid(
            ToolErrorCode::BinaryFile,
            format!("`{shown}` holds binary data, not text"),
        ));
    }
    let text = decode(&bytes, encoding, &shown)?;
    select_lines(
        &shown,
        &text,
        int_arg(args, "start_line"),
        int_arg(args, "end_line"),
    )
}

/// Lines `start..=end` (1-based; defaults: the first and the last) of `text`; an end past
/// the last line is the last line, a start past it an error.
pub fn select_lines(
    shown: &str,
    text: &str,
    start: Option<i64>,
    end: Option<i64>,
) -> Result<ToolData, ToolError> {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len() as i64;
    let start = start.unwrap_or(1);
    if start < 1 || end.is_some_and(|e| e < 1) {
        return Err(ToolError::arguments("line numbers start at 1"));
    }
    if let Some(e) = end.filter(|&e| e < start) {
        return Err(ToolError::arguments(format!(
            "end_line {e} is before start_line {start}"
        )));
    }
    if start > total.max(1) {
        return Err(ToolError::arguments(format!(
            "start_line {start} is past the end of `{shown}`, which has {total} lines"
        )));
    }
    let end = end.unwrap_or(total).min(total);
    let picked = if total == 0 {
        &[][..]
    } else {
        &lines[(start - 1) as usize..end as usize]
    };
    let content = picked.join("\n");
    let chars = content.chars().count();
    // The brief level shows no line: it says what was read and the range's first and
    // last lines, and does not claim the characters are shown.
    let brief = match (picked.first(), picked.last()) {
        (Some(first), Some(last)) => format!(
            "Read lines {start}–{end} of `{shown}` ({total} lines, {chars} characters;              ask for output_level standard to see them). First line: `{}`; last line: `{}`.",
            crate::base::text::cut::cut_chars(first.trim(), 120),
            crate::base::text::cut::cut_chars(last.trim(), 120)
        ),
        _ => format!("`{shown}` is empty."),
    };
    let width = end.max(1).to_string().len();
    let mut standard = if total == 0 {
        brief.clone()
    } else {
        format!("Read lines {start}–{end} of `{shown}` ({total} lines, {chars} characters shown).")
    };
    for (i, line) in picked.iter().enumerate() {
        standard.push_str(&format!("\n{:>width$} | {line}", start + i as i64));
    }
    let data = json!({
        "path": shown,
        "start_line": start,
        "end_line": end,
        "total_lines": total,
        "content": content,
    });
    Ok(ToolData::json(data, brief, standard))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::messages::OutputLevel;

    fn content(d: &ToolData) -> Value {
        match &d.payload {
            super::super::tool::Payload::Json(v) => v["content"].clone(),
            super::super::tool::Payload::Text(_) => Value::Null,
        }
    }

    #[test]
    fn picks_inclusive_ranges_and_clamps_the_end() {
        let text = "a\nb\nc\nd\n";
        let d = select_lines("f", text, Some(2), Some(3)).expect("ok");
        assert_eq!(content(&d), "b\nc");
        assert!(d.render(OutputLevel::Standard).ends_with("2 | b\n3 | c"));
        let d = select_lines("f", text, Some(3), Some(99)).expect("ok");
        assert_eq!(content(&d), "c\nd");
        let d = select_lines("f", text, None, None).expect("ok");
        assert_eq!(content(&d), "a\nb\nc\nd");
        let d = select_lines("f", text, Some(4), Some(4)).expect("ok");
        assert_eq!(content(&d), "d");
    }

    #[test]
    fn the_brief_level_names_the_first_and_last_lines_and_claims_none_shown() {
        let d = select_lines("a.md", "one\ntwo\nthree\nfour\n", Some(2), Some(3)).expect("read");
        assert!(
            d.brief.contains("First line: `two`; last line: `three`"),
            "{}",
            d.brief
        );
        assert!(!d.brief.contains("shown"), "{}", d.brief);
        assert!(d.standard.contains("characters shown"), "{}", d.standard);
    }

    #[test]
    fn refuses_impossible_ranges() {
        let text = "a\nb\n";
        assert!(select_lines("f", text, Some(3), None).is_err());
        assert!(select_lines("f", text, Some(2), Some(1)).is_err());
        assert!(select_lines("f", text, Some(0), None).is_err());
        let empty = select_lines("f", "", None, None).expect("an empty file reads");
        assert_eq!(content(&empty), "");
    }
}
