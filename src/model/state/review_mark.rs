//! The review decision a task carries once a person has decided on it.

use std::sync::Arc;

/// A person's decision on a task stopped for review, as the log tells it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReviewMark {
    /// Accepted (the atoms were stored) or rejected.
    pub accepted: bool,
    /// Who decided.
    pub reviewer: Arc<str>,
    /// When (ms since the Unix epoch).
    pub at_ms: i64,
    /// The invocation reviewed.
    pub invocation: Option<Arc<str>>,
    /// The note of an acceptance, the reason of a rejection.
    pub text: Option<String>,
}

impl ReviewMark {
    /// `reviewed: accepted by NAME at TIME` (or rejected), with the note or reason.
    pub fn describe(&self) -> String {
        let at = chrono::DateTime::from_timestamp_millis(self.at_ms)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default();
        let what = if self.accepted {
            "accepted"
        } else {
            "rejected"
        };
        match &self.text {
            Some(t) => format!("reviewed: {what} by {} at {at} — {t}", self.reviewer),
            None => format!("reviewed: {what} by {} at {at}", self.reviewer),
        }
    }
}
