//! Debate mode: a host, a planner, a critic and a reporter reach a plan in rounds of
//! argument, steered by how far their positions agree.
//!
//! The planner and the critic state positions each round (the first round in parallel);
//! [`similarity`] measures how close the positions are; [`host`] applies the decision
//! rules to that measure; [`engine`] runs the rounds, stores every output as events of a
//! run, and hands over to the reporter when the discussion ends.

pub mod check;
pub mod content;
pub mod diff;
pub mod embed_http;
pub mod host;
pub mod json_endpoint;
pub mod moderation;
pub mod progress;
pub mod replay;
mod round_end;
pub mod session;
pub mod shared;
pub mod similarity;
pub mod speak;
pub mod sse;
pub mod stream;

/// Whether a run is a debate session (its plan id).
pub fn is_debate(plan_id: &str) -> bool {
    plan_id == "debate"
}
