//! Integration tests of the debate area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod debate_host;
mod debate_kill;
mod debate_run;
mod debate_scripted;
mod debate_serve;
mod debate_similarity;
