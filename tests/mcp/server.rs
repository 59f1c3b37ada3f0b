//! The MCP server the tests start, written with the SDK's server API (no plexus code):
//! this test binary serves it on its standard input and output when
//! `PLEXUS_TEST_MCP_SERVER` is set.
//!
//! Tools: `echo` (its `text` back), `fail` (an `isError` result), `hang` (answers only
//! when cancelled, and then writes `cancelled` into the file `PLEXUS_TEST_MCP_MARK`
//! names), `env` (the names of its environment variables), `loud` (whose description
//! carries terminal escape sequences).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

/// The variable that makes the binary this server.
pub const SERVER_ENV: &str = "PLEXUS_TEST_MCP_SERVER";
/// The file `hang` writes when it is cancelled.
pub const MARK_ENV: &str = "PLEXUS_TEST_MCP_MARK";
/// The description of `loud`: a colour, a title change, a clear screen.
pub const LOUD: &str = "Shouts \u{1b}[31mred\u{1b}[0m \u{1b}]0;pwned\u{7} \u{1b}[2J done";

#[derive(Clone)]
struct TestServer;

fn schema(props: Value) -> Arc<Map<String, Value>> {
    let Value::Object(m) = json!({"type": "object", "properties": props}) else {
        unreachable!("an object")
    };
    Arc::new(m)
}

fn text(result: CallToolResult) -> Result<CallToolResponse, ErrorData> {
    Ok(result.into())
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = vec![
            Tool::new(
                "echo",
                "Says its text back.",
                schema(json!({"text": {"type": "string"}})),
            ),
            Tool::new("fail", "Always fails.", schema(json!({}))),
            Tool::new("hang", "Never answers.", schema(json!({}))),
            Tool::new("env", "Names its environment variables.", schema(json!({}))),
            Tool::new("loud", LOUD, schema(json!({}))),
        ];
        Ok(ListToolsResult {
            tools,
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => {
                let said = args.get("text").and_then(Value::as_str).unwrap_or("");
                text(CallToolResult::success(vec![ContentBlock::text(said)]))
            }
            "fail" => text(CallToolResult::error(vec![ContentBlock::text(
                "the disk is on fire",
            )])),
            "hang" => {
                context.ct.cancelled().await;
                if let Ok(mark) = std::env::var(MARK_ENV) {
                    let _ = std::fs::write(mark, "cancelled");
                }
                Err(ErrorData::internal_error("cancelled", None))
            }
            "env" => {
                let mut names: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
                names.sort();
                text(CallToolResult::success(vec![ContentBlock::text(
                    names.join(","),
                )]))
            }
            _ => Err(ErrorData::invalid_params("no such tool", None)),
        }
    }
}

/// Serves the test server on standard input and output until the client goes.
pub fn serve() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        eprintln!("test server up");
        let running = TestServer
            .serve(rmcp::transport::stdio())
            .await
            .expect("serve");
        let _ = running.waiting().await;
    });
}
