//! One session with one MCP server: the program started with only the environment its
//! settings give it, the protocol's handshake done by the official SDK (`rmcp`), its
//! tools listed and called, each within the server's timeout. A call past it is dropped,
//! which tells the server (`notifications/cancelled`). What the server writes to its
//! standard error is kept (its last lines), so a server that fails says why. The child
//! is killed when the session is dropped.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;

use super::settings::{McpServer, PASSED_ENV};

/// How long a timed-out request's cancellation is given to reach the server.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(200);
/// Lines of the server's standard error kept for error messages.
const STDERR_LINES: usize = 20;

/// Why a session or a call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    /// The program could not be started.
    #[error("server `{server}`: cannot start `{command}`: {reason}")]
    Start {
        /// The server.
        server: String,
        /// Its program.
        command: String,
        /// Why.
        reason: String,
    },
    /// The handshake or a request failed (the server answered an error, or went away).
    #[error("server `{server}`: {reason}")]
    Protocol {
        /// The server.
        server: String,
        /// What happened, with the server's last words when it wrote any.
        reason: String,
    },
    /// It took longer than its timeout.
    #[error("server `{server}`: {what} took longer than {seconds} s (cancelled)")]
    Timeout {
        /// The server.
        server: String,
        /// What was waited for.
        what: String,
        /// The timeout.
        seconds: f64,
    },
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// Its name.
    pub name: String,
    /// What it does, as the server says.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

/// What one call gave.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    /// The text of its content blocks (other blocks described by their type), and its
    /// structured content when it has no text.
    pub text: String,
    /// Whether the server marked it an error (`isError`).
    pub is_error: bool,
    /// The result as the server sent it.
    pub raw: Value,
}

/// A running session.
pub struct McpSession {
    server: McpServer,
    service: RunningService<RoleClient, ()>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl McpSession {
    /// Starts `server` and does the handshake, within its timeout.
    pub async fn start(server: &McpServer) -> Result<McpSession, McpError> {
        let mut cmd = tokio::process::Command::new(&server.command);
        cmd.args(&server.args).env_clear();
        for name in PASSED_ENV {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        cmd.envs(&server.env);
        if let Some(dir) = &server.cwd {
            cmd.current_dir(dir);
        }
        let start_error = |reason: String| McpError::Start {
            server: server.name.clone(),
            command: server.command.clone(),
            reason,
        };
        let (transport, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| start_error(e.to_string()))?;
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(err) = stderr {
            tokio::spawn(keep_lines(err, kept.clone()));
        }
        let handshake = tokio::time::timeout(server.timeout, ().serve(transport)).await;
        let session = |service| McpSession {
            server: server.clone(),
            service,
            stderr: kept.clone(),
        };
        match handshake {
            Ok(Ok(service)) => Ok(session(service)),
            Ok(Err(e)) => Err(McpError::Protocol {
                server: server.name.clone(),
                reason: with_last_words(&format!("the handshake failed: {e}"), &kept),
            }),
            Err(_) => Err(McpError::Timeout {
                server: server.name.clone(),
                what: "the handshake".into(),
                seconds: server.timeout.as_secs_f64(),
            }),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.server.name
    }

    /// Every tool the server offers (all pages).
    pub async fn tools(&self) -> Result<Vec<McpTool>, McpError> {
        let listed = self
            .within("tools/list", self.service.list_all_tools())
            .await?
            .map_err(|e| self.protocol(&format!("tools/list failed: {e}")))?;
        Ok(listed
            .into_iter()
            .map(|t| McpTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect())
    }

    /// Calls `tool` with `args` once.
    pub async fn call(&self, tool: &str, args: Map<String, Value>) -> Result<McpCall, McpError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let result = self
            .within(
                &format!("the call of `{tool}`"),
                self.service.call_tool(params),
            )
            .await?
            .map_err(|e| self.protocol(&format!("the call of `{tool}` failed: {e}")))?;
        let raw = serde_json::to_value(&result).unwrap_or(Value::Null);
        Ok(McpCall {
            text: result_text(&raw),
            is_error: raw["isError"].as_bool().unwrap_or(false),
            raw,
        })
    }

    /// Ends the session: the server is told and stopped.
    pub async fn stop(self) {
        let _ = self.service.cancel().await;
    }

    /// `fut` within the server's timeout.
    async fn within<T>(
        &self,
        what: &str,
        fut: impl std::future::Future<Output = T>,
    ) -> Result<T, McpError> {
        match tokio::time::timeout(self.server.timeout, fut).await {
            Ok(v) => Ok(v),
            Err(_) => {
                // The request was dropped, which queues its `notifications/cancelled`:
                // a moment for the SDK to send it before the caller may end the session.
                tokio::time::sleep(CANCEL_GRACE).await;
                Err(McpError::Timeout {
                    server: self.server.name.clone(),
                    what: what.to_string(),
                    seconds: self.server.timeout.as_secs_f64(),
                })
            }
        }
    }

    fn protocol(&self, reason: &str) -> McpError {
        McpError::Protocol {
            server: self.server.name.clone(),
            reason: with_last_words(reason, &self.stderr),
        }
    }
}

/// Keeps the last lines `err` writes.
async fn keep_lines(err: tokio::process::ChildStderr, kept: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = tokio::io::BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut k) = kept.lock() {
            if k.len() == STDERR_LINES {
                k.pop_front();
            }
            k.push_back(crate::base::text::sanitize::sanitize(&line));
        }
    }
}

/// `reason`, with the server's last lines of standard error when it wrote any.
fn with_last_words(reason: &str, kept: &Mutex<VecDeque<String>>) -> String {
    let words: Vec<String> = kept
        .lock()
        .map(|k| k.iter().cloned().collect())
        .unwrap_or_default();
    if words.is_empty() {
        reason.to_string()
    } else {
        format!("{reason}; the server wrote: {}", words.join(" | "))
    }
}

/// The text of a call's result: its text blocks, other blocks by type, else its
/// structured content.
fn result_text(raw: &Value) -> String {
    let blocks = raw["content"].as_array().cloned().unwrap_or_default();
    let parts: Vec<String> = blocks
        .iter()
        .map(|b| match b["text"].as_str() {
            Some(t) => t.to_string(),
            None => format!("[{} content]", b["type"].as_str().unwrap_or("unknown")),
        })
        .collect();
    if parts.is_empty() {
        raw.get("structuredContent")
            .map(Value::to_string)
            .unwrap_or_default()
    } else {
        parts.join("\n")
    }
}
