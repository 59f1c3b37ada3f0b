//! Model Context Protocol servers: the `[mcp.NAME]` tables of the config read as
//! settings ([`settings`]) and a session with one server over its standard input and
//! output, through the official SDK ([`session`]): its tools listed, one called.

pub mod session;
pub mod settings;

pub use session::{McpCall, McpError, McpSession, McpTool};
pub use settings::{servers, McpServer};
