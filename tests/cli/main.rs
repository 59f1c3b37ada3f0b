//! Integration tests of the cli area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod cli_help;
mod cli_providers;
mod docs;
mod tables;
mod show_order;
mod output_hygiene;
mod diff;
mod rerun;
mod review;
