//! Evaluations over a dataset: `plexus eval` runs a plan once per sample (and epoch) as
//! one run, scores each sample with checks as it finishes, stores the results beside the
//! run and writes the failure tree as it goes.
//!
//! - [`dataset`], [`placeholders`], [`expand`]: the samples and the plan made from them.
//! - [`checks`], [`verdict`], [`epochs`], [`score`]: scoring a copy and a sample.
//! - [`judge`]: the LLM judge of `judge` checks.
//! - [`observe`]: what a copy produced, read back from the run's record.
//! - [`record`], [`read`]: the eval's rows in the database.
//! - [`tree`], [`problems`]: the failure tree, the problems report and the handoff.
//! - [`stats`], [`compare`]: comparing two evals.
//! - [`spec`]: the eval spec file.

pub mod checks;
pub mod compare;
pub mod dataset;
pub mod epochs;
pub mod expand;
pub mod finish;
pub mod judge;
pub mod marks;
pub mod observe;
pub mod placeholders;
pub mod problems;
pub mod read;
pub mod record;
pub mod score;
pub mod spec;
pub mod stats;
pub mod tree;
pub mod verdict;
