//! Integration tests of the cli area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod cli_help;
mod cli_providers;
mod code_size;
mod cost;
mod diff;
mod doc_examples;
mod docs;
mod eval;
mod eval_end;
mod eval_judge;
mod eval_kill;
mod eval_tree_read;
mod layers;
mod otlp;
mod otlp_receiver;
mod output_hygiene;
mod real_model;
mod real_servers;
mod rerun;
mod review;
mod review_wait;
mod show_order;
mod tables;
