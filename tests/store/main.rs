//! Integration tests of the store area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod store_writer;
mod shared_db;
mod writer_failure;
mod resume_after_kill;
mod resume_retries;
mod signals;
mod portable;
mod portable_replay;
mod review_portable;
mod log_filter;
