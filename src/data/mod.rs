//! Layer 4–5, the data: the SQLite store, model providers, data references, failure trees, export and import, comparing runs, reading a log, exit codes.

pub mod diff;
pub mod exit;
pub mod failures;
pub mod mcp;
pub mod portable;
pub mod provider;
pub mod replay;
pub mod resolve;
pub mod store;
