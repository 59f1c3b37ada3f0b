//! The `[mcp.NAME]` tables of `plexus.toml` as [`McpServer`] settings. The file was
//! checked key by key when it loaded (types, ranges, unknown keys); here it is read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::base::config::Config;

/// The environment variables a server gets besides those its table names: what a
/// program needs to run, and nothing secret.
pub const PASSED_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TMPDIR"];

/// One server of the config.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServer {
    /// Its name (`[mcp.NAME]`).
    pub name: String,
    /// The program started.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The variables its table names.
    pub env: BTreeMap<String, String>,
    /// The folder it starts in.
    pub cwd: Option<PathBuf>,
    /// Most time its start or one call may take.
    pub timeout: Duration,
}

/// Default of `timeout_s`.
const DEFAULT_TIMEOUT_S: f64 = 60.0;

/// Every server of `config`, by name; an error names the table that cannot be read.
pub fn servers(config: &Config) -> Result<Vec<McpServer>, String> {
    let Some(tables) = config.other.get("mcp") else {
        return Ok(Vec::new());
    };
    let Some(tables) = tables.as_table() else {
        return Err(format!(
            "{}: [mcp] must hold [mcp.NAME] tables",
            config.file_label()
        ));
    };
    tables
        .iter()
        .map(|(name, t)| {
            server(name, t).map_err(|e| format!("{}: [mcp.{name}]: {e}", config.file_label()))
        })
        .collect()
}

/// The server of table `t`.
fn server(name: &str, t: &toml::Value) -> Result<McpServer, String> {
    let t = t.as_table().ok_or("must be a table")?;
    let text = |k: &str| t.get(k).and_then(toml::Value::as_str).map(str::to_string);
    let command = text("command").ok_or("`command` is required")?;
    let args = t
        .get("args")
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let env = t
        .get("env")
        .and_then(toml::Value::as_table)
        .map(|e| {
            e.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let timeout_s = t
        .get("timeout_s")
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .unwrap_or(DEFAULT_TIMEOUT_S);
    Ok(McpServer {
        name: name.to_string(),
        command,
        args,
        env,
        cwd: text("cwd").map(PathBuf::from),
        // The file's checks bound it; a value that still cannot be a duration (built
        // in code) is the default, not a panic.
        timeout: Duration::try_from_secs_f64(timeout_s)
            .ok()
            .filter(|d| !d.is_zero())
            .unwrap_or(Duration::from_secs_f64(DEFAULT_TIMEOUT_S)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        Config {
            other: text.parse().expect("toml"),
            ..Config::default()
        }
    }

    #[test]
    fn a_table_reads_as_its_server_with_the_defaults() {
        let c = config(
            "[mcp.files]\ncommand = \"srv\"\nargs = [\"-v\", \"x\"]\nenv = {A = \"1\"}\n\n[mcp.time]\ncommand = \"t\"\ntimeout_s = 2\n",
        );
        let s = servers(&c).expect("servers");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "files");
        assert_eq!(s[0].args, ["-v", "x"]);
        assert_eq!(s[0].env["A"], "1");
        assert_eq!(s[0].timeout, Duration::from_secs(60));
        assert_eq!(s[1].timeout, Duration::from_secs(2));
        let odd = servers(&config("[mcp.x]\ncommand = \"c\"\ntimeout_s = -1.0\n")).expect("read");
        assert_eq!(odd[0].timeout, Duration::from_secs(60));
        assert!(servers(&config("[mcp.x]\nargs = []\n"))
            .expect_err("no command")
            .contains("[mcp.x]: `command` is required"));
    }
}
