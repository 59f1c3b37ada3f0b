//! A local OpenAI- and Anthropic-compatible server for tests, benchmarks and trying a
//! profile offline (`plexus mock-server`). It answers `POST …/chat/completions` and
//! `POST …/v1/messages`, streaming or not, with valid AgentResponses built by the
//! simulated provider, spread over a configurable time, and replays scripted faults per
//! task (the `x-plexus-task` header plexus sends): HTTP errors with or without
//! `Retry-After`, streams cut or stalled midway, invalid SSE, invalid JSON, oversized
//! and empty answers, error events, dropped connections. It can echo the key it was
//! sent: in 401 bodies, or inside the answer text split across events or JSON-escaped.
//!
//! A small HTTP/1.1 server by hand (keep-alive, chunked streaming): faults like a
//! stream cut mid-chunk need control a framework would hide.

pub mod answer;
mod embeddings;
pub mod key_echo;
mod wire;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use self::answer::Api;
use self::key_echo::{KeyEcho, KeyedAnswer};
use self::wire::{header, read_request, reason, write_chunk, write_whole, Request};
use crate::provider::{SimConfig, SimulatedProvider};

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
    seen: Mutex<Vec<SeenRequest>>,
    requests: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    keep_seen: bool,
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
            seen: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
            keep_seen: port == 0,
        });
        // Load the tokenizer now, not inside the first answer.
        crate::tokens::TokenCounter::default().count("warm up");
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
    let mut stream = BufReader::new(stream);
    while let Ok(Some(req)) = read_request(&mut stream).await {
        shared.requests.fetch_add(1, Ordering::Relaxed);
        if shared.keep_seen {
            if let Ok(mut seen) = shared.seen.lock() {
                seen.push(SeenRequest {
                    path: req.path.clone(),
                    headers: req.headers.clone(),
                    body: String::from_utf8_lossy(&req.body).into_owned(),
                });
            }
        }
        let now = shared.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::Relaxed);
        let answered = respond(stream.get_mut(), &req, &shared).await;
        shared.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !matches!(answered, Ok(true)) {
            return;
        }
    }
}

/// Answers one request; `Ok(false)` closes the connection.
async fn respond(stream: &mut TcpStream, req: &Request, shared: &Shared) -> std::io::Result<bool> {
    let embeddings = req.path.ends_with("/embeddings");
    let api = if req.path.ends_with("/chat/completions") || embeddings {
        Api::Openai
    } else if req.path.ends_with("/messages") {
        Api::Anthropic
    } else {
        let body = r#"{"error":{"type":"not_found_error","message":"no such route"}}"#;
        write_whole(stream, 404, "Not Found", &[], body).await?;
        return Ok(true);
    };
    let cfg = &shared.config;
    let given_key = header(req, "x-api-key").map(str::to_string).or_else(|| {
        header(req, "authorization").map(|v| v.trim_start_matches("Bearer ").to_string())
    });
    if let Some(want) = &cfg.require_key {
        if given_key.as_deref() != Some(want.as_str()) {
            let shown = if cfg.echo_key {
                given_key.unwrap_or_default()
            } else {
                "****".into()
            };
            // Some servers pad their messages; the key lands past any preview's cut.
            let pad = if cfg.echo_key {
                "x".repeat(260)
            } else {
                String::new()
            };
            let body = serde_json::json!({"error": {"type": "authentication_error",
                "message": format!("{pad}Incorrect API key provided: {shown}")}})
            .to_string();
            write_whole(stream, 401, "Unauthorized", &[], &body).await?;
            return Ok(true);
        }
    }
    if embeddings {
        let (status, body) = embeddings::answer(&req.body);
        write_whole(stream, status, reason(status), &[], &body).await?;
        return Ok(true);
    }
    let task = header(req, "x-plexus-task").unwrap_or("").to_string();
    let invocation = header(req, "x-plexus-invocation").unwrap_or("INV_00000000_000000_MOCK_001");
    let fault = {
        let mut calls = shared.calls.lock().unwrap_or_else(|p| p.into_inner());
        let n = calls.entry(task.clone()).or_insert(0);
        *n += 1;
        cfg.script
            .get(&task)
            .and_then(|s| s.get(*n - 1))
            .cloned()
            .unwrap_or(MockFault::None)
    };
    let call = answer::call(api, &req.body, &task, invocation, &shared.sim);
    match fault {
        MockFault::Drop => return Ok(false),
        MockFault::Quota => {
            let body = r#"{"error":{"message":"You exceeded your current quota (mock)","type":"insufficient_quota","code":"insufficient_quota"}}"#;
            write_whole(stream, 429, reason(429), &[], body).await?;
            return Ok(true);
        }
        MockFault::Status { code, retry_after } => {
            let mut extra = Vec::new();
            if let Some(r) = &retry_after {
                extra.push(("Retry-After", r.clone()));
            }
            let kind = match code {
                429 => "rate_limit_error",
                401 => "authentication_error",
                404 => "not_found_error",
                408 => "timeout_error",
                _ => "api_error",
            };
            let body = serde_json::json!({"error": {"type": kind, "message": format!("mock status {code}")}}).to_string();
            write_whole(stream, code, reason(code), &extra, &body).await?;
            return Ok(true);
        }
        _ => {}
    }
    let text: &str = if fault == MockFault::Empty {
        ""
    } else {
        &call.text
    };
    let keyed = cfg
        .key_in_answer
        .zip(given_key.filter(|k| !k.is_empty()))
        .map(|(how, key)| KeyedAnswer::new(text, &key, how));
    let text = keyed.as_ref().map_or(text, KeyedAnswer::text);
    let factor = match fault {
        MockFault::Usage(f) => f,
        _ => 1.0,
    };
    let usage = answer::usage(&call, text, factor);
    if !call.stream {
        tokio::time::sleep(Duration::from_millis(cfg.stream_ms)).await;
        let body = match fault {
            MockFault::InvalidJson => "{\"choices\": [{\"message\": ".to_string(),
            MockFault::Oversized => answer::whole(&call, &"x".repeat(256 * 1024), usage),
            _ => match &keyed {
                Some(k) => k.whole(&call, usage),
                None => answer::whole(&call, text, usage),
            },
        };
        write_whole(stream, 200, "OK", &[], &body).await?;
        return Ok(true);
    }
    let (open, body, close) = match &keyed {
        Some(k) => k.events(&call, cfg.chunks, usage),
        None => answer::sse_events(&call, &answer::pieces(text, cfg.chunks), usage),
    };
    stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await?;
    for e in &open {
        write_chunk(stream, e.as_bytes()).await?;
    }
    // Pieces go out on a fixed schedule (not sleep-after-write), so a busy moment does
    // not stretch the answer past stream_ms.
    let gap = Duration::from_millis(cfg.stream_ms) / (body.len().max(1) as u32);
    let started = tokio::time::Instant::now();
    let half = body.len() / 2;
    for (i, e) in body.iter().enumerate() {
        if i == half {
            match &fault {
                MockFault::Cut => {
                    // Half a chunk, then close: the client sees a broken body.
                    stream.write_all(b"400\r\ndata: {\"cho").await?;
                    stream.flush().await?;
                    return Ok(false);
                }
                MockFault::CleanEof => {
                    write_chunk(stream, b"").await?;
                    return Ok(true);
                }
                MockFault::Stall => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    return Ok(false);
                }
                MockFault::InvalidSse => {
                    write_chunk(stream, b"HTTP/1.1 200 OK\n\n").await?;
                }
                MockFault::InvalidJson => {
                    write_chunk(
                        stream,
                        b"data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n",
                    )
                    .await?;
                }
                MockFault::ErrorEvent => {
                    write_chunk(stream, answer::stream_error(api).as_bytes()).await?;
                    write_chunk(stream, b"").await?;
                    return Ok(true);
                }
                MockFault::Oversized => {
                    let filler = "x".repeat(4096);
                    let (_, big, _) = answer::sse_events(&call, &[filler.as_str()], usage);
                    loop {
                        write_chunk(stream, big[0].as_bytes()).await?;
                    }
                }
                _ => {}
            }
        }
        if !gap.is_zero() {
            tokio::time::sleep_until(started + gap * (i as u32 + 1)).await;
        }
        write_chunk(stream, e.as_bytes()).await?;
    }
    for e in &close {
        write_chunk(stream, e.as_bytes()).await?;
    }
    write_chunk(stream, b"").await?;
    Ok(true)
}
