//! `file` references (seed 000 §2.3): md, json, txt (and pdf text) read from inside the
//! workspace. An absolute path inside the workspace is taken relative to it; `..`,
//! absolute paths outside the workspace and symlinks that lead out of it are
//! REF_PERMISSION_DENIED; `/workspace/…` (the seed's own convention) means the workspace
//! root.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

use super::RefFailure;
use crate::base::protocol::refs::RefErrorCode;
use crate::base::protocol::FileRef;

/// Largest file read (bytes).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

fn fail(code: RefErrorCode, message: impl Into<String>) -> RefFailure {
    RefFailure {
        code,
        message: message.into(),
    }
}

/// Resolves `r.path` inside `root`; errors name the path.
pub fn locate(root: &Path, path: &str) -> Result<PathBuf, RefFailure> {
    let denied = |why: &str| {
        fail(
            RefErrorCode::RefPermissionDenied,
            format!("`{path}`: {why}"),
        )
    };
    if path.is_empty() || path.contains('\0') {
        return Err(denied("not a usable path"));
    }
    let given = Path::new(path);
    let rel: &Path = if let Some(rest) = path.strip_prefix("/workspace/") {
        Path::new(rest)
    } else if given.is_absolute() {
        // An absolute path inside the workspace is taken relative to it (as the
        // workspace is written, or as it resolves); one outside it is refused below.
        let real_root = root.canonicalize().ok();
        real_root
            .as_deref()
            .and_then(|r| given.strip_prefix(r).ok())
            .or_else(|| given.strip_prefix(root).ok())
            .unwrap_or(given)
    } else {
        given
    };
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
    {
        return Err(denied(
            "absolute paths outside the workspace are not allowed",
        ));
    }
    if rel.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(denied("`..` is not allowed"));
    }
    let root = root.canonicalize().map_err(|e| {
        fail(
            RefErrorCode::RefNotFound,
            format!("workspace {}: {e}", root.display()),
        )
    })?;
    let joined = root.join(rel);
    let real = match joined.canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink inside the workspace is still not found; one that points
            // out is denied.
            if let Ok(target) = std::fs::read_link(&joined) {
                let t = if target.is_absolute() {
                    target
                } else {
                    joined.parent().unwrap_or(&root).join(target)
                };
                if !t.starts_with(&root) {
                    return Err(denied("a symlink leads out of the workspace"));
                }
            }
            return Err(fail(
                RefErrorCode::RefNotFound,
                format!("`{path}`: no such file in the workspace"),
            ));
        }
        Err(e) => return Err(fail(RefErrorCode::RefNotFound, format!("`{path}`: {e}"))),
    };
    if !real.starts_with(&root) {
        return Err(denied("a symlink leads out of the workspace"));
    }
    Ok(real)
}

/// Decodes bytes in the named encoding (utf-8 by default; utf-16le/be; latin-1).
pub fn decode(bytes: &[u8], encoding: Option<&str>, path: &str) -> Result<String, RefFailure> {
    let enc = encoding
        .unwrap_or("utf-8")
        .to_ascii_lowercase()
        .replace('_', "-");
    let bad = |why: String| fail(RefErrorCode::RefFormatError, format!("`{path}`: {why}"));
    match enc.as_str() {
        "utf-8" | "utf8" => {
            let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            String::from_utf8(b.to_vec()).map_err(|e| bad(format!("not valid UTF-8 ({e})")))
        }
        "utf-16le" | "utf-16be" | "utf-16" => {
            let (le, body) = match bytes {
                [0xFF, 0xFE, rest @ ..] => (true, rest),
                [0xFE, 0xFF, rest @ ..] => (false, rest),
                _ => (enc != "utf-16be", bytes),
            };
            if body.len() % 2 != 0 {
                return Err(bad("odd number of bytes for UTF-16".into()));
            }
            let units: Vec<u16> = body
                .chunks_exact(2)
                .map(|c| {
                    if le {
                        u16::from_le_bytes([c[0], c[1]])
                    } else {
                        u16::from_be_bytes([c[0], c[1]])
                    }
                })
                .collect();
            String::from_utf16(&units).map_err(|e| bad(format!("not valid UTF-16 ({e})")))
        }
        "latin-1" | "latin1" | "iso-8859-1" => Ok(bytes.iter().map(|&b| b as char).collect()),
        other => Err(bad(format!(
            "unsupported encoding `{other}` (utf-8, utf-16le, utf-16be, latin-1)"
        ))),
    }
}

/// Markdown sections whose heading contains one of `names` (case-insensitive), each with
/// the text up to the next heading of the same or a higher level. Headings are the
/// document's own (`#` and underlined ones); a `#` line in a code block is not one.
pub fn md_sections(text: &str, names: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let headings = md_headings(text);
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        let want = name.to_lowercase();
        match headings
            .iter()
            .position(|h| h.text.to_lowercase().contains(&want))
        {
            Some(k) => {
                let h = &headings[k];
                let end = headings[k + 1..]
                    .iter()
                    .find(|n| n.level <= h.level)
                    .map_or(lines.len(), |n| n.first);
                let body = lines.get(h.last + 1..end).unwrap_or_default();
                found.push((h.text.clone(), body.join("\n").trim().to_string()));
            }
            None => missing.push(name.clone()),
        }
    }
    (found, missing)
}

/// A Markdown heading: its level, its text, and the lines it spans (0-based, as
/// `str::lines` counts them; two or more for an underlined heading).
struct MdHeading {
    level: usize,
    text: String,
    first: usize,
    last: usize,
}

/// The top-level headings of a Markdown document, in order — not those in code blocks,
/// HTML blocks or front matter, nor those nested in quotes or lists.
fn md_headings(text: &str) -> Vec<MdHeading> {
    use pulldown_cmark::{Event, Options, Parser, Tag};

    // The line of a byte offset: how many lines start at or before it, less one.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect();
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset) - 1;
    let mut out = Vec::new();
    let mut depth = 0usize;
    // The heading being read: its level, its span, and the span of its text.
    let mut open: Option<(
        usize,
        std::ops::Range<usize>,
        Option<std::ops::Range<usize>>,
    )> = None;
    let parser = Parser::new_ext(text, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS);
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) if depth == 0 => {
                depth += 1;
                open = Some((level as usize, range, None));
                continue;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some((level, span, inner)) = open.take() {
                        out.push(heading(text, level, span, inner, &line_of));
                    }
                    continue;
                }
            }
            _ => {}
        }
        if let Some((_, _, inner)) = &mut open {
            *inner = Some(match inner.take() {
                Some(r) => r.start.min(range.start)..r.end.max(range.end),
                None => range,
            });
        }
    }
    out
}

/// The heading of `level` that spans bytes `span` of `text`, its text (bytes `inner`)
/// on one line; `line_of` gives the line of a byte offset.
fn heading(
    text: &str,
    level: usize,
    span: std::ops::Range<usize>,
    inner: Option<std::ops::Range<usize>>,
    line_of: &dyn Fn(usize) -> usize,
) -> MdHeading {
    let inner = inner.map_or("", |r| &text[r]);
    let parts: Vec<&str> = inner.lines().map(str::trim).collect();
    MdHeading {
        level,
        text: parts.join(" ").trim().to_string(),
        first: line_of(span.start),
        last: line_of(span.end.saturating_sub(1).max(span.start)),
    }
}

/// Plain-text sections (PDF text has no markup): a short line naming the section
/// ("Abstract", "1 Introduction", "3.2 Methodology") starts it; the next line that
/// names another known or wanted section ends it.
pub fn text_sections(text: &str, names: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    const COMMON: [&str; 11] = [
        "abstract",
        "introduction",
        "related work",
        "background",
        "method",
        "methodology",
        "experiments",
        "results",
        "discussion",
        "conclusion",
        "references",
    ];
    // A title without its number: "7 Conclusion" and "Conclusion" name one section,
    // whether the line or the name asked for carries the number.
    let title_of = |l: &str| -> String {
        l.trim()
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
            .to_lowercase()
    };
    let all: Vec<String> = COMMON
        .iter()
        .map(|s| s.to_string())
        .chain(names.iter().map(|n| title_of(n)))
        .collect();
    let is_title = |l: &str, name: &str| {
        let t = title_of(l);
        !t.is_empty() && t.len() <= name.len() + 12 && t.starts_with(name)
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        let want = title_of(name);
        match lines.iter().position(|l| is_title(l, &want)) {
            Some(i) => {
                let end = lines[i + 1..]
                    .iter()
                    .position(|l| all.iter().any(|n| *n != want && is_title(l, n)))
                    .map_or(lines.len(), |p| i + 1 + p);
                found.push((
                    lines[i].trim().to_string(),
                    lines[i + 1..end].join("\n").trim().to_string(),
                ));
            }
            None => missing.push(name.clone()),
        }
    }
    (found, missing)
}

/// Source files by extension, and the language each is in: passed as code (whole, or as
/// whole functions), never summarised as prose.
pub const CODE_EXTENSIONS: [(&str, &str); 30] = [
    ("py", "python"),
    ("rs", "rust"),
    ("ts", "typescript"),
    ("tsx", "typescript"),
    ("js", "javascript"),
    ("jsx", "javascript"),
    ("mjs", "javascript"),
    ("go", "go"),
    ("java", "java"),
    ("kt", "kotlin"),
    ("scala", "scala"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("hpp", "cpp"),
    ("cs", "csharp"),
    ("rb", "ruby"),
    ("php", "php"),
    ("swift", "swift"),
    ("sh", "shell"),
    ("bash", "shell"),
    ("sql", "sql"),
    ("r", "r"),
    ("jl", "julia"),
    ("lua", "lua"),
    ("hs", "haskell"),
    ("ml", "ocaml"),
    ("toml", "toml"),
    ("yaml", "yaml"),
];

/// The language of a source file's extension (lower case), if it is one.
pub fn code_language(ext: &str) -> Option<&'static str> {
    CODE_EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, l)| *l)
}

/// Reads a file reference into a JSON value: `{"path", "format", "text" | "data" |
/// "sections"}` (a source file: `"format": "code"` and its `language`).
pub fn resolve_file(root: &Path, r: &FileRef) -> Result<Value, RefFailure> {
    let real = locate(root, &r.path)?;
    let meta = std::fs::metadata(&real)
        .map_err(|e| fail(RefErrorCode::RefNotFound, format!("`{}`: {e}", r.path)))?;
    if !meta.is_file() {
        return Err(fail(
            RefErrorCode::RefFormatError,
            format!("`{}` is not a file", r.path),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(
            RefErrorCode::RefFormatError,
            format!(
                "`{}` is {} bytes; the limit is {MAX_FILE_BYTES}",
                r.path,
                meta.len()
            ),
        ));
    }
    let format = r
        .format
        .clone()
        .or_else(|| {
            real.extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
        })
        .unwrap_or_else(|| "txt".into());
    let bytes = std::fs::read(&real)
        .map_err(|e| fail(RefErrorCode::RefNotFound, format!("`{}`: {e}", r.path)))?;
    let sections = r.sections.clone().unwrap_or_default();
    let with_sections = |text: String, md: bool| -> Result<Value, RefFailure> {
        if sections.is_empty() {
            return Ok(json!({"path": r.path, "format": format, "text": text}));
        }
        let (found, missing) = if md {
            md_sections(&text, &sections)
        } else {
            text_sections(&text, &sections)
        };
        if found.is_empty() {
            return Err(fail(
                RefErrorCode::RefNotFound,
                format!(
                    "`{}` has none of the sections {}",
                    r.path,
                    sections.join(", ")
                ),
            ));
        }
        let sec: serde_json::Map<String, Value> = found
            .into_iter()
            .map(|(h, t)| (h, Value::String(t)))
            .collect();
        Ok(json!({"path": r.path, "format": format, "sections": sec, "missing_sections": missing}))
    };
    match format.as_str() {
        "md" | "markdown" => with_sections(decode(&bytes, r.encoding.as_deref(), &r.path)?, true),
        "txt" | "text" => with_sections(decode(&bytes, r.encoding.as_deref(), &r.path)?, false),
        "json" => {
            let text = decode(&bytes, r.encoding.as_deref(), &r.path)?;
            let data: Value = serde_json::from_str(&text).map_err(|e| {
                fail(
                    RefErrorCode::RefFormatError,
                    format!("`{}` is not valid JSON: {e}", r.path),
                )
            })?;
            Ok(json!({"path": r.path, "format": "json", "data": data}))
        }
        "pdf" => with_sections(super::pdf::extract(&bytes, &r.path)?, false),
        "code" => {
            let text = decode(&bytes, r.encoding.as_deref(), &r.path)?;
            let ext = real.extension().and_then(|e| e.to_str()).unwrap_or_default();
            let language = code_language(&ext.to_ascii_lowercase()).unwrap_or("unknown");
            Ok(json!({"path": r.path, "format": "code", "language": language, "text": text}))
        }
        "tex" | "latex" => {
            let text = decode(&bytes, r.encoding.as_deref(), &r.path)?;
            Ok(json!({"path": r.path, "format": "tex", "text": text}))
        }
        other => match code_language(other) {
            Some(language) => {
                let text = decode(&bytes, r.encoding.as_deref(), &r.path)?;
                Ok(json!({"path": r.path, "format": "code", "language": language, "text": text}))
            }
            None => Err(fail(
                RefErrorCode::RefFormatError,
                format!(
                    "`{}`: unsupported format `{other}` (md, json, txt, pdf, tex, or source code by its extension: {})",
                    r.path,
                    CODE_EXTENSIONS.iter().map(|(e, _)| *e).collect::<Vec<_>>().join(", ")
                ),
            )),
        },
    }
}
