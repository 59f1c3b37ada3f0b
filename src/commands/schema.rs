//! `plexus schema plan|config`: the JSON Schema of plan files or of plexus.toml, for
//! editors, generated from the same declarations the checks use.

use color_eyre::eyre::Result;

use crate::cli::SchemaKind;

/// The schema of `what`, as pretty-printed JSON.
pub fn schema_text(what: SchemaKind) -> Result<String> {
    let schema = match what {
        SchemaKind::Plan => crate::plan::plan_schema(),
        SchemaKind::Config => crate::config::config_schema(),
    };
    Ok(serde_json::to_string_pretty(&schema)?)
}

/// `plexus schema WHAT`: prints the schema on standard output.
pub fn print(what: SchemaKind) -> Result<()> {
    crate::rawln!("{}", schema_text(what)?);
    Ok(())
}
