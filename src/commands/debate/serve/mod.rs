//! `plexus serve`: debate sessions over HTTP for a front end. `POST /api/chat` with
//! `{"message", "mode": "multi_agent", "userId", "conversationId"}` starts a session and
//! answers with its event stream (`data: {json}` lines, `data: [DONE]` last); the
//! session is stored like any run. A client that goes away stops its session.

mod http;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result, WrapErr};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use self::http::{read_request, write_stream_head, write_whole, Request};
use super::{now_data, provider_for, spec_of, start_debate};
use crate::cli::{DebateOpts, ServeArgs};
use crate::commands::Globals;
use crate::debate::spec::EmbeddingSource;
use crate::engine::Control;
use crate::protocol::debate::MultiAgentStartRequest;
use crate::provider::{Provider, ProviderProfile};

/// The path sessions are started at.
pub const CHAT_PATH: &str = "/api/chat";
/// Connections open at once; past it a new one is closed.
pub const MAX_CONNECTIONS: usize = 256;
/// Sessions that may run at once; past it a request is answered 503.
pub const MAX_SESSIONS: usize = 32;
/// Time a request has to arrive whole.
const REQUEST_TIME: std::time::Duration = std::time::Duration::from_secs(10);
/// Time one write of the stream may take.
const WRITE_TIME: std::time::Duration = std::time::Duration::from_secs(30);

/// What every connection shares.
struct Server {
    db: std::path::PathBuf,
    options: DebateOpts,
    provider: Arc<dyn Provider>,
    profile: ProviderProfile,
    embedding: EmbeddingSource,
    sessions: Arc<tokio::sync::Semaphore>,
    stop: watch::Receiver<bool>,
}

/// Runs the server until Ctrl-C (sessions in flight end `cancelled`).
pub async fn serve(g: &Globals, args: ServeArgs) -> Result<ExitCode> {
    // Bad options stop the server before it listens.
    spec_of("check", &args.debate)?;
    // The database is created (or brought to this schema) before anyone can call.
    drop(
        crate::store::open_connection(&g.db)
            .wrap_err_with(|| format!("cannot open the database {}", g.db.display()))?,
    );
    let (profile, provider) = provider_for(g, args.provider.as_deref(), &args.sim)?;
    // Where the sessions' embeddings come from (an endpoint's settings checked now);
    // each session gets a comparer, and a cache, of its own.
    let (_, embedding) = super::comparer_for(&profile)?;
    let listener = TcpListener::bind((args.host, args.port))
        .await
        .wrap_err_with(|| format!("cannot listen on {}:{}", args.host, args.port))?;
    let addr: SocketAddr = listener.local_addr()?;
    crate::errln!("listening on http://{addr}");
    crate::errln!(
        "start a session: curl -N http://{addr}{CHAT_PATH} -H 'Content-Type: application/json' -d '{{\"message\": \"Plan a launch\", \"mode\": \"multi_agent\"}}'"
    );
    if !args.host.is_loopback() {
        crate::errln!(
            "warning: {} is not a loopback address: anyone who can reach it can start sessions",
            args.host
        );
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let server = Arc::new(Server {
        db: g.db.clone(),
        options: args.debate.clone(),
        provider,
        profile,
        embedding,
        sessions: Arc::new(tokio::sync::Semaphore::new(MAX_SESSIONS)),
        stop: stop_rx.clone(),
    });
    tokio::spawn(async move {
        let mut signals = crate::signals::stop_signals();
        if let Some(name) = signals.recv().await {
            crate::errln!("{name}: stopping; sessions in flight end cancelled");
            let _ = stop_tx.send(true);
        }
        if signals.recv().await.is_some() {
            std::process::exit(i32::from(crate::exit::RUN_FAILED));
        }
    });
    let mut tasks = tokio::task::JoinSet::new();
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut stop = stop_rx;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // Past the limit a connection is closed at once.
                    let Ok(slot) = connections.clone().try_acquire_owned() else {
                        drop(stream);
                        continue;
                    };
                    let server = server.clone();
                    tasks.spawn(async move {
                        if let Err(e) = connection(stream, &server).await {
                            tracing::warn!("connection from {peer}: {e}");
                        }
                        drop(slot);
                    });
                }
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            },
            _ = stop.wait_for(|s| *s) => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    while tasks.join_next().await.is_some() {}
    Ok(ExitCode::SUCCESS)
}

fn error_body(message: &str, field: Option<&str>) -> String {
    match field {
        Some(f) => json!({ "error": message, "field": f }),
        None => json!({ "error": message }),
    }
    .to_string()
}

/// The session settings of a request, or the 400 to answer.
fn spec_of_request(
    server: &Server,
    req: &Request,
) -> std::result::Result<crate::debate::spec::DebateSpec, String> {
    let start: MultiAgentStartRequest = serde_json::from_slice(&req.body).map_err(|e| {
        let field = if e.to_string().contains("`message`") {
            Some("message")
        } else if e.to_string().contains("`mode`") {
            Some("mode")
        } else {
            None
        };
        error_body(&format!("the body is not a start request: {e}"), field)
    })?;
    if start.mode != "multi_agent" {
        return Err(error_body(
            &format!("mode must be \"multi_agent\" (got {:?})", start.mode),
            Some("mode"),
        ));
    }
    if start.message.trim().is_empty() {
        return Err(error_body("message is empty", Some("message")));
    }
    let mut spec = spec_of(&start.message, &server.options)
        .map_err(|e| error_body(&e.to_string(), Some("message")))?;
    spec.embedding = server.embedding.clone();
    spec.user_id = start.user_id;
    spec.conversation_id = start.conversation_id;
    Ok(spec)
}

async fn connection(stream: TcpStream, server: &Server) -> Result<()> {
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let req = match tokio::time::timeout(REQUEST_TIME, read_request(&mut rd, &mut wr)).await {
        Ok(Ok(Some(r))) => r,
        Ok(Ok(None)) => return Ok(()),
        Ok(Err(r)) => {
            write_whole(&mut wr, r.status, &[], &error_body(&r.message, None)).await?;
            return Ok(());
        }
        Err(_) => {
            let body = error_body("the request did not arrive within 10 s", None);
            write_whole(&mut wr, 408, &[], &body).await?;
            return Ok(());
        }
    };
    if req.path != CHAT_PATH {
        let body = error_body(
            &format!(
                "no such path {:?}; sessions start at POST {CHAT_PATH}",
                req.path
            ),
            None,
        );
        write_whole(&mut wr, 404, &[], &body).await?;
        return Ok(());
    }
    match req.method.as_str() {
        "POST" => {}
        "OPTIONS" => {
            let allow = [
                ("Allow", "POST, OPTIONS"),
                ("Access-Control-Allow-Methods", "POST, OPTIONS"),
                ("Access-Control-Allow-Headers", "content-type"),
            ];
            write_whole(&mut wr, 204, &allow, "").await?;
            return Ok(());
        }
        m => {
            let body = error_body(&format!("{m} is not allowed here; use POST"), None);
            write_whole(&mut wr, 405, &[("Allow", "POST, OPTIONS")], &body).await?;
            return Ok(());
        }
    }
    let spec = match spec_of_request(server, &req) {
        Ok(s) => s,
        Err(body) => {
            write_whole(&mut wr, 400, &[], &body).await?;
            return Ok(());
        }
    };
    let Ok(_slot) = server.sessions.clone().try_acquire_owned() else {
        let body = error_body(
            &format!("{MAX_SESSIONS} sessions are running; try again when one ends"),
            None,
        );
        write_whole(&mut wr, 503, &[("Retry-After", "10")], &body).await?;
        return Ok(());
    };
    let started = async {
        let now = now_data(&spec.timezone).await?;
        // Each session its own cache of embeddings: a long-running server does not grow.
        let (comparer, _) = super::comparer_for(&server.profile)?;
        start_debate(&server.db, spec, server.provider.clone(), comparer, now)
    }
    .await;
    let mut started = match started {
        Ok(s) => s,
        Err(e) => {
            let body = error_body(&format!("the session could not start: {e}"), None);
            write_whole(&mut wr, 500, &[], &body).await?;
            return Err(eyre!("{e}"));
        }
    };
    let run_id = started.run_id.clone();
    crate::errln!("session {run_id} started");
    let mut events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let control = started.handle.control.clone();
    let finishing = tokio::spawn(started.finish());
    let mut connected = write_stream_head(&mut wr, &run_id).await.is_ok();
    if !connected {
        let _ = control.send(Control::Cancel("client disconnected".into()));
    }
    let mut stop = server.stop.clone();
    let mut stopping = false;
    let mut probe = [0u8; 256];
    let cancel = |why: &str| {
        let _ = control.send(Control::Cancel(why.to_string()));
    };
    loop {
        tokio::select! {
            batch = events.recv() => {
                let Some(batch) = batch else { break };
                if !connected {
                    continue;
                }
                let mut out = String::new();
                for env in &batch {
                    for item in crate::debate::sse::items(env) {
                        out.push_str(&crate::debate::sse::frame(&item));
                    }
                }
                let written = async {
                    wr.write_all(out.as_bytes()).await?;
                    wr.flush().await
                };
                // A client that stops reading for this long counts as gone.
                let ok = out.is_empty()
                    || matches!(tokio::time::timeout(WRITE_TIME, written).await, Ok(Ok(())));
                if !ok {
                    connected = false;
                    cancel("client disconnected");
                }
            }
            // Nothing more is expected from the client; the end of its side (or an
            // error) means it left, and the session stops. Stray bytes are ignored.
            n = rd.read(&mut probe), if connected => {
                if matches!(n, Ok(0) | Err(_)) {
                    connected = false;
                    cancel("client disconnected");
                }
            }
            r = stop.changed(), if !stopping => {
                let now = r.is_ok() && *stop.borrow();
                if now || r.is_err() {
                    stopping = true;
                }
                if now {
                    cancel("the server is stopping");
                }
            }
        }
    }
    let status = finishing
        .await
        .map_err(|e| eyre!("session {run_id}: {e}"))?
        .map_err(|e| eyre!("session {run_id}: {e}"))?;
    if connected {
        let _ = wr.write_all(crate::debate::sse::done().as_bytes()).await;
        let _ = wr.shutdown().await;
    }
    crate::errln!("session {run_id} ended {}", status.as_str());
    Ok(())
}
