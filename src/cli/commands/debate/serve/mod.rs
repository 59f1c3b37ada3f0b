//! `plexus serve`: debate sessions over HTTP for a front end. `POST /api/chat` with
//! `{"message", "mode": "multi_agent", "userId", "conversationId"}` starts a session and
//! answers with its event stream (`data: {json}` lines, `data: [DONE]` last); the
//! session is stored like any run; `GET /api/sessions/ID` reads one (running or ended) in
//! the front end's shape (`type: multi_agent_session`). A client that goes away stops its session. Only
//! requests naming this server, from no browser origin or an allowed one, and with the
//! token when one is set, are served.

mod access;
mod chat;
mod http;
mod server;
mod sessions;
mod stream;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use color_eyre::eyre::{eyre, Result, WrapErr};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

use self::access::Access;
use self::chat::error_body;
pub use self::server::{Server, CHAT_PATH, MAX_BODY, MAX_SESSIONS};
use super::options::{provider_for, spec_of};
use crate::cli::args::ServeArgs;
use crate::cli::launch::debate::{comparer_for, moderator_for};
use crate::cli::launch::Globals;
use crate::data::exit::InvalidOptions;

/// Connections open at once; past it a new one is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 256;
/// Connections past the limit being answered 503 at once; past these, closed.
const MAX_REFUSING: usize = 64;

/// Refuses options that would expose the server: beyond the loopback address, only
/// with a token.
fn check_exposure(args: &ServeArgs) -> Result<()> {
    if let Some(t) = &args.token {
        if t.trim().is_empty() || t.trim() != t {
            return Err(eyre!(InvalidOptions(
                "--token (or PLEXUS_SERVE_TOKEN) is empty or has spaces around it".into()
            )));
        }
    }
    if !args.host.is_loopback() && args.token.is_none() {
        return Err(eyre!(InvalidOptions(format!(
            "--host {} is not a loopback address: anyone who can reach it could start sessions on your provider. Pass --token TOKEN (or set PLEXUS_SERVE_TOKEN) so that only clients sending `Authorization: Bearer TOKEN` are served, or listen on 127.0.0.1",
            args.host
        ))));
    }
    Ok(())
}

/// Runs the server until Ctrl-C (sessions in flight end `cancelled`).
pub async fn serve(g: &Globals, args: ServeArgs) -> Result<ExitCode> {
    check_exposure(&args)?;
    // Bad options stop the server before it listens.
    spec_of("check", &args.debate, None)?;
    // The database is created (or brought to this schema) before anyone can call.
    drop(
        crate::data::store::open_connection(&g.db)
            .wrap_err_with(|| format!("cannot open the database {}", g.db.display()))?,
    );
    let (profile, provider) = provider_for(g, args.provider.as_deref(), &args.sim)?;
    // Where the sessions' embeddings come from (an endpoint's settings checked now);
    // each session gets a comparer, and a cache, of its own.
    let (_, embedding) = comparer_for(&profile)?;
    // The moderation endpoint's settings checked now too.
    moderator_for(&profile)?;
    let listener = TcpListener::bind((args.host, args.port))
        .await
        .wrap_err_with(|| format!("cannot listen on {}:{}", args.host, args.port))?;
    let addr: SocketAddr = listener.local_addr()?;
    crate::errln!("listening on http://{addr}");
    let auth = if args.token.is_some() {
        " -H 'Authorization: Bearer TOKEN'"
    } else {
        ""
    };
    crate::errln!(
        "start a session: curl -N http://{addr}{CHAT_PATH}{auth} -H 'Content-Type: application/json' -d '{{\"message\": \"Plan a launch\", \"mode\": \"multi_agent\"}}'"
    );
    for o in &args.allow_origin {
        crate::errln!("pages of {o} may call");
    }
    let (stop_tx, stop_rx) = watch::channel(None);
    let server = Arc::new(Server {
        db: g.db.clone(),
        options: args.debate.clone(),
        provider,
        profile,
        embedding,
        access: Access::new(addr, args.allow_origin.clone(), args.token.clone()),
        sessions: Arc::new(Semaphore::new(MAX_SESSIONS)),
        stop: stop_rx.clone(),
    });
    tokio::spawn(async move {
        let mut signals = crate::base::signals::stop_signals();
        if let Some(name) = signals.recv().await {
            crate::errln!("{name}: stopping; sessions in flight end cancelled");
            let _ = stop_tx.send(Some(name));
        }
        if signals.recv().await.is_some() {
            std::process::exit(i32::from(crate::data::exit::RUN_FAILED));
        }
    });
    accept(listener, &server).await;
    // Every session ended (and was stored) once all its slots are free again.
    let _ = server.sessions.acquire_many(MAX_SESSIONS as u32).await;
    Ok(ExitCode::SUCCESS)
}

/// Accepts connections until the server stops, then waits for those open to end.
async fn accept(listener: TcpListener, server: &Arc<Server>) {
    let mut tasks = JoinSet::new();
    let limits = Limits {
        connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        refusing: Arc::new(Semaphore::new(MAX_REFUSING)),
    };
    let mut stop = server.stop.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => limits.spawn(&mut tasks, stream, peer, server),
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            _ = stop.wait_for(|s| s.is_some()) => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    // Streams end once their sessions do; a client that does not read gets the write
    // limit, no more.
    let drained = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(http::WRITE_TIME + Duration::from_secs(5), drained).await;
}

/// The connections served at once, and those past the limit being refused at once.
struct Limits {
    connections: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
}

impl Limits {
    /// Serves connection `stream` from `peer` on a task of `tasks`, when one of the
    /// connections is free.
    fn spawn(
        &self,
        tasks: &mut JoinSet<()>,
        stream: TcpStream,
        peer: SocketAddr,
        server: &Arc<Server>,
    ) {
        let Ok(slot) = self.connections.clone().try_acquire_owned() else {
            // Past the limit a connection is told so, if a few others are not being
            // told already.
            if let Ok(r) = self.refusing.clone().try_acquire_owned() {
                tasks.spawn(async move {
                    refuse_busy(stream).await;
                    drop(r);
                });
            }
            return;
        };
        let server = server.clone();
        tasks.spawn(async move {
            serve_one(stream, server).await;
            tracing::debug!("connection from {peer} closed");
            drop(slot);
        });
    }
}

/// Tells a connection past the limit that too many are open, and closes it.
async fn refuse_busy(stream: TcpStream) {
    let body = error_body(
        &format!("{MAX_CONNECTIONS} connections are open; try again in a moment"),
        None,
    );
    http::refuse_raw(stream, 503, &[("Retry-After", "1")], &body).await;
}

/// Serves the requests of one connection until it closes or the server stops.
async fn serve_one(stream: TcpStream, server: Arc<Server>) {
    let mut stop = server.stop.clone();
    let stopping = async move {
        let _ = stop.wait_for(|s| s.is_some()).await;
    };
    let handler = {
        let server = server.clone();
        move |req, due| chat::handle(req, server.clone(), due)
    };
    let late = || error_body("the request did not arrive within 10 s", None);
    http::serve_connection(stream, handler, stopping, late).await;
}
