//! Seed 001: AgentRequest, AgentResponse, quality_check, errors, status and grades.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{is_empty_map, Atom, Extra};

/// One AgentRequest (seed 001 §2): everything an agent is handed for one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRequest {
    /// `INV_{YYYYMMDD}_{HHMMSS}_{AGENT_SHORT}_{SEQ}` (seed 001 §9.1).
    pub invocation_id: String,
    /// Agent name, one of the defined agents.
    pub agent: String,
    /// Task of the plan this invocation serves.
    pub task_id: String,
    /// Plan the task belongs to.
    pub plan_id: String,
    /// The agent's whole system prompt.
    pub system_prompt: String,
    /// Instruction, context, focus and output requirements.
    pub user_prompt: UserPrompt,
    /// Timeout, max_tokens and temperature after execution-mode adjustment.
    pub constraints: Constraints,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
    /// The JSON Schema the answer is held to, when it has a shape (a task's
    /// AgentResponse, a debate role's output, a judge's verdict): sent to the server in
    /// its own dialect. Not stored with the request (it follows from the plan).
    #[serde(skip)]
    pub response_schema: Option<std::sync::Arc<serde_json::Value>>,
}

impl AgentRequest {
    /// The tool-using part of the request (its `react` field), when there is one and
    /// it reads.
    pub fn react(&self) -> Option<super::messages::ReactTurns> {
        self.extra
            .get("react")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// Sets the tool-using part of the request (the `react` field).
    pub fn set_react(&mut self, react: &super::messages::ReactTurns) {
        if let Ok(v) = serde_json::to_value(react) {
            self.extra.insert("react".into(), v);
        }
    }
}

/// The `user_prompt` object (seed 001 §2.2.2).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UserPrompt {
    /// The instruction following the template of seed 001 §6.1.
    pub instruction: String,
    /// Paper, code, dependencies and existing assets.
    #[serde(default)]
    pub context: RequestContext,
    /// Technical focus of the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// What the agent must produce.
    #[serde(default)]
    pub output_requirements: OutputRequirements,
    /// The shape the answer must have (a rule, and an example of a JSON answer), as the
    /// engine rendered it once for every task of the same shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_format: Option<super::SharedJson>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `user_prompt.context` (seed 001 §2.2.2, §6.2).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestContext {
    /// Paper under analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper_info: Option<PaperInfo>,
    /// Code under analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_info: Option<CodeInfo>,
    /// Upstream tasks this one reads from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<Dependency>>,
    /// Asset ids already in the knowledge vault that the agent should relate to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_assets: Option<Vec<String>>,
    /// Fields not modelled here (resolved inputs are added here by the engine).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `paper_info` (seed 001 §6.2.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PaperInfo {
    /// Unique paper id, e.g. `ArXiv:2406.01234`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper_id: Option<String>,
    /// Paper title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Local PDF path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdf_path: Option<String>,
    /// ArXiv link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arxiv_url: Option<String>,
    /// Sections to focus on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus_sections: Option<Vec<String>>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `code_info` (seed 001 §6.2.2).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CodeInfo {
    /// Repository URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_url: Option<String>,
    /// Branch, `main` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// A specific commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    /// Files to focus on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus_files: Option<Vec<String>>,
    /// Entry point file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_point: Option<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// One entry of `context.dependencies` (seed 001 §6.2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dependency {
    /// Upstream task id.
    pub task_id: String,
    /// Path of the upstream output that is referenced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_ref: Option<String>,
    /// Whether the dependency is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `output_requirements` (seed 001 §6.3).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OutputRequirements {
    /// Expected atom type, e.g. `Math_Atom`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atom_type: Option<String>,
    /// Dotted paths every atom must carry, e.g. `content.physical_intuition`.
    #[serde(default)]
    pub required_fields: Vec<String>,
    /// Lowest acceptable grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality_threshold: Option<String>,
    /// Most atoms the agent may produce.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_atoms: Option<u32>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `constraints` (seed 001 §2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    /// Execution timeout in seconds (default 300).
    pub timeout_seconds: f64,
    /// Most output tokens (default 8000).
    pub max_tokens: u32,
    /// Sampling temperature (default 0.3).
    pub temperature: f64,
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            timeout_seconds: 300.0,
            max_tokens: 8000,
            temperature: 0.3,
        }
    }
}

/// LLM parameters per agent and execution mode (seed 001 §5.3), e.g.
/// `{"Scholar_Internalizer": {"Deep_Internalization": {...}}}`.
pub type ExecutionModeConstraints = BTreeMap<String, BTreeMap<String, Constraints>>;

/// A field guide of seed 001 §6.2: each field of an object mapped to its requirement and
/// meaning, e.g. `"paper_id": "必需 - 论文唯一标识"`.
pub type FieldGuide = BTreeMap<String, String>;

/// Wrapper `{"paper_info": {...}}` of the field guide of seed 001 §6.2.1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperInfoGuideDoc {
    /// The guide.
    pub paper_info: FieldGuide,
}

/// Wrapper `{"code_info": {...}}` of the field guide of seed 001 §6.2.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeInfoGuideDoc {
    /// The guide.
    pub code_info: FieldGuide,
}

/// One AgentResponse (seed 001 §3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResponse {
    /// Same id as the request.
    pub invocation_id: String,
    /// Outcome by the rules of seed 001 §4.3.
    pub status: InvocationStatus,
    /// Agent that ran.
    pub agent: String,
    /// Task served.
    pub task_id: String,
    /// Wall time of the invocation.
    pub execution_time_ms: u64,
    /// Atoms and summary.
    pub output: ResponseOutput,
    /// Computed quality check (never trusted from the model).
    pub quality_check: QualityCheck,
    /// Errors met during the invocation.
    #[serde(default)]
    pub errors: Vec<ErrorInfo>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `output` of a response (seed 001 §3.2.2).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResponseOutput {
    /// Atoms produced.
    #[serde(default)]
    pub atoms: Vec<Atom>,
    /// Short human-readable summary.
    #[serde(default)]
    pub summary: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `quality_check` (seed 001 §3.2.3).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct QualityCheck {
    /// Number of atoms produced.
    pub atoms_generated: u32,
    /// Mean atom score in [0, 1].
    pub avg_quality_score: f64,
    /// Atoms per grade.
    pub grades: GradeCounts,
    /// Failed checks.
    #[serde(default)]
    pub issues: Vec<QualityIssue>,
}

/// Atom counts per grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GradeCounts {
    /// Grade A count.
    #[serde(rename = "A")]
    pub a: u32,
    /// Grade B count.
    #[serde(rename = "B")]
    pub b: u32,
    /// Grade C count.
    #[serde(rename = "C")]
    pub c: u32,
    /// Grade D count.
    #[serde(rename = "D")]
    pub d: u32,
}

impl GradeCounts {
    /// Counts one more atom of `grade`.
    pub fn add(&mut self, grade: Grade) {
        match grade {
            Grade::A => self.a += 1,
            Grade::B => self.b += 1,
            Grade::C => self.c += 1,
            Grade::D => self.d += 1,
        }
    }

    /// Adds another set of counts to this one.
    pub fn merge(&mut self, other: &GradeCounts) {
        self.a += other.a;
        self.b += other.b;
        self.c += other.c;
        self.d += other.d;
    }

    /// Total atoms counted.
    pub fn total(&self) -> u32 {
        self.a + self.b + self.c + self.d
    }
}

/// One failed check on an atom (seed 001 §3.2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityIssue {
    /// Atom the issue is about.
    pub atom_id: String,
    /// Kind of issue, e.g. `missing_field`.
    pub issue_type: String,
    /// Field concerned.
    #[serde(default)]
    pub field: String,
    /// `error`, `warning` or `info`.
    pub severity: IssueSeverity,
    /// Human-readable explanation.
    pub message: String,
}

/// Severity of a quality issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueSeverity {
    /// Blocks the atom from a good grade.
    Error,
    /// Lowers the score.
    Warning,
    /// Informational.
    Info,
}

/// One entry of `errors` (seed 001 §3.2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// E001–E008.
    pub error_code: ErrorCode,
    /// The code's type name, e.g. `source_not_found`.
    pub error_type: String,
    /// What happened.
    pub message: String,
    /// Whether a retry may help.
    pub recoverable: bool,
    /// What to do about it.
    #[serde(default)]
    pub suggested_action: String,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

impl ErrorInfo {
    /// Builds an error of `code` with its type, recoverability and suggested action.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorInfo {
            error_code: code,
            error_type: code.error_type().to_string(),
            message: message.into(),
            recoverable: code.recoverable(),
            suggested_action: code.suggested_action().to_string(),
            extra: Extra::new(),
        }
    }
}

/// Error codes of seed 001 §8.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ErrorCode {
    /// source_not_found: recoverable, retried 3× at increasing delays.
    E001,
    /// parse_error: recoverable, retried with the parse error in the prompt.
    E002,
    /// validation_error: recoverable, retried with a lower threshold.
    E003,
    /// timeout: recoverable, retried with a longer timeout.
    E004,
    /// quality_below_threshold: recoverable, retried with adjusted parameters.
    E005,
    /// dependency_failed: not recoverable, the task is blocked.
    E006,
    /// hallucination_detected: not recoverable, flagged for human review.
    E007,
    /// system_error: not recoverable, logged.
    E008,
    /// runaway_output (plexus's own, beyond seed 001's table): the answer repeated
    /// itself (the same span again and again) and was stopped early; retried at a lower
    /// temperature.
    E009,
}

impl ErrorCode {
    /// Every code, in order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::E001,
        ErrorCode::E002,
        ErrorCode::E003,
        ErrorCode::E004,
        ErrorCode::E005,
        ErrorCode::E006,
        ErrorCode::E007,
        ErrorCode::E008,
        ErrorCode::E009,
    ];

    /// The `error_type` name of the code.
    pub fn error_type(self) -> &'static str {
        match self {
            ErrorCode::E001 => "source_not_found",
            ErrorCode::E002 => "parse_error",
            ErrorCode::E003 => "validation_error",
            ErrorCode::E004 => "timeout",
            ErrorCode::E005 => "quality_below_threshold",
            ErrorCode::E006 => "dependency_failed",
            ErrorCode::E007 => "hallucination_detected",
            ErrorCode::E008 => "system_error",
            ErrorCode::E009 => "runaway_output",
        }
    }

    /// Whether the code is recoverable (seed 001 §8.1).
    pub fn recoverable(self) -> bool {
        !matches!(self, ErrorCode::E006 | ErrorCode::E007 | ErrorCode::E008)
    }

    /// The handling of seed 001 §8.2, as advice.
    pub fn suggested_action(self) -> &'static str {
        match self {
            ErrorCode::E001 => {
                "retry 3 times at increasing intervals; check the source URL or network"
            }
            ErrorCode::E002 => "fix the output format and retry",
            ErrorCode::E003 => "retry with a lower quality_threshold",
            ErrorCode::E004 => "retry with a longer timeout_seconds",
            ErrorCode::E005 => "retry with adjusted temperature or more max_tokens",
            ErrorCode::E006 => "stop the task and mark it blocked",
            ErrorCode::E007 => "stop the task and request human review",
            ErrorCode::E008 => "logged; notify operations",
            ErrorCode::E009 => "retry at a lower temperature",
        }
    }

    /// The code as text, e.g. `E004`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::E001 => "E001",
            ErrorCode::E002 => "E002",
            ErrorCode::E003 => "E003",
            ErrorCode::E004 => "E004",
            ErrorCode::E005 => "E005",
            ErrorCode::E006 => "E006",
            ErrorCode::E007 => "E007",
            ErrorCode::E008 => "E008",
            ErrorCode::E009 => "E009",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Status of an invocation (seed 001 §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InvocationStatus {
    /// All atoms passed the quality check.
    Success,
    /// Some atoms passed, or there were errors.
    Partial,
    /// No usable output.
    Failed,
    /// Over the time limit.
    Timeout,
}

impl InvocationStatus {
    /// The status as text.
    pub fn as_str(self) -> &'static str {
        match self {
            InvocationStatus::Success => "success",
            InvocationStatus::Partial => "partial",
            InvocationStatus::Failed => "failed",
            InvocationStatus::Timeout => "timeout",
        }
    }
}

/// Atom grade A–D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Grade {
    /// Best.
    A,
    /// Good.
    B,
    /// Weak.
    C,
    /// Poor.
    D,
}

impl Grade {
    /// Parses `A`–`D`.
    pub fn parse(s: &str) -> Option<Grade> {
        match s {
            "A" => Some(Grade::A),
            "B" => Some(Grade::B),
            "C" => Some(Grade::C),
            "D" => Some(Grade::D),
            _ => None,
        }
    }

    /// The grade as text.
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::A => "A",
            Grade::B => "B",
            Grade::C => "C",
            Grade::D => "D",
        }
    }

    /// One grade lower (D stays D).
    pub fn lower(self) -> Grade {
        match self {
            Grade::A => Grade::B,
            Grade::B => Grade::C,
            Grade::C | Grade::D => Grade::D,
        }
    }

    /// Whether this grade is at least as good as `threshold`.
    pub fn meets(self, threshold: Grade) -> bool {
        self <= threshold
    }
}

impl std::fmt::Display for Grade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads a JSON value at a dotted path such as `content.performance_note.complexity`.
pub fn value_at_path<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(root, |v, key| v.get(key))
}

/// The user message sent to a model: the user prompt as compact JSON (its text is
/// `.get()`), rendered once and stored as it is. `None` only if serialisation fails.
pub fn render_user_prompt(p: &UserPrompt) -> Option<Box<serde_json::value::RawValue>> {
    serde_json::value::to_raw_value(p).ok()
}

/// Stable 64-bit FNV-1a hash of a prompt, as 16 hex digits.
pub fn prompt_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
