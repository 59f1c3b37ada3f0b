//! Evaluations over a dataset: the building blocks (the statistics of comparing two
//! evaluations, the dataset reader). Not yet reachable from the command line.

pub mod dataset;
pub mod placeholders;
pub mod stats;
