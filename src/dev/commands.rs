//! `plexus dev …`: the plan and failure-tree generators and the mock server.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result, WrapErr};

use crate::cli::args::{DevCommand, MockServerArgs};
use crate::data::exit;
use crate::dev::gen_failures;
use crate::dev::mock_server::script::Script;
use crate::dev::mock_server::{MockConfig, MockServer};

/// Runs one developer tool.
pub fn run(cmd: DevCommand) -> Result<ExitCode> {
    match cmd {
        DevCommand::GenPlan(spec) => {
            let v = crate::dev::gen_plan::generate(spec);
            crate::rawln!("{}", serde_json::to_string_pretty(&v)?);
            Ok(ExitCode::SUCCESS)
        }
        DevCommand::GenFailures { dir, spec } => gen_failures(&dir, &spec),
        DevCommand::MockServer(args) => {
            mock_server(args)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `plexus dev mock-server`: the script loaded, then the mock API served until killed.
fn mock_server(args: MockServerArgs) -> Result<()> {
    let model_script = match &args.script {
        Some(path) => Some(Script::load(path).map_err(|e| eyre!(e))?),
        None => None,
    };
    let config = MockConfig {
        stream_ms: args.stream_ms,
        chunks: args.chunks,
        require_key: args.require_key,
        model_script,
        ..MockConfig::default()
    };
    serve_mock(config, args.port, args.threads)
}

/// Serves the mock API until killed.
pub fn serve_mock(config: MockConfig, port: u16, threads: usize) -> Result<()> {
    crate::base::open_files::raise_open_files();
    let scripted = config.model_script.is_some();
    let server = MockServer::start(config, port, threads)
        .wrap_err_with(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    // One write, errors ignored: whoever started us may stop reading after line one.
    let banner = format!(
        "mock server listening on {0}{1}\n  OpenAI-compatible: {0}/v1/chat/completions   Anthropic: {0}/v1/messages\n",
        server.url(),
        if scripted { " (scripted model)" } else { "" }
    );
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = out.write_all(banner.as_bytes());
    let _ = out.flush();
    server.wait();
    Ok(())
}

/// `plexus dev gen-failures DIR`: a generated failure tree.
pub fn gen_failures(dir: &Path, spec: &gen_failures::GenSpec) -> Result<ExitCode> {
    let r = gen_failures::generate_tree(dir, spec)?;
    crate::outln!(
        "{} samples ({} failed), {} files, {:.1} MB in {}",
        r.samples,
        r.failed,
        r.files,
        r.bytes as f64 / 1e6,
        r.dir.display()
    );
    for (id, doc, how) in &r.damaged {
        crate::outln!("damaged on purpose: {id} {doc} ({how})");
    }
    crate::outln!(
        "context file: {}",
        r.dir.join(gen_failures::CONTEXT_FILE).display()
    );
    Ok(ExitCode::from(exit::OK))
}
