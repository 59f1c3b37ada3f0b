//! Documents read from the store for display (requests, atoms, issues, streamed text)
//! and the keys that name them.

use std::sync::Arc;

/// A document loaded from the store for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doc {
    /// Asked for, not back yet.
    Loading,
    /// Pretty text.
    Ready(Arc<str>),
    /// Could not load.
    Missing(String),
}

/// A document of an invocation, by what it shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DocKey {
    /// The whole request of an invocation.
    Request(Arc<str>),
    /// The parsed atoms of an invocation's response.
    Atoms(Arc<str>),
    /// The quality check and errors of an invocation's response.
    Issues(Arc<str>),
    /// One atom (invocation, asset id).
    Atom(Arc<str>, Arc<str>),
    /// The text an invocation streamed, read back from the log.
    Stream(Arc<str>),
    /// The file a tool call of an invocation stored its data in (invocation, path).
    DataFile(Arc<str>, Arc<str>),
}

impl DocKey {
    /// The invocation the document belongs to.
    pub fn invocation(&self) -> &str {
        match self {
            DocKey::Request(i)
            | DocKey::Atoms(i)
            | DocKey::Issues(i)
            | DocKey::Atom(i, _)
            | DocKey::Stream(i)
            | DocKey::DataFile(i, _) => i,
        }
    }
}
