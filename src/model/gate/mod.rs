//! The quality gate and the status rules: pure functions over the protocol's types that
//! grade atoms, decide an invocation's status and a run's. The engine applies them as a
//! run goes; the store and offline review apply the same rules to what was recorded.

pub mod known;
pub mod quality;
pub mod status;
