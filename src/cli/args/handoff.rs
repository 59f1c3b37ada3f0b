//! Options of `plexus init-context`: the Init→Execute handoff written from the shell.

use std::path::PathBuf;

use clap::Args;

/// `plexus init-context REQUIREMENT --design ROLE=PATH… [-o FILE]`.
#[derive(Args, Debug, Clone)]
pub struct InitContextArgs {
    /// The requirement, as the Execute agent is to read it.
    pub requirement: String,
    /// A design file as ROLE=PATH (e.g. business_rules_path=BusinessRules.md); once
    /// per file.
    #[arg(long = "design", value_name = "ROLE=PATH", required = true)]
    pub design: Vec<String>,
    /// The design's intent and trade-offs.
    #[arg(long, value_name = "TEXT")]
    pub rationale: Option<String>,
    /// A known constraint; once per constraint.
    #[arg(long = "constraint", value_name = "TEXT")]
    pub constraints: Vec<String>,
    /// Where to write it (written whole or not at all).
    #[arg(
        short = 'o',
        long,
        value_name = "FILE",
        default_value = "init_to_execute_context.json"
    )]
    pub output: PathBuf,
}
