//! Integration tests of the providers area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod http_provider;
mod key_leak;
mod key_in_answer;
mod react_request;
