//! `file_search`: files of the workspace whose path matches a glob, optionally the lines
//! in them that contain a text or match a regex. Patterns that try to leave the
//! workspace are refused; the walk never follows a link out of it.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use regex::{Regex, RegexBuilder};
use serde_json::{json, Value};

use super::args::{bool_arg, count_arg, looks_binary, one_line, str_arg};
use super::context::ToolContext;
use super::error::{ToolError, ToolErrorCode};
use super::tool::{run_blocking, Tool, ToolData, ToolFuture};
use crate::data::resolve::file::locate;

/// Most hits (files, or matching lines) returned.
pub const MAX_HITS: usize = 1_000;

/// Most directory entries looked at in one search.
pub const MAX_ENTRIES: usize = 200_000;

/// Largest file searched for text, in bytes (larger ones are skipped and counted).
pub const MAX_SEARCH_FILE_BYTES: u64 = 10 << 20;

/// Characters of a matching line shown.
const LINE_CHARS: usize = 200;

/// Searches the workspace by path pattern and content.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileSearch;

impl Tool for FileSearch {
    fn name(&self) -> &str {
        "file_search"
    }

    fn description(&self) -> &str {
        "Finds files of the workspace whose path matches a glob (`*` stays within one folder, \
         `**` crosses folders: `**/*.md` is every Markdown file, `docs/*.md` those directly in docs), \
         and optionally the lines in them containing `text` (a regex when `regex` is true). \
         Results are workspace-relative paths, with line numbers for text searches, at most 1000."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "maxLength": 1000,
                            "description": "Glob relative to the workspace root, e.g. **/*.rs"},
                "text": {"type": "string", "minLength": 1, "maxLength": 1000,
                         "description": "Only lines containing this text (or matching it, with regex)"},
                "regex": {"type": "boolean", "description": "Treat text as a regular expression (default false)"},
                "case_sensitive": {"type": "boolean", "description": "Match text case-sensitively (default true)"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_HITS,
                                "description": "Most results (default and limit 1000)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn is_idempotent(&self, _args: &Value) -> bool {
        true
    }

    fn run<'a>(&'a self, ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a> {
        run_blocking(ctx, args, search)
    }
}

/// The pattern relative to the root, or why it may not be used: absolute patterns
/// outside the workspace and `..` segments are refused; `/workspace/…` is the root.
pub fn workspace_pattern(pattern: &str) -> Result<&str, ToolError> {
    let rel = pattern.strip_prefix("/workspace/").unwrap_or(pattern);
    let rel = rel.strip_prefix("./").unwrap_or(rel);
    if rel.contains('\0') {
        return Err(ToolError::arguments("the pattern holds a NUL character"));
    }
    if rel.starts_with('/') || rel.starts_with('\\') || rel.get(1..2) == Some(":") {
        return Err(ToolError::denied(format!(
            "`{pattern}`: absolute patterns outside the workspace are not allowed"
        )));
    }
    if rel.split(['/', '\\']).any(|seg| seg == "..") {
        return Err(ToolError::denied(format!(
            "`{pattern}`: `..` is not allowed; patterns stay inside the workspace"
        )));
    }
    Ok(rel)
}

/// The folders of the pattern before its first wildcard (`docs/notes` of
/// `docs/notes/**/*.md`), where the walk starts.
fn literal_base(rel: &str) -> &str {
    let segs: Vec<&str> = rel.split('/').collect();
    let mut len = 0;
    for (i, seg) in segs[..segs.len().saturating_sub(1)].iter().enumerate() {
        if seg.is_empty() || seg.contains(['*', '?', '[', '{', '\\']) {
            break;
        }
        len += seg.len() + usize::from(i > 0);
    }
    &rel[..len]
}

fn text_matcher(args: &Value) -> Result<Option<Regex>, ToolError> {
    let Some(text) = str_arg(args, "text").filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let source = if bool_arg(args, "regex", false) {
        text.to_string()
    } else {
        regex::escape(text)
    };
    RegexBuilder::new(&source)
        .case_insensitive(!bool_arg(args, "case_sensitive", true))
        .size_limit(1 << 20)
        .build()
        .map(Some)
        .map_err(|e| {
            ToolError::arguments(format!(
                "`{text}` is not a usable regex: {}",
                one_line(&e.to_string(), 300)
            ))
        })
}

/// What a search found and skipped.
#[derive(Default)]
struct Found {
    hits: Vec<Value>,
    files_matched: usize,
    files_scanned: usize,
    skipped_binary: usize,
    skipped_large: usize,
    skipped_not_utf8: usize,
    links_outside: usize,
    stopped: Option<String>,
}

struct Search<'a> {
    ctx: &'a ToolContext,
    root: PathBuf,
    glob: GlobMatcher,
    text: Option<Regex>,
    limit: usize,
    entries: usize,
    found: Found,
}

fn search(ctx: &ToolContext, args: &Value) -> Result<ToolData, ToolError> {
    let pattern = str_arg(args, "pattern").unwrap_or_default();
    let rel = workspace_pattern(pattern)?;
    let glob = GlobBuilder::new(rel)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::arguments(format!("`{pattern}` is not a usable glob: {e}")))?
        .compile_matcher();
    let text = text_matcher(args)?;
    let limit = count_arg(args, "max_results", MAX_HITS, MAX_HITS)?;
    let root = ctx.workspace_root.canonicalize().map_err(|e| {
        ToolError::not_found(
            ToolErrorCode::NotFound,
            format!("workspace {}: {e}", ctx.workspace_root.display()),
        )
    })?;
    let base = literal_base(rel);
    let start = if base.is_empty() {
        Some(root.clone())
    } else {
        match locate(&root, base) {
            Ok(p) if p.is_dir() => Some(p),
            Ok(_) => None,
            Err(f) => match ToolError::from(f) {
                e if e.code == ToolErrorCode::PermissionDenied => return Err(e),
                _ => None,
            },
        }
    };
    let mut s = Search {
        ctx,
        root,
        glob,
        text,
        limit,
        entries: 0,
        found: Found::default(),
    };
    if let Some(start) = start {
        s.walk(start, base.to_string());
    }
    Ok(report(pattern, args, s.text.is_some(), limit, s.found))
}

impl Search<'_> {
    fn full(&self) -> bool {
        self.found.stopped.is_some()
    }

    /// Walks `dir` (real path) whose workspace-relative path is `rel`, depth first in
    /// name order. Links are followed only to files inside the workspace, never to
    /// folders (no cycles); `.git` is skipped.
    fn walk(&mut self, dir: PathBuf, rel: String) {
        let mut stack = vec![(dir, rel)];
        while let Some((dir, rel)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
            entries.sort_by_key(|e| e.file_name());
            let mut subdirs = Vec::new();
            for entry in entries {
                if self.full() {
                    return;
                }
                self.entries += 1;
                if self.entries > MAX_ENTRIES {
                    self.found.stopped = Some(format!("looked at {MAX_ENTRIES} entries"));
                    return;
                }
                if self.ctx.cancel.is_cancelled() {
                    self.found.stopped = Some("the time limit was reached".into());
                    return;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                let path_rel = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let Ok(ft) = entry.file_type() else {
                    continue;
                };
                if ft.is_dir() {
                    if name != ".git" {
                        subdirs.push((entry.path(), path_rel));
                    }
                } else if ft.is_file() {
                    self.consider(&entry.path(), &path_rel);
                } else if ft.is_symlink() {
                    match entry.path().canonicalize() {
                        Ok(real) if !real.starts_with(&self.root) => self.found.links_outside += 1,
                        Ok(real) if real.is_file() => self.consider(&real, &path_rel),
                        _ => {}
                    }
                }
            }
            // Pushed in reverse so the first folder by name is walked first.
            stack.extend(subdirs.into_iter().rev());
        }
    }

    fn consider(&mut self, path: &Path, rel: &str) {
        if !self.glob.is_match(rel) {
            return;
        }
        let Some(re) = &self.text else {
            self.found.files_matched += 1;
            self.found.hits.push(Value::String(rel.to_string()));
            if self.found.hits.len() >= self.limit {
                self.found.stopped = Some(format!("reached the limit of {} results", self.limit));
            }
            return;
        };
        match std::fs::metadata(path) {
            Ok(m) if m.len() > MAX_SEARCH_FILE_BYTES => {
                self.found.skipped_large += 1;
                return;
            }
            Err(_) => return,
            Ok(_) => {}
        }
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        if looks_binary(&bytes) {
            self.found.skipped_binary += 1;
            return;
        }
        let Ok(text) = std::str::from_utf8(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes))
        else {
            self.found.skipped_not_utf8 += 1;
            return;
        };
        self.found.files_scanned += 1;
        let mut any = false;
        for (i, line) in text.lines().enumerate() {
            if !re.is_match(line) {
                continue;
            }
            any = true;
            self.found
                .hits
                .push(json!({"path": rel, "line": i + 1, "text": one_line(line, LINE_CHARS)}));
            if self.found.hits.len() >= self.limit {
                self.found.stopped = Some(format!("reached the limit of {} results", self.limit));
                break;
            }
        }
        if any {
            self.found.files_matched += 1;
        }
    }
}

fn report(pattern: &str, args: &Value, text_search: bool, limit: usize, f: Found) -> ToolData {
    let text = str_arg(args, "text").unwrap_or_default();
    let mut brief = match (text_search, f.hits.len()) {
        (false, 0) => format!("No files match `{pattern}`."),
        (false, n) => format!("Found {n} files matching `{pattern}`."),
        (true, 0) => format!("No lines match `{text}` in files matching `{pattern}` ({} files searched).", f.files_scanned),
        (true, n) => format!(
            "Found {n} matching lines for `{text}` in {} files (files matching `{pattern}`, {} searched).",
            f.files_matched, f.files_scanned
        ),
    };
    if let Some(why) = &f.stopped {
        brief.push_str(&format!(
            " The search stopped early ({why}); there may be more: narrow the pattern."
        ));
    }
    let skipped = f.skipped_binary + f.skipped_large + f.skipped_not_utf8;
    if skipped > 0 {
        brief.push_str(&format!(
            " Skipped {skipped} files ({} binary, {} over {MAX_SEARCH_FILE_BYTES} bytes, {} not UTF-8).",
            f.skipped_binary, f.skipped_large, f.skipped_not_utf8
        ));
    }
    if f.links_outside > 0 {
        brief.push_str(&format!(
            " Ignored {} links leading out of the workspace.",
            f.links_outside
        ));
    }
    let mut standard = brief.clone();
    for h in &f.hits {
        match h {
            Value::String(p) => standard.push_str(&format!("\n{}", one_line(p, 500))),
            _ => standard.push_str(&format!(
                "\n{}:{}: {}",
                one_line(h["path"].as_str().unwrap_or_default(), 500),
                h["line"],
                h["text"].as_str().unwrap_or_default()
            )),
        }
    }
    let key = if text_search { "matches" } else { "files" };
    let data = json!({
        "pattern": pattern,
        "text": if text_search { Value::String(text.to_string()) } else { Value::Null },
        key: f.hits,
        "files_matched": f.files_matched,
        "truncated": f.stopped.is_some(),
        "stopped_because": f.stopped,
        "limit": limit,
        "skipped": {
            "binary": f.skipped_binary,
            "too_large": f.skipped_large,
            "not_utf8": f.skipped_not_utf8,
            "links_outside": f.links_outside,
        },
    });
    ToolData::json(data, brief, standard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_stay_in_the_workspace() {
        assert_eq!(workspace_pattern("**/*.md").ok(), Some("**/*.md"));
        assert_eq!(
            workspace_pattern("/workspace/docs/*.md").ok(),
            Some("docs/*.md")
        );
        assert_eq!(workspace_pattern("./a/*").ok(), Some("a/*"));
        for bad in ["../**", "a/../../b", "/etc/*", "/**", "C:/x", "a\\..\\b"] {
            let e = workspace_pattern(bad).expect_err(bad);
            assert_eq!(e.code, ToolErrorCode::PermissionDenied, "{bad}");
        }
    }

    #[test]
    fn the_walk_starts_at_the_literal_folders() {
        assert_eq!(literal_base("docs/notes/**/*.md"), "docs/notes");
        assert_eq!(literal_base("docs/readme.md"), "docs");
        assert_eq!(literal_base("**/*.md"), "");
        assert_eq!(literal_base("*.md"), "");
        assert_eq!(literal_base("a/*/b/*.md"), "a");
    }
}
