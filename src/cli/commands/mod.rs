//! The CLI's commands, one module each: debate (and serve), validate and check, runs
//! and show, log, diff, rerun, review, export and import, failures and export-failures,
//! providers and ping, mcp, schema, completions and man, and the developer tools. Each is a leaf: what
//! two commands share lives in the library (`crate::cli::launch`, `crate::cli::open`,
//! `crate::base::table`, …); demo, run, resume, browse and replay are wired in the binary from
//! those; the benchmarks are in `crate::dev::bench`.

pub mod check;
pub mod debate;
pub mod diff;
pub mod docs_gen;
pub mod eval;
pub mod failures;
pub mod log;
pub mod mcp;
pub mod portable;
pub mod providers;
pub mod rerun;
pub mod review;
pub mod schema;
pub mod show;
