//! Evaluations over a dataset, built up from their parts: the dataset reader, the
//! placeholders that put a sample into a plan, the checks that score a sample's
//! outcome, and the statistics that compare two evaluations. Not yet reachable from the
//! command line: `plexus eval` is still to be built on them.

pub mod checks;
pub mod compare;
pub mod dataset;
pub mod epochs;
pub mod expand;
pub mod placeholders;
pub mod spec;
pub mod stats;
pub mod verdict;
