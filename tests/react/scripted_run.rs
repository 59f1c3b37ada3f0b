//! Running a plan against the mock server playing a scripted model, over either API,
//! streamed or whole: what the scripted-model tests of this area share.

use std::path::Path;

use crate::common::bin::{output, plexus};
use plexus::data::store::Store;
use plexus::dev::mock_server::script::Script;
use plexus::dev::mock_server::{MockConfig, MockServer};
use plexus::model::event::EngineEvent;

/// What a scripted run left: its folder (kept alive), its events, and the server (with
/// the requests it saw).
pub struct Scripted {
    /// The run's folder.
    pub dir: tempfile::TempDir,
    /// The run's events, in order.
    pub events: Vec<EngineEvent>,
    /// The server that answered.
    pub server: MockServer,
}

/// Runs `plan.json` of a folder `workspace` fills, on a fresh server playing `script`
/// over `kind`'s API (`openai` or `anthropic`); the run must succeed.
pub fn run_scripted(script: &Script, kind: &str, stream: bool, workspace: fn(&Path)) -> Scripted {
    run_scripted_to(script, kind, stream, workspace, 0)
}

/// [`run_scripted`] for a run that must end with exit code `code`.
pub fn run_scripted_to(
    script: &Script,
    kind: &str,
    stream: bool,
    workspace: fn(&Path),
    code: i32,
) -> Scripted {
    let what = format!("{kind} stream={stream}");
    let server = MockServer::start(
        MockConfig {
            stream_ms: 10,
            chunks: 4,
            model_script: Some(script.clone()),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let base = match kind {
        "openai" => format!("{}/v1", server.url()),
        _ => server.url(),
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir);
    std::fs::write(
        dir.join("plexus.toml"),
        format!("[providers.local]\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"m\"\nstream = {stream}\n"),
    )
    .expect("config");
    let out = output(plexus(dir).args([
        "--db",
        "s.db",
        "--config",
        "plexus.toml",
        "run",
        "plan.json",
        "--provider",
        "local",
        "--headless",
    ]));
    assert_eq!(
        out.code,
        Some(code),
        "{what}: {}\n{}",
        out.stdout,
        out.stderr
    );
    let store = Store::open(&dir.join("s.db")).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let events = store
        .events(&run, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .map(|r| r.event.expect("decodes"))
        .collect();
    Scripted {
        dir: tmp,
        events,
        server,
    }
}
