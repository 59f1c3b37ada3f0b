//! Integration tests of the replay area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod failures_tree;
mod handoff_truth;
mod replay;
mod replay_follow;
