//! Layer 11, developer tools: the benchmarks, the mock model server, the generators of
//! plans and failure trees, and the `plexus dev` commands that run them. Nothing below
//! imports them.

pub mod bench;
pub mod commands;
pub mod gen_failures;
mod gen_failures_text;
pub mod gen_plan;
pub mod mock_server;
