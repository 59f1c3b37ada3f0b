//! Integration tests of the store area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod call_boundary;
mod log_filter;
mod portable;
mod portable_replay;
mod resume_after_kill;
mod resume_retries;
mod review_portable;
mod shared_db;
mod signals;
mod snapshots;
mod store_writer;
mod writer_failure;
