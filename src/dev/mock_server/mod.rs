//! A local OpenAI- and Anthropic-compatible server for tests, benchmarks and trying a
//! profile offline (`plexus mock-server`). It answers `POST …/chat/completions` and
//! `POST …/v1/messages`, streaming or not, with valid AgentResponses built by the
//! simulated provider, spread over a configurable time, and replays scripted faults per
//! task (the `x-plexus-task` header plexus sends): HTTP errors with or without
//! `Retry-After`, streams cut or stalled midway, invalid SSE, invalid JSON, oversized
//! and empty answers, error events, dropped connections. It can echo the key it was
//! sent: in 401 bodies, or inside the answer text split across events or JSON-escaped.
//! Given a script, it plays a model turn by turn instead (see [`script`]).
//!
//! HTTP/1.1 on hyper (keep-alive, chunked streaming); a fault's stream is a body of
//! our own that paces its events and breaks off or stalls where the script says.

pub mod answer;
mod embeddings;
pub mod key_echo;
pub mod moderations;
mod respond;
pub mod script;
mod wire;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::Response;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};

use self::key_echo::KeyEcho;
use self::respond::{respond, Dropped, Request};
use self::script::{Played, Script};
use self::wire::{InFlight, MockBody};
use crate::base::http_server::{read_body, whole, BodyError};
use crate::data::provider::{SimConfig, SimulatedProvider};

/// Most bytes of a request body.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// One scripted behaviour for one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MockFault {
    /// A normal answer.
    None,
    /// An HTTP error status with an optional `Retry-After` value and a JSON error body.
    Status {
        /// Status code.
        code: u16,
        /// `Retry-After` header value.
        retry_after: Option<String>,
    },
    /// Half the answer, then the connection is closed mid-stream.
    Cut,
    /// Half the answer, then the body ends cleanly — without the API's end marker.
    CleanEof,
    /// 429 with an `insufficient_quota` error (retrying cannot help).
    Quota,
    /// Half the answer, then nothing (the client's idle timeout must end it).
    Stall,
    /// Half the answer, then a line that is not SSE.
    InvalidSse,
    /// Half the answer, then an event whose data is not JSON.
    InvalidJson,
    /// An endless answer (the client's size cap must end it).
    Oversized,
    /// A well-formed answer with no text.
    Empty,
    /// Half the answer, then an API error event (OpenAI `error`, Anthropic `overloaded_error`).
    ErrorEvent,
    /// The connection is closed before any response.
    Drop,
    /// A normal answer whose reported usage is multiplied by this factor.
    Usage(f64),
}

/// How the server behaves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MockConfig {
    /// Time over which an answer streams, ms.
    pub stream_ms: u64,
    /// SSE text events per answer.
    pub chunks: usize,
    /// Faults per task id, one per call (first call first); then normal answers.
    pub script: HashMap<String, Vec<MockFault>>,
    /// Echo the request's key in 401 bodies (as some servers do): tests that plexus
    /// redacts it.
    pub echo_key: bool,
    /// Echo the request's key inside the answer text, split across stream events or
    /// JSON-escaped: tests that plexus redacts the decoded text.
    pub key_in_answer: Option<KeyEcho>,
    /// The key the server accepts (`Bearer …` or `x-api-key`); `None` accepts any.
    pub require_key: Option<String>,
    /// Seed of the simulated answers.
    pub seed: u64,
    /// A scripted model: when given, every chat request is answered by its next turn
    /// instead of the simulated model (see [`script`]).
    pub model_script: Option<Script>,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            stream_ms: 200,
            chunks: 20,
            script: HashMap::new(),
            echo_key: false,
            key_in_answer: None,
            require_key: None,
            seed: 7,
            model_script: None,
        }
    }
}

/// A request the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenRequest {
    /// Path.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body text.
    pub body: String,
}

impl SeenRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Shared {
    config: MockConfig,
    sim: SimulatedProvider,
    calls: Mutex<HashMap<String, usize>>,
    played: Mutex<Played>,
    seen: Mutex<Vec<SeenRequest>>,
    requests: AtomicU64,
    in_flight: Arc<AtomicU64>,
    max_in_flight: AtomicU64,
    keep_seen: bool,
}

impl Shared {
    /// The number of the script's next turn for a request of `task` by `agent`.
    fn next_turn(&self, script: &Script, asked: script::Asked<'_>) -> Option<usize> {
        self.played
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(script, asked)
    }

    /// The scripted fault of the next call of `task` (a normal answer past the script).
    fn next_fault(&self, task: &str) -> MockFault {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        let n = calls.entry(task.to_string()).or_insert(0);
        *n += 1;
        self.config
            .script
            .get(task)
            .and_then(|s| s.get(*n - 1))
            .cloned()
            .unwrap_or(MockFault::None)
    }
}

/// A running server on 127.0.0.1.
pub struct MockServer {
    /// Address it listens on.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on its own thread and runtime, on a free port (or `port`).
    pub fn start(config: MockConfig, port: u16, workers: usize) -> std::io::Result<MockServer> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .enable_all()
            .build()?;
        // A deep accept backlog: a thousand clients connect at once, and a dropped SYN
        // costs a second.
        let listener = {
            let _guard = rt.enter();
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.set_reuseaddr(true)?;
            socket.bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
            socket.listen(4096)?
        };
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            sim: SimulatedProvider::new(SimConfig {
                seed: config.seed,
                ..SimConfig::default()
            }),
            config,
            calls: Mutex::new(HashMap::new()),
            played: Mutex::new(Played::default()),
            seen: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
            in_flight: Arc::new(AtomicU64::new(0)),
            max_in_flight: AtomicU64::new(0),
            keep_seen: port == 0,
        });
        // Load the tokenizer now, not inside the first answer.
        crate::base::tokens::TokenCounter::default().count("warm up");
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("mock-server".into())
            .spawn(move || {
                rt.block_on(async move {
                    tokio::select! {
                        _ = accept_loop(listener, s) => {}
                        _ = stopped => {}
                    }
                });
                rt.shutdown_background();
            })?;
        Ok(MockServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// Most requests that were being answered at the same time.
    pub fn max_in_flight(&self) -> u64 {
        self.shared.max_in_flight.load(Ordering::Relaxed)
    }

    /// The requests received (kept for servers started on port 0, i.e. in tests).
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.shared
            .seen
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Blocks until the server stops (never, unless the listener fails).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                tokio::spawn(connection(stream, shared.clone()));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Serves one connection's requests in turn (keep-alive).
async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let service = service_fn(move |req| handle(req, shared.clone()));
    let _ = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Reads one request whole, notes it, and answers it.
async fn handle(
    req: hyper::Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<MockBody>, Dropped> {
    let (parts, body) = req.into_parts();
    let body = match read_body(body, MAX_BODY).await {
        Ok(b) => b,
        Err(BodyError::TooLarge(n)) => {
            let body = serde_json::json!({"error": {"type": "invalid_request_error",
                "message": format!("the body has {n} bytes; at most {MAX_BODY} are accepted (mock)")}});
            return Ok(whole(413, &[], body.to_string()));
        }
        Err(BodyError::Broken(_)) => return Err(Dropped),
    };
    let req = Request {
        path: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string()),
        headers: parts.headers,
        body,
    };
    shared.requests.fetch_add(1, Ordering::Relaxed);
    if shared.keep_seen {
        if let Ok(mut seen) = shared.seen.lock() {
            seen.push(SeenRequest {
                path: req.path.clone(),
                headers: req
                    .headers
                    .iter()
                    .map(|(n, v)| {
                        (
                            n.as_str().to_string(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
                body: String::from_utf8_lossy(&req.body).into_owned(),
            });
        }
    }
    let counted = InFlight::start(&shared.in_flight, &shared.max_in_flight);
    let answer = respond(&req, &shared).await?;
    Ok(answer.map(|b| b.counted(counted)))
}
