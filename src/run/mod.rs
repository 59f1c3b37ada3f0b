//! Layer 6–7, running a plan: the tools of tool-using agents, human review, and the engine.

pub mod engine;
pub mod review;
pub mod tools;
