//! The records of an exported run, one struct per kind: the columns of one table row
//! (named as in the schema) after the kind `t`. Text borrows from the line being read or
//! the row being written wherever it can. Unknown fields are refused: a field this build
//! does not know would be data it silently drops.

use serde::{Deserialize, Serialize};

use super::format::{JsonText, Kind, Real, Str};

/// A `runs` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRec<'a> {
    /// [`Kind::Run`].
    pub t: Kind,
    /// The run's id where it was exported.
    #[serde(borrow)]
    pub run_id: Str<'a>,
    /// Plan id.
    #[serde(borrow)]
    pub plan_id: Str<'a>,
    /// The file the plan came from.
    #[serde(borrow)]
    pub plan_source: Str<'a>,
    /// The plan snapshot.
    #[serde(borrow)]
    pub plan_json: JsonText<'a>,
    /// Provider profile.
    #[serde(borrow)]
    pub provider: Str<'a>,
    /// Engine and provider settings of the run.
    #[serde(borrow)]
    pub config_json: JsonText<'a>,
    /// Status.
    #[serde(borrow)]
    pub status: Str<'a>,
    /// RFC 3339.
    #[serde(borrow)]
    pub created_at: Str<'a>,
    /// RFC 3339.
    #[serde(borrow)]
    pub finished_at: Option<Str<'a>>,
    /// Tasks in the plan.
    pub task_count: i64,
}

/// A `tasks` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRec<'a> {
    /// [`Kind::Task`].
    pub t: Kind,
    /// Task.
    #[serde(borrow)]
    pub task_id: Str<'a>,
    /// Agent.
    #[serde(borrow)]
    pub agent: Str<'a>,
    /// Status.
    #[serde(borrow)]
    pub status: Str<'a>,
    /// Attempts.
    pub attempts: i64,
    /// Accepted atoms.
    pub atoms: i64,
    /// Deciding error code.
    #[serde(borrow)]
    pub error_code: Option<Str<'a>>,
    /// The invocation whose response is the task's output.
    #[serde(borrow)]
    pub final_invocation_id: Option<Str<'a>>,
    /// RFC 3339.
    #[serde(borrow)]
    pub updated_at: Str<'a>,
}

/// A `prompts` row: a system prompt the run's invocations refer to by hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptRec<'a> {
    /// [`Kind::Prompt`].
    pub t: Kind,
    /// Hash.
    #[serde(borrow)]
    pub prompt_hash: Str<'a>,
    /// Text.
    #[serde(borrow)]
    pub text: Str<'a>,
}

/// An `invocations` row, request and response whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvocationRec<'a> {
    /// [`Kind::Invocation`].
    pub t: Kind,
    /// Id, unique within the run.
    #[serde(borrow)]
    pub invocation_id: Str<'a>,
    /// Task.
    #[serde(borrow)]
    pub task_id: Str<'a>,
    /// Agent.
    #[serde(borrow)]
    pub agent: Str<'a>,
    /// Attempt number.
    pub attempt: i64,
    /// Status.
    #[serde(borrow)]
    pub status: Option<Str<'a>>,
    /// RFC 3339.
    #[serde(borrow)]
    pub started_at: Str<'a>,
    /// Wall time.
    pub execution_time_ms: Option<i64>,
    /// Prompt tokens counted by plexus.
    pub prompt_tokens: i64,
    /// Output tokens counted by plexus.
    pub output_tokens: Option<i64>,
    /// Comma-separated error codes.
    #[serde(borrow)]
    pub error_codes: Option<Str<'a>>,
    /// The request (system prompt by reference).
    #[serde(borrow)]
    pub request_json: JsonText<'a>,
    /// The response.
    #[serde(borrow)]
    pub response_json: Option<JsonText<'a>>,
    /// Prompt tokens the provider reported.
    pub provider_prompt_tokens: Option<i64>,
    /// Output tokens the provider reported.
    pub provider_output_tokens: Option<i64>,
}

/// A `knowledge_atoms` row: an atom of the run ([`Kind::Atom`]) or a library asset of
/// no run ([`Kind::Asset`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomRec<'a> {
    /// [`Kind::Atom`] or [`Kind::Asset`].
    pub t: Kind,
    /// The atom's asset id.
    #[serde(borrow)]
    pub atom_id: Str<'a>,
    /// Task.
    #[serde(borrow)]
    pub task_id: Option<Str<'a>>,
    /// Invocation.
    #[serde(borrow)]
    pub invocation_id: Option<Str<'a>>,
    /// Agent.
    #[serde(borrow)]
    pub agent: Option<Str<'a>>,
    /// Atom type.
    #[serde(borrow)]
    pub atom_type: Option<Str<'a>>,
    /// Category.
    #[serde(borrow)]
    pub category: Option<Str<'a>>,
    /// Data status.
    #[serde(borrow)]
    pub data_status: Option<Str<'a>>,
    /// Paper.
    #[serde(borrow)]
    pub paper_id: Option<Str<'a>>,
    /// Domain.
    #[serde(borrow)]
    pub domain: Option<Str<'a>>,
    /// Content.
    #[serde(borrow)]
    pub content: JsonText<'a>,
    /// Confidence.
    pub confidence: Option<Real>,
    /// Grade.
    #[serde(borrow)]
    pub grade: Option<Str<'a>>,
    /// Score.
    pub score: Option<Real>,
    /// Provenance.
    #[serde(borrow)]
    pub provenance: Option<JsonText<'a>>,
    /// Delta audit.
    #[serde(borrow)]
    pub delta_audit: Option<JsonText<'a>>,
    /// Metadata.
    #[serde(borrow)]
    pub metadata: Option<JsonText<'a>>,
    /// RFC 3339.
    #[serde(borrow)]
    pub created_at: Str<'a>,
    /// Who accepted the atom on review (format version 2; absent for an atom the
    /// quality gate accepted).
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub reviewed_by: Option<Str<'a>>,
    /// When (RFC 3339; with `reviewed_by`).
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub reviewed_at: Option<Str<'a>>,
}

/// A `reviews` row: a person's decision on a task stopped for review (format version 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewRec<'a> {
    /// [`Kind::Review`].
    pub t: Kind,
    /// Task.
    #[serde(borrow)]
    pub task_id: Str<'a>,
    /// The invocation whose atoms were reviewed.
    #[serde(borrow)]
    pub invocation_id: Str<'a>,
    /// `accepted` or `rejected`.
    #[serde(borrow)]
    pub decision: Str<'a>,
    /// Who decided.
    #[serde(borrow)]
    pub reviewer: Str<'a>,
    /// The note of an acceptance, the reason of a rejection.
    #[serde(borrow)]
    pub note: Option<Str<'a>>,
    /// RFC 3339.
    #[serde(borrow)]
    pub decided_at: Str<'a>,
    /// The decision's event in the run's log.
    pub seq: i64,
}

/// A `quality_records` row (its `record_id` is given by the database it goes into).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QualityRec<'a> {
    /// [`Kind::Quality`].
    pub t: Kind,
    /// Task.
    #[serde(borrow)]
    pub task_id: Str<'a>,
    /// Invocation.
    #[serde(borrow)]
    pub invocation_id: Str<'a>,
    /// Atom.
    #[serde(borrow)]
    pub atom_id: Str<'a>,
    /// Grade.
    #[serde(borrow)]
    pub grade: Str<'a>,
    /// Score.
    pub score: Real,
    /// Issues (a JSON array).
    #[serde(borrow)]
    pub issues: JsonText<'a>,
    /// RFC 3339.
    #[serde(borrow)]
    pub created_at: Str<'a>,
}

/// A `relations` row of the run (its `relation_id` is given by the database it goes
/// into).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelationRec<'a> {
    /// [`Kind::Relation`].
    pub t: Kind,
    /// From.
    #[serde(borrow)]
    pub source_atom_id: Str<'a>,
    /// To.
    #[serde(borrow)]
    pub target_atom_id: Str<'a>,
    /// `builds_on` or `contradicts`.
    #[serde(borrow)]
    pub relation_type: Str<'a>,
    /// Invocation.
    #[serde(borrow)]
    pub invocation_id: Option<Str<'a>>,
    /// Note.
    #[serde(borrow)]
    pub note: Option<Str<'a>>,
    /// RFC 3339.
    #[serde(borrow)]
    pub created_at: Str<'a>,
}

/// A `papers` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRec<'a> {
    /// [`Kind::Paper`].
    pub t: Kind,
    /// Id.
    #[serde(borrow)]
    pub paper_id: Str<'a>,
    /// Title.
    #[serde(borrow)]
    pub title: Option<Str<'a>>,
    /// Authors.
    #[serde(borrow)]
    pub authors: Option<Str<'a>>,
    /// Year.
    pub year: Option<i64>,
    /// Venue.
    #[serde(borrow)]
    pub venue: Option<Str<'a>>,
    /// Domain.
    #[serde(borrow)]
    pub domain: Option<Str<'a>>,
    /// PDF file.
    #[serde(borrow)]
    pub pdf_path: Option<Str<'a>>,
    /// arXiv address.
    #[serde(borrow)]
    pub arxiv_url: Option<Str<'a>>,
    /// Abstract.
    #[serde(borrow, rename = "abstract")]
    pub abstract_text: Option<Str<'a>>,
    /// RFC 3339.
    #[serde(borrow)]
    pub created_at: Str<'a>,
}

/// An `execution_logs` row (its `event_id` is made from the run's number in the
/// database it goes into and `seq`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventRec<'a> {
    /// [`Kind::Event`].
    pub t: Kind,
    /// Sequence number, dense from 1.
    pub seq: i64,
    /// Milliseconds since the Unix epoch.
    pub ts: i64,
    /// The event's kind.
    #[serde(borrow)]
    pub kind: Str<'a>,
    /// Task.
    #[serde(borrow)]
    pub task_id: Option<Str<'a>>,
    /// Invocation.
    #[serde(borrow)]
    pub invocation_id: Option<Str<'a>>,
    /// Agent.
    #[serde(borrow)]
    pub agent: Option<Str<'a>>,
    /// The event without its kind, as stored.
    #[serde(borrow)]
    pub payload: JsonText<'a>,
}

/// Only the kind of a record, read before the record itself.
#[derive(Debug, Deserialize)]
pub struct Tag<'a> {
    /// `t`, not yet checked.
    #[serde(borrow)]
    pub t: Option<Str<'a>>,
}
