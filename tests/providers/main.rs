//! Integration tests of the providers area, one binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod http_provider;
mod key_in_answer;
mod key_leak;
mod model_shapes;
mod react_request;
mod scripted_model;
mod structured_output;
