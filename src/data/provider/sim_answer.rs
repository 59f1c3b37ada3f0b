//! The shape of the simulated provider's answers, serialised straight to text. Fields are
//! in alphabetical order, as a `serde_json::Map` writes its keys, so the text is the same
//! as building the answer as a `Value` would give, without building one.

use serde::Serialize;
use serde_json::{Map, Value};

/// `{"output": …}`.
#[derive(Serialize)]
pub struct Answer<'a> {
    /// The output block.
    pub output: Output<'a>,
}

/// The output block: the atoms under `atoms` (or under `result`, the invalid shape).
#[derive(Serialize)]
pub struct Output<'a> {
    /// Atoms, in the valid shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atoms: Option<&'a [SimAtom<'a>]>,
    /// Atoms under a wrong key, for the invalid-shape fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a [SimAtom<'a>]>,
    /// One-line summary.
    pub summary: &'a str,
}

/// One simulated atom.
#[derive(Serialize)]
pub struct SimAtom<'a> {
    /// Asset id.
    pub asset_id: String,
    /// Atom type.
    pub atom_type: &'a str,
    /// Category.
    pub category: String,
    /// Confidence, two decimals.
    pub confidence: f64,
    /// Content fields.
    pub content: Map<String, Value>,
    /// Data status.
    pub data_status: &'static str,
    /// Delta audit.
    pub delta_audit: DeltaAudit,
    /// Metadata.
    pub metadata: Metadata<'a>,
    /// Provenance fields.
    pub provenance: Map<String, Value>,
}

/// An atom's delta audit.
#[derive(Serialize)]
pub struct DeltaAudit {
    /// Contradiction flag.
    pub contradiction_marked: bool,
    /// Existing assets referenced.
    pub existing_assets: Vec<String>,
    /// Incremental value, when assets are referenced.
    pub incremental_value: Option<&'static str>,
}

/// An atom's metadata.
#[derive(Serialize)]
pub struct Metadata<'a> {
    /// Creation time.
    pub created_at: String,
    /// Agent.
    pub created_by: &'a str,
    /// Tags.
    pub tags: [String; 1],
    /// Version.
    pub version: &'static str,
}
