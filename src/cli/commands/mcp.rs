//! `plexus mcp list` (each server started, its tools listed with their schemas, stopped)
//! and `plexus mcp call NAME TOOL` (one call, its answer printed). What a server says is
//! untrusted: text output goes through the terminal sanitizer, JSON output is JSON.

use color_eyre::eyre::{eyre, Result};
use serde_json::{json, Map, Value};

use crate::cli::args::McpCommand;
use crate::cli::launch::profile::config;
use crate::cli::launch::Globals;
use crate::data::mcp::{servers, McpServer, McpSession, McpTool};

/// Runs one `plexus mcp` command; `Ok(false)` when a call answered an error.
pub async fn mcp(globals: &Globals, command: McpCommand) -> Result<bool> {
    let cfg = config(globals)?;
    let all = servers(&cfg).map_err(|e| eyre!("{e}"))?;
    match command {
        McpCommand::List { name, json } => {
            let chosen: Vec<&McpServer> = match &name {
                Some(n) => vec![named(&all, n)?],
                None => all.iter().collect(),
            };
            if chosen.is_empty() {
                crate::outln!("no [mcp.NAME] table in {}", cfg.file_label());
                return Ok(true);
            }
            list(&chosen, json).await
        }
        McpCommand::Call {
            name,
            tool,
            args,
            json,
        } => call(named(&all, &name)?, &tool, &args, json).await,
    }
}

/// The server called `name`, or an error listing those there are.
fn named<'a>(all: &'a [McpServer], name: &str) -> Result<&'a McpServer> {
    all.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        eyre!(
            "no MCP server `{name}` in the config (servers: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )
    })
}

/// Lists the tools of each server; a server that fails is reported and the others
/// still listed (`Ok(false)` when one failed).
async fn list(chosen: &[&McpServer], json: bool) -> Result<bool> {
    let mut all_ok = true;
    let mut rows = Vec::new();
    for server in chosen {
        let listed = match McpSession::start(server).await {
            Ok(session) => {
                let tools = session.tools().await;
                session.stop().await;
                tools
            }
            Err(e) => Err(e),
        };
        all_ok &= listed.is_ok();
        if json {
            rows.push(match &listed {
                Ok(tools) => json!({"server": server.name, "started_with": started_with(server),
                                    "tools": tools.iter().map(tool_json).collect::<Vec<_>>()}),
                Err(e) => json!({"server": server.name, "started_with": started_with(server),
                                 "error": e.to_string()}),
            });
        } else {
            print_server(server, &listed);
        }
    }
    if json {
        crate::rawln!("{}", serde_json::to_string_pretty(&rows)?);
    }
    Ok(all_ok)
}

/// What a server is started with: never the values of its environment, only names.
fn started_with(s: &McpServer) -> Value {
    let mut env: Vec<&str> = crate::data::mcp::settings::PASSED_ENV.to_vec();
    env.extend(s.env.keys().map(String::as_str));
    json!({"command": s.command, "args": s.args, "cwd": s.cwd,
           "env": env, "timeout_s": s.timeout.as_secs_f64()})
}

fn tool_json(t: &McpTool) -> Value {
    json!({"name": t.name, "description": t.description, "input_schema": t.input_schema})
}

/// A server and its tools, as text.
fn print_server(s: &McpServer, listed: &Result<Vec<McpTool>, crate::data::mcp::McpError>) {
    let with = started_with(s);
    crate::outln!(
        "{}: {} {}  (env: {})",
        s.name,
        s.command,
        s.args.join(" "),
        with["env"].as_array().map_or(String::new(), |a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
    );
    match listed {
        Err(e) => crate::outln!("  error: {e}"),
        Ok(tools) if tools.is_empty() => crate::outln!("  no tools"),
        Ok(tools) => {
            for t in tools {
                crate::outln!("  {}  {}", t.name, t.description);
                crate::outln!("    arguments: {}", t.input_schema);
            }
        }
    }
}

/// Calls `tool` once and prints its answer.
async fn call(server: &McpServer, tool: &str, args: &str, json: bool) -> Result<bool> {
    let args: Map<String, Value> = match serde_json::from_str(args) {
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            return Err(eyre!(
                "--args must be a JSON object, not {}",
                crate::base::json_text::kind_of(&other)
            ))
        }
        Err(e) => return Err(eyre!("--args is not valid JSON: {e}")),
    };
    let session = McpSession::start(server).await.map_err(|e| eyre!("{e}"))?;
    let answered = session.call(tool, args).await;
    session.stop().await;
    let answered = answered.map_err(|e| eyre!("{e}"))?;
    if json {
        crate::rawln!("{}", serde_json::to_string_pretty(&answered.raw)?);
    } else {
        if answered.is_error {
            crate::outln!("{}/{tool} answered an error:", server.name);
        }
        crate::outln!("{}", answered.text);
    }
    Ok(!answered.is_error)
}
