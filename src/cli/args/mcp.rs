//! `plexus mcp`: the Model Context Protocol servers of plexus.toml, tried by hand.

use clap::{Args, Subcommand};

/// `plexus mcp COMMAND`.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// The commands on MCP servers.
#[derive(Subcommand, Debug)]
pub enum McpCommand {
    /// Start each server (or one), list its tools with their schemas, and stop it
    ///
    /// Also what each server is started with: its command, arguments, folder and the
    /// names of the environment variables it gets.
    #[command(after_long_help = super::help::MCP_LIST)]
    List {
        /// Only this server (`[mcp.NAME]`).
        name: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool of a server once, and print what it answered
    ///
    /// Exit 1 when the server marks the result an error or the call fails.
    #[command(after_long_help = super::help::MCP_CALL)]
    Call {
        /// The server (`[mcp.NAME]`).
        name: String,
        /// The tool.
        tool: String,
        /// Its arguments, a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
        /// JSON output: the result as the server sent it.
        #[arg(long)]
        json: bool,
    },
}
