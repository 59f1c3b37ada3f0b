//! The faults the simulated provider can inject into an attempt, and the rates it draws
//! them at.

use serde::{Deserialize, Serialize};

/// A fault the simulated provider can inject into one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// A good answer.
    None,
    /// JSON cut off mid-way (E002).
    MalformedJson,
    /// Atoms missing required fields (lower grades).
    MissingRequired,
    /// Thin atoms with no provenance (grade D, E005).
    LowGrade,
    /// Streams part of the answer, then stalls past the timeout (E004).
    Timeout,
    /// A transient transport error such as HTTP 503 (E001-style retry).
    Transient,
    /// The paper or repository cannot be reached (E001).
    SourceNotFound,
    /// An atom relates to an asset that does not exist (E007).
    Hallucination,
    /// Answer without an `atoms` array (E003).
    InvalidShape,
    /// A permanent provider error (E008).
    SystemError,
}

/// Probability of each fault per attempt (checked in this order; the rest is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultRates {
    /// Malformed JSON.
    pub malformed_json: f64,
    /// Missing required fields.
    pub missing_required: f64,
    /// Low-grade atoms.
    pub low_grade: f64,
    /// Timeouts.
    pub timeout: f64,
    /// Transient errors.
    pub transient: f64,
    /// Unreachable sources.
    pub source_not_found: f64,
    /// Fabricated asset references.
    pub hallucination: f64,
    /// Wrong response shape.
    pub invalid_shape: f64,
}

impl FaultRates {
    /// The demo's mix: every path shows up now and then, retries usually recover.
    pub fn demo() -> FaultRates {
        FaultRates {
            malformed_json: 0.08,
            missing_required: 0.08,
            low_grade: 0.06,
            timeout: 0.04,
            transient: 0.08,
            source_not_found: 0.03,
            hallucination: 0.0,
            invalid_shape: 0.04,
        }
    }
}
