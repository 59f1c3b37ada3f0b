//! What `plexus rerun` was asked, from the command line (defined with its options).

pub use crate::cli::args::RerunArgs;
