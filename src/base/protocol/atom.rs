//! Seed 001 §3.1 / §7.1: the knowledge atom an agent produces.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{is_empty_map, Extra};

/// One atom: the unit of knowledge an agent produces.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Atom {
    /// Asset id, e.g. `MATH_DIFF_DENOISE_01`.
    #[serde(default)]
    pub asset_id: String,
    /// Category, e.g. `Math_Ops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Data status, e.g. `Verified_Source_Anchored`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_status: Option<String>,
    /// Created at / by, version, tags.
    #[serde(default)]
    pub metadata: AtomMetadata,
    /// Type-specific content.
    #[serde(default)]
    pub content: Value,
    /// Where the atom comes from.
    #[serde(default)]
    pub provenance: Provenance,
    /// How the atom relates to existing assets.
    #[serde(default)]
    pub delta_audit: DeltaAudit,
    /// Fields not modelled here (e.g. `atom_type`, `confidence` of seed 000 atoms).
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

impl Atom {
    /// The atom's confidence, from `confidence` or `metadata.confidence`.
    pub fn confidence(&self) -> Option<f64> {
        self.extra
            .get("confidence")
            .or_else(|| self.metadata.extra.get("confidence"))
            .and_then(Value::as_f64)
    }

    /// Reads a `confidence` written as a string of a number (`"0.9"`) as the number, as
    /// models often write it; any other string stays, to be flagged by the gate.
    pub fn numbers_from_strings(&mut self) {
        for map in [&mut self.extra, &mut self.metadata.extra] {
            if let Some(v) = map.get_mut("confidence") {
                if let Some(n) = number_in(v) {
                    *v = n;
                }
            }
        }
    }

    /// The atom's type (`atom_type` field), if it names one.
    pub fn atom_type(&self) -> Option<&str> {
        self.extra.get("atom_type").and_then(Value::as_str)
    }
}

/// `metadata` of an atom.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AtomMetadata {
    /// Creation time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Producing agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Tags such as `#Diffusion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `provenance` of an atom.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// Source paper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper_id: Option<String>,
    /// Page / equation anchor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper_location: Option<String>,
    /// Code anchor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_link: Option<String>,
    /// Storage path of the atom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atom_path: Option<String>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// `delta_audit` of an atom.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeltaAudit {
    /// Existing asset ids this atom relates to (become `relations` rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_assets: Option<Vec<String>>,
    /// What the atom adds over those assets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incremental_value: Option<String>,
    /// Whether it contradicts an existing asset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contradiction_marked: Option<bool>,
    /// Fields not modelled here.
    #[serde(flatten, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// The number a string holds (`" 0.9 "`, `"85%"` is not one), as a JSON number.
pub fn number_in(v: &Value) -> Option<Value> {
    let n = super::lenient::number_in(v.as_str()?, false)?;
    serde_json::Number::from_f64(n).map(Value::Number)
}
