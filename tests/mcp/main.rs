//! `plexus mcp` against an MCP server written in the test with the SDK's server API:
//! this binary runs the tests, and is the server when the tests start it so.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod server;

fn main() {
    if std::env::var_os(server::SERVER_ENV).is_some() {
        server::serve();
        return;
    }
    let args = libtest_mimic::Arguments::from_args();
    libtest_mimic::run(&args, cli::tests()).exit();
}
