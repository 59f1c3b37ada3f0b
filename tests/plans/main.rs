//! Integration tests of the plans area, one binary: each file below is a module.

mod fuzz_jsonpath;
mod fuzz_plan_tasks;
mod plan_schema;
mod plan_validation;
