//! The `Tool` abstraction: what the model is told about a tool, how it runs, and the data
//! it returns with its renderings at each output level.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use super::context::ToolContext;
use super::error::{ToolError, ToolErrorCode};
use crate::base::protocol::messages::OutputLevel;

/// The future a tool's `run` returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolData, ToolError>> + Send + 'a>>;

/// Time limit of a tool that does not set one.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest standard rendering, in characters; longer listings are cut and say so.
pub const STANDARD_MAX_CHARS: usize = 8_000;

/// Longest brief rendering, in characters.
pub const BRIEF_MAX_CHARS: usize = 1_000;

/// A tool the agent can call.
pub trait Tool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema (an object schema with `properties` and `required`) of its arguments.
    fn input_schema(&self) -> Value;

    /// Output level when the call names none (`None`: the global default).
    fn default_output_level(&self) -> Option<OutputLevel> {
        None
    }

    /// Whether a call with `args` always gives the same result within a run, so its
    /// result may be cached.
    fn is_idempotent(&self, args: &Value) -> bool;

    /// Time limit of one attempt (retries get longer ones, see
    /// [`crate::base::protocol::messages::ToolRetryPolicy::get_retry_timeout`]).
    fn timeout(&self) -> Duration {
        DEFAULT_TOOL_TIMEOUT
    }

    /// Runs the tool on arguments already checked against [`Tool::input_schema`].
    fn run<'a>(&'a self, ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a>;
}

/// Runs blocking work (files, SQLite) on tokio's blocking pool so the executor's time
/// limit applies to it; a panic in `f` becomes a `TOOL_FAILED` error.
pub fn run_blocking(
    ctx: &ToolContext,
    args: &Value,
    f: fn(&ToolContext, &Value) -> Result<ToolData, ToolError>,
) -> ToolFuture<'static> {
    let ctx = ctx.clone();
    let args = args.clone();
    Box::pin(async move {
        tokio::task::spawn_blocking(move || f(&ctx, &args))
            .await
            .unwrap_or_else(|e| {
                Err(ToolError::failed(
                    ToolErrorCode::ToolFailed,
                    format!("the tool stopped unexpectedly: {e}"),
                ))
            })
    })
}

/// What the model is told about a tool (the protocol's own type).
pub use crate::base::protocol::messages::ToolDefinition;

/// The raw result of a tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// Structured data.
    Json(Value),
    /// Plain text.
    Text(String),
}

/// A tool's result: the raw data plus its brief and standard renderings (the full one is
/// the data itself).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolData {
    /// The complete data.
    pub payload: Payload,
    /// Key facts ("Found 10 items").
    pub brief: String,
    /// Actionable listing; cut to [`STANDARD_MAX_CHARS`] when rendered.
    pub standard: String,
}

impl ToolData {
    /// JSON data with its renderings.
    pub fn json(data: Value, brief: impl Into<String>, standard: impl Into<String>) -> Self {
        ToolData {
            payload: Payload::Json(data),
            brief: brief.into(),
            standard: standard.into(),
        }
    }

    /// Text data with its renderings.
    pub fn text(
        text: impl Into<String>,
        brief: impl Into<String>,
        standard: impl Into<String>,
    ) -> Self {
        ToolData {
            payload: Payload::Text(text.into()),
            brief: brief.into(),
            standard: standard.into(),
        }
    }

    /// The complete data as stored: text as it is, JSON compact.
    pub fn raw(&self) -> String {
        match &self.payload {
            Payload::Json(v) => v.to_string(),
            Payload::Text(t) => t.clone(),
        }
    }

    /// Size of [`ToolData::raw`] in bytes (computed without building it).
    pub fn size_bytes(&self) -> u64 {
        match &self.payload {
            Payload::Json(v) => json_size(v),
            Payload::Text(t) => t.len() as u64,
        }
    }

    /// File extension of the stored data.
    pub fn extension(&self) -> &'static str {
        match self.payload {
            Payload::Json(_) => "json",
            Payload::Text(_) => "txt",
        }
    }

    /// The rendering at `level`: brief and standard cut to their limits, full the
    /// complete data (pretty JSON).
    pub fn render(&self, level: OutputLevel) -> String {
        match level {
            OutputLevel::Brief => truncate_chars(&self.brief, BRIEF_MAX_CHARS),
            OutputLevel::Standard => truncate_chars(&self.standard, STANDARD_MAX_CHARS),
            OutputLevel::Full => match &self.payload {
                Payload::Json(v) => {
                    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
                }
                Payload::Text(t) => t.clone(),
            },
        }
    }
}

/// Bytes of `v` serialised compactly.
pub fn json_size(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail: map keys are strings.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// `s` cut to at most `max` characters at a line end where one is near, with a note of
/// how much was left out.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let Some((cut, _)) = s.char_indices().nth(max) else {
        return s.to_string();
    };
    let head = &s[..cut];
    // Prefer ending on a whole line when one ends in the last fifth.
    let head = match head.rfind('\n') {
        Some(nl) if nl >= cut * 4 / 5 => &head[..nl],
        _ => head,
    };
    let left = s[head.len()..].chars().count();
    format!(
        "{head}\n… ({left} more characters cut; ask for output_level \"full\" to get everything)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_size_is_the_compact_length() {
        let v = serde_json::json!({"a": [1, "é", null], "b": {"c": true}});
        assert_eq!(json_size(&v), v.to_string().len() as u64);
    }

    #[test]
    fn truncation_keeps_short_text_and_marks_cut_text() {
        assert_eq!(truncate_chars("abc", 3), "abc");
        let cut = truncate_chars("ééééé", 2);
        assert!(cut.starts_with("éé\n… (3 more characters cut"), "{cut}");
        let lines = "line\n".repeat(10);
        let cut = truncate_chars(&lines, 23);
        assert!(cut.starts_with("line\nline\nline\nline\n…"), "{cut}");
    }

    #[test]
    fn renders_each_level() {
        let d = ToolData::json(serde_json::json!({"n": 1}), "one", "n = 1");
        assert_eq!(d.render(OutputLevel::Brief), "one");
        assert_eq!(d.render(OutputLevel::Standard), "n = 1");
        assert_eq!(d.render(OutputLevel::Full), "{\n  \"n\": 1\n}");
        assert_eq!(d.size_bytes(), 7);
        assert_eq!(d.extension(), "json");
    }
}
