//! The kinds of check, as an eval's spec writes them.

use super::compiled::{Path, Pattern, Schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::protocol::Grade;

/// A text normalisation applied before comparing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalize {
    /// Leading and trailing whitespace removed.
    Trim,
    /// Lower case.
    Lowercase,
    /// Runs of whitespace made one space (and trimmed).
    CollapseWhitespace,
    /// ASCII punctuation removed.
    StripPunctuation,
    /// The last number in the text, written plainly (`The answer is 1,024.` → `1024`,
    /// `4.0` → `4`); a text without a number becomes empty. Scores a model that says
    /// more than the number as peers do.
    LastNumber,
}

/// What a JSONPath check reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Over {
    /// The output, parsed as JSON.
    #[default]
    Output,
    /// The accepted atoms (an array).
    Atoms,
    /// The trace.
    Trace,
}

/// What a check compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CheckKind {
    /// The output (or the value at `path`) equals the expected value after normalising.
    Exact {
        /// The value expected (the sample's expected value when absent).
        #[serde(default)]
        value: Option<Value>,
        /// Normalisations, in order (`trim` when absent).
        #[serde(default)]
        normalize: Option<Vec<Normalize>>,
        /// A JSONPath into the output parsed as JSON.
        #[serde(default)]
        path: Option<Path>,
    },
    /// The output contains a text (the expected value when absent).
    Contains {
        /// The text.
        #[serde(default)]
        text: Option<String>,
        /// Compare without case.
        #[serde(default)]
        ignore_case: bool,
    },
    /// The output matches a regular expression.
    Regex {
        /// The pattern (Rust `regex` syntax), compiled when the spec is read.
        pattern: Pattern,
    },
    /// The output is valid JSON.
    JsonValid,
    /// The output (or the value at `path`) matches a JSON Schema (draft 2020-12 unless
    /// the schema says otherwise; references to other documents are not fetched).
    JsonSchema {
        /// The schema, compiled when the spec is read.
        schema: Schema,
        /// A JSONPath into the output parsed as JSON.
        #[serde(default)]
        path: Option<Path>,
    },
    /// A JSONPath finds something (equal to `equals`, when given).
    Jsonpath {
        /// The path.
        path: Path,
        /// What it reads.
        #[serde(default)]
        over: Over,
        /// The value the path must find.
        #[serde(default)]
        equals: Option<Value>,
    },
    /// A number within a tolerance of the expected one.
    Numeric {
        /// The number expected (the sample's expected value when absent).
        #[serde(default)]
        value: Option<f64>,
        /// A JSONPath into the output parsed as JSON (the whole output when absent).
        #[serde(default)]
        path: Option<Path>,
        /// Largest absolute difference allowed.
        #[serde(default)]
        abs_tol: f64,
        /// Largest difference relative to the expected number.
        #[serde(default)]
        rel_tol: f64,
    },
    /// A tool was called (at least `min` times).
    ToolCalled {
        /// The tool.
        tool: String,
        /// Fewest calls.
        #[serde(default = "one_call")]
        min: usize,
    },
    /// Tools were called in this order (others may come between unless `strict`).
    ToolSequence {
        /// The tools, in order.
        tools: Vec<String>,
        /// The calls must be exactly these.
        #[serde(default)]
        strict: bool,
    },
    /// A call of a tool had these arguments (among others).
    ToolArgs {
        /// The tool.
        tool: String,
        /// Arguments and their values.
        args: serde_json::Map<String, Value>,
    },
    /// The best atom's grade is at least this.
    GradeAtLeast {
        /// The grade.
        grade: Grade,
    },
    /// At most this many tokens.
    TokensAtMost {
        /// Tokens.
        tokens: u64,
    },
    /// At most this long, ms.
    LatencyAtMost {
        /// Milliseconds.
        ms: u64,
    },
    /// At most this cost, US dollars (fails when the cost is unknown).
    CostAtMost {
        /// Dollars.
        usd: f64,
    },
    /// Every check passes.
    All {
        /// The checks.
        checks: Vec<CheckKind>,
    },
    /// Some check passes.
    Any {
        /// The checks.
        checks: Vec<CheckKind>,
    },
    /// At least `k` checks pass.
    AtLeastK {
        /// How many.
        k: usize,
        /// The checks.
        checks: Vec<CheckKind>,
    },
    /// A program of the eval's author decides: it reads the sample's outcome as JSON on
    /// stdin and answers `{"pass": bool, "score": number, "reason": text}` on stdout.
    Command {
        /// The program (looked up on `PATH` when it has no `/`).
        program: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Longest it may take, seconds; then it is stopped and the check fails.
        #[serde(default = "ten_seconds")]
        timeout_s: f64,
    },
    /// The check fails.
    Not {
        /// The check.
        check: Box<CheckKind>,
    },
    /// An LLM judge decides by a rubric, criterion by criterion (see `eval::judge`).
    /// Only at the top of a check, not inside `all`, `any`, `at_least_k` or `not`.
    Judge {
        /// The rubric: a file's path relative to the spec, or the rubric itself (the
        /// spec as stored carries the rubric itself).
        rubric: Value,
        /// The judges: provider profiles (the eval's provider when empty).
        #[serde(default)]
        judges: Vec<String>,
        /// Answers asked of each judge; a criterion is met when most say so.
        #[serde(default = "one_vote")]
        votes: u32,
    },
}

fn one_vote() -> u32 {
    1
}

fn ten_seconds() -> f64 {
    10.0
}

fn one_call() -> usize {
    1
}
