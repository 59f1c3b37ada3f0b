//! The stored response of an invocation, serialised exactly as [`AgentResponse`] would
//! be, but borrowing the atoms, and with each atom's nested objects (metadata, content,
//! provenance, delta_audit) serialised once: the same text goes into the response and
//! into the atom's `knowledge_atoms` row.
//!
//! [`AgentResponse`]: crate::base::protocol::AgentResponse

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::base::protocol::{Atom, ErrorInfo, Extra, InvocationStatus, QualityCheck};

/// An atom's nested objects as JSON text.
pub(super) struct AtomJson {
    /// `metadata`.
    pub metadata: Box<RawValue>,
    /// `content`.
    pub content: Box<RawValue>,
    /// `provenance`.
    pub provenance: Box<RawValue>,
    /// `delta_audit`.
    pub delta_audit: Box<RawValue>,
}

impl AtomJson {
    /// Serialises `atom`'s nested objects.
    pub fn of(atom: &Atom) -> AtomJson {
        fn raw<T: Serialize>(v: &T) -> Box<RawValue> {
            // Maps with string keys and finite numbers always serialise.
            serde_json::value::to_raw_value(v).unwrap_or_else(|_| RawValue::NULL.to_owned())
        }
        AtomJson {
            metadata: raw(&atom.metadata),
            content: raw(&atom.content),
            provenance: raw(&atom.provenance),
            delta_audit: raw(&atom.delta_audit),
        }
    }

    /// The JSON of every atom of `atoms`, in order.
    pub fn all(atoms: &[Atom]) -> Vec<AtomJson> {
        atoms.iter().map(AtomJson::of).collect()
    }
}

/// Serialises exactly as [`crate::base::protocol::AgentResponse`].
#[derive(Serialize)]
pub(super) struct ResponseView<'a> {
    pub invocation_id: &'a str,
    pub status: InvocationStatus,
    pub agent: &'a str,
    pub task_id: &'a str,
    pub execution_time_ms: u64,
    pub output: OutputView<'a>,
    pub quality_check: &'a QualityCheck,
    pub errors: &'a [ErrorInfo],
    /// What the provider said besides the text (usage, finish reason, tool calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<&'a crate::data::provider::ProviderOutput>,
    /// The transport error the provider returned, when it returned one (which kind, so
    /// that a replay gives the same error back).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<&'a crate::data::provider::StoredProviderError>,
    /// The text received, when it gave no atoms (kept for failure browsing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_text: Option<&'a str>,
    /// The batch of the task's input this call answered (1-based), when it was batched:
    /// a resume that finds the call's success takes it for that batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
    /// The steps of a tool-using loop: each step's text, tool calls and observations
    /// (what a rerun answers the loop with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub react_steps: Option<&'a [super::react_loop::RecordedStep]>,
}

/// The `output` of a [`ResponseView`].
#[derive(Serialize)]
pub(super) struct OutputView<'a> {
    pub atoms: AtomsView<'a>,
    pub summary: &'a str,
    /// The plain answer of a task whose output is text (`output_format: text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
}

/// Atoms beside their pre-serialised nested objects (the two slices are parallel).
pub(super) struct AtomsView<'a>(pub &'a [Atom], pub &'a [AtomJson]);

impl Serialize for AtomsView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        debug_assert_eq!(self.0.len(), self.1.len(), "one JSON per atom");
        s.collect_seq(self.0.iter().zip(self.1).map(|(a, j)| AtomView {
            asset_id: &a.asset_id,
            category: a.category.as_deref(),
            data_status: a.data_status.as_deref(),
            metadata: &j.metadata,
            content: &j.content,
            provenance: &j.provenance,
            delta_audit: &j.delta_audit,
            extra: &a.extra,
        }))
    }
}

/// One atom, field for field in the order [`Atom`]'s own serialisation writes them.
#[derive(Serialize)]
struct AtomView<'a> {
    asset_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_status: Option<&'a str>,
    metadata: &'a RawValue,
    content: &'a RawValue,
    provenance: &'a RawValue,
    delta_audit: &'a RawValue,
    #[serde(flatten, skip_serializing_if = "no_extra")]
    extra: &'a Extra,
}

fn no_extra(m: &&Extra) -> bool {
    m.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::{AgentResponse, ErrorCode, ResponseOutput};

    #[test]
    fn response_view_serialises_as_an_agent_response() {
        let atoms: Vec<Atom> = serde_json::from_value(serde_json::json!([
            {"asset_id": "A1", "content": {"x": "y \"q\"\n"}},
            {"asset_id": "A2", "category": "Math_Ops", "atom_type": "Math_Atom", "confidence": 0.7,
             "metadata": {"created_by": "S", "tags": ["#A"], "custom": 1},
             "provenance": {"paper_id": "P", "page": 3},
             "delta_audit": {"existing_assets": ["A1"], "contradiction_marked": false}}
        ]))
        .expect("atoms");
        let json = AtomJson::all(&atoms);
        let qc = QualityCheck {
            atoms_generated: 2,
            avg_quality_score: 0.9,
            ..Default::default()
        };
        let errors = vec![ErrorInfo::new(ErrorCode::E005, "low")];
        let view = ResponseView {
            invocation_id: "INV_1",
            status: InvocationStatus::Partial,
            agent: "Scholar_Internalizer",
            task_id: "T",
            execution_time_ms: 12,
            output: OutputView {
                atoms: AtomsView(&atoms, &json),
                summary: "s",
                text: None,
            },
            quality_check: &qc,
            errors: &errors,
            provider: None,
            provider_error: None,
            raw_text: None,
            batch: None,
            react_steps: None,
        };
        let full = AgentResponse {
            invocation_id: "INV_1".into(),
            status: InvocationStatus::Partial,
            agent: "Scholar_Internalizer".into(),
            task_id: "T".into(),
            execution_time_ms: 12,
            output: ResponseOutput {
                atoms: atoms.clone(),
                summary: "s".into(),
                extra: Default::default(),
            },
            quality_check: qc.clone(),
            errors: errors.clone(),
            extra: Default::default(),
        };
        assert_eq!(
            serde_json::to_string(&view).expect("view"),
            serde_json::to_string(&full).expect("full")
        );
        assert_eq!(
            json[1].provenance.get(),
            serde_json::to_string(&atoms[1].provenance).expect("provenance")
        );
    }
}
