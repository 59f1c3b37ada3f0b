//! Plan validation errors: each names the file, the task and the field.

use std::fmt;

/// What kind of problem a plan has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanErrorKind {
    /// The file could not be read.
    Io,
    /// The text is not JSON.
    Syntax,
    /// A field has the wrong type or shape, or is missing.
    Shape,
    /// A field the plan format does not know.
    UnknownField,
    /// A task names an agent that is not defined, or an entry of `agents` is neither a
    /// built-in agent nor used by any task.
    UnknownAgent,
    /// `depends_on` names a task that does not exist.
    MissingDependency,
    /// Tasks depend on each other in a cycle.
    Cycle,
    /// Two tasks share an id.
    DuplicateTaskId,
    /// A task_output reference points at a task that is not upstream.
    RefNotUpstream,
    /// A JSONPath does not parse.
    BadJsonPath,
    /// A db_query names a table outside the whitelist.
    UnknownTable,
    /// A db_query names a column the table does not have.
    UnknownColumn,
    /// A quality threshold outside A–D.
    BadThreshold,
    /// An execution mode that does not exist.
    BadExecutionMode,
    /// A number out of its range (max_atoms, timeout, temperature…).
    OutOfRange,
    /// An id holding a control character or a bidi override.
    BadId,
    /// A key written twice in the same JSON object.
    DuplicateKey,
    /// Two entries of `agents` naming the same agent.
    DuplicateAgent,
}

impl PlanErrorKind {
    /// Stable short name, used in fixtures and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanErrorKind::Io => "io",
            PlanErrorKind::Syntax => "syntax",
            PlanErrorKind::Shape => "shape",
            PlanErrorKind::UnknownField => "unknown_field",
            PlanErrorKind::UnknownAgent => "unknown_agent",
            PlanErrorKind::MissingDependency => "missing_dependency",
            PlanErrorKind::Cycle => "cycle",
            PlanErrorKind::DuplicateTaskId => "duplicate_task_id",
            PlanErrorKind::RefNotUpstream => "ref_not_upstream",
            PlanErrorKind::BadJsonPath => "bad_jsonpath",
            PlanErrorKind::UnknownTable => "unknown_table",
            PlanErrorKind::UnknownColumn => "unknown_column",
            PlanErrorKind::BadThreshold => "bad_threshold",
            PlanErrorKind::BadExecutionMode => "bad_execution_mode",
            PlanErrorKind::OutOfRange => "out_of_range",
            PlanErrorKind::BadId => "bad_id",
            PlanErrorKind::DuplicateKey => "duplicate_key",
            PlanErrorKind::DuplicateAgent => "duplicate_agent",
        }
    }
}

/// One problem in a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    /// File (or label) of the plan.
    pub file: String,
    /// Task id, when the problem is inside a task.
    pub task: Option<String>,
    /// Field path, e.g. `data_references[0].path`.
    pub field: String,
    /// Kind of problem.
    pub kind: PlanErrorKind,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(t) = &self.task {
            write!(f, "task `{t}`: ")?;
        }
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in a plan (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanErrors(pub Vec<PlanError>);

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(
            f,
            "plan is invalid ({n} error{}):",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.0 {
            writeln!(f, "  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PlanErrors {}
