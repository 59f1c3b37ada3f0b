//! Integration tests of the react area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod conversation;
mod fetch_reference;
mod loop_metrics;
mod loop_tokens;
mod plan_react;
mod provider_problems;
mod react_run;
mod scripted_levels;
mod scripted_run;
mod scripted_skills;
mod scripted_window;
mod shipped_plans;
mod sim_compression;
mod skills;
