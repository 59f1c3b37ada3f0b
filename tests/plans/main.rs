//! Integration tests of the plans area, one binary: each file below is a module.

mod plan_validation;
mod fuzz_jsonpath;
