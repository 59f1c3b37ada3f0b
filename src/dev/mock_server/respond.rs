//! How the mock server answers one request: the route, the key check, embeddings, the
//! scripted fault of the task's call, and the answer whole or as paced stream events.

use std::time::Duration;

use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::Response;

use super::answer::{self, Api};
use super::key_echo::KeyedAnswer;
use super::script::Turn;
use super::wire::{End, MockBody, Paced};
use super::{embeddings, MockFault, Shared};
use crate::base::http_server::{header, whole};

/// A request read whole.
pub struct Request {
    /// Path (and query).
    pub path: String,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Vec<u8>,
}

/// The connection is to be closed without an answer.
#[derive(Debug)]
pub struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the mock server dropped the connection")
    }
}

impl std::error::Error for Dropped {}

type Answer = Response<MockBody>;

fn json(status: u16, body: impl Into<Bytes>) -> Answer {
    whole(status, &[], body)
}

/// The answer to `req`, or [`Dropped`].
pub async fn respond(req: &Request, shared: &Shared) -> Result<Answer, Dropped> {
    let embeddings = req.path.ends_with("/embeddings");
    let moderations = req.path.ends_with("/moderations");
    let Some(api) = api_of(&req.path) else {
        let body = r#"{"error":{"type":"not_found_error","message":"no such route"}}"#;
        return Ok(json(404, body));
    };
    let cfg = &shared.config;
    let given_key = given_key(&req.headers);
    if let Some(want) = &cfg.require_key {
        if given_key.as_deref() != Some(want.as_str()) {
            return Ok(unauthorized(cfg.echo_key, given_key));
        }
    }
    if embeddings {
        let (status, body) = embeddings::answer(&req.body);
        return Ok(json(status, body));
    }
    if moderations {
        let (status, body) = super::moderations::answer(&req.body);
        return Ok(json(status, body));
    }
    let task = header(&req.headers, "x-plexus-task").unwrap_or("");
    if let Some(script) = &cfg.model_script {
        if let Some(answer) = from_script(api, req, shared, script, task).await {
            return Ok(answer);
        }
    }
    let invocation =
        header(&req.headers, "x-plexus-invocation").unwrap_or("INV_00000000_000000_MOCK_001");
    let fault = shared.next_fault(task);
    let call = answer::call(api, &req.body, task, invocation, &shared.sim);
    match fault {
        MockFault::Drop => return Err(Dropped),
        MockFault::Quota => {
            let body = r#"{"error":{"message":"You exceeded your current quota (mock)","type":"insufficient_quota","code":"insufficient_quota"}}"#;
            return Ok(json(429, body));
        }
        MockFault::Status { code, retry_after } => return Ok(status(code, retry_after)),
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
        let body = whole_body(&call, &fault, keyed.as_ref(), text, usage);
        return Ok(json(200, body));
    }
    let events = match &keyed {
        Some(k) => k.events(&call, cfg.chunks, usage),
        None => answer::sse_events(&call, &answer::pieces(text, cfg.chunks), usage),
    };
    Ok(event_stream(paced(
        api,
        &call,
        events,
        &fault,
        cfg.stream_ms,
        usage,
    )))
}

/// A whole answer's body, or the fault that stands for it.
fn whole_body(
    call: &answer::Call,
    fault: &MockFault,
    keyed: Option<&KeyedAnswer>,
    text: &str,
    usage: (u64, u64),
) -> String {
    match fault {
        MockFault::InvalidJson => "{\"choices\": [{\"message\": ".to_string(),
        MockFault::Oversized => answer::whole(call, &"x".repeat(256 * 1024), usage),
        _ => match keyed {
            Some(k) => k.whole(call, usage),
            None => answer::whole(call, text, usage),
        },
    }
}

/// The API a path is on (embeddings and moderations are OpenAI's); `None` for no route.
fn api_of(path: &str) -> Option<Api> {
    if path.ends_with("/chat/completions")
        || path.ends_with("/embeddings")
        || path.ends_with("/moderations")
    {
        Some(Api::Openai)
    } else if path.ends_with("/messages") {
        Some(Api::Anthropic)
    } else {
        None
    }
}

/// The key a request gives: `x-api-key`, else the `Authorization` bearer token.
fn given_key(headers: &HeaderMap) -> Option<String> {
    header(headers, "x-api-key")
        .map(str::to_string)
        .or_else(|| {
            header(headers, "authorization").map(|v| v.trim_start_matches("Bearer ").to_string())
        })
}

/// The script's answer to the request: its next turn, or a 500 when it has none left and
/// the rest is not left to the simulated model (`None`: the simulated model answers).
async fn from_script(
    api: Api,
    req: &Request,
    shared: &Shared,
    script: &super::script::Script,
    task: &str,
) -> Option<Answer> {
    let agent = header(&req.headers, "x-plexus-agent").unwrap_or("");
    let asked = super::script::Asked {
        task,
        agent,
        body: std::str::from_utf8(&req.body).unwrap_or_default(),
    };
    match shared.next_turn(script, asked) {
        Some(n) => Some(scripted(api, req, shared, &script.turns[n], n).await),
        None if script.rest == super::script::Rest::Simulated => None,
        None => {
            let body = serde_json::json!({"error": {"type": "api_error", "message": format!(
                "the mock server's script has no turn left for this request (task `{task}`, agent `{agent}`)")}});
            Some(json(500, body.to_string()))
        }
    }
}

/// A 200 streaming `paced` as server-sent events.
fn event_stream(paced: Paced) -> Answer {
    let mut r = Response::new(MockBody::paced(paced));
    let h = r.headers_mut();
    h.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}

/// 401, with the key given echoed when the server is told to (padded past a preview's
/// cut, as some servers pad their messages).
fn unauthorized(echo_key: bool, given_key: Option<String>) -> Answer {
    let (shown, pad) = if echo_key {
        (given_key.unwrap_or_default(), "x".repeat(260))
    } else {
        ("****".to_string(), String::new())
    };
    let body = serde_json::json!({"error": {"type": "authentication_error",
        "message": format!("{pad}Incorrect API key provided: {shown}")}})
    .to_string();
    json(401, body)
}

/// A scripted HTTP error.
fn status(code: u16, retry_after: Option<String>) -> Answer {
    let kind = match code {
        429 => "rate_limit_error",
        401 => "authentication_error",
        404 => "not_found_error",
        408 => "timeout_error",
        _ => "api_error",
    };
    let body =
        serde_json::json!({"error": {"type": kind, "message": format!("mock status {code}")}})
            .to_string();
    let mut extra = Vec::new();
    if let Some(v) = retry_after.and_then(|r| HeaderValue::from_str(&r).ok()) {
        extra.push(("retry-after", v));
    }
    whole(code, &extra, body)
}

/// The stream's events on a fixed schedule (not sleep-after-write, so a busy moment does
/// not stretch the answer past `stream_ms`), with the fault at half of the text events.
fn paced(
    api: Api,
    call: &answer::Call,
    (open, body, close): (Vec<String>, Vec<String>, Vec<String>),
    fault: &MockFault,
    stream_ms: u64,
    usage: (u64, u64),
) -> Paced {
    let gap = Duration::from_millis(stream_ms) / (body.len().max(1) as u32);
    let mut events: Vec<(Duration, Bytes)> = open
        .into_iter()
        .map(|e| (Duration::ZERO, e.into()))
        .collect();
    let half = body.len() / 2;
    let mut end = End::Clean;
    for (i, e) in body.into_iter().enumerate() {
        let due = gap * (i as u32 + 1);
        if i == half {
            let now = gap * i as u32;
            match fault {
                MockFault::Cut => return Paced::new(events, End::Cut),
                MockFault::CleanEof => return Paced::new(events, End::Clean),
                MockFault::Stall => return Paced::new(events, End::Stall),
                MockFault::InvalidSse => events.push((now, "HTTP/1.1 200 OK\n\n".into())),
                MockFault::InvalidJson => events.push((
                    now,
                    "data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n".into(),
                )),
                MockFault::ErrorEvent => {
                    events.push((now, answer::stream_error(api).into()));
                    return Paced::new(events, End::Clean);
                }
                MockFault::Oversized => {
                    // Text that does not repeat itself within a window (a runaway is
                    // another fault): numbered words, 4 KiB a piece.
                    let mut filler = String::with_capacity(4200);
                    let mut i = 0u32;
                    while filler.len() < 4096 {
                        filler.push_str(&format!("w{} ", i.wrapping_mul(2_654_435_761)));
                        i += 1;
                    }
                    let (_, big, _) = answer::sse_events(call, &[filler.as_str()], usage);
                    let big = big.into_iter().next().unwrap_or_default();
                    end = End::Endless(big.into());
                    break;
                }
                _ => {}
            }
        }
        events.push((due, e.into()));
    }
    if end == End::Clean {
        let last = events.last().map_or(Duration::ZERO, |(d, _)| *d);
        events.extend(close.into_iter().map(|e| (last, e.into())));
    }
    Paced::new(events, end)
}

/// The answer of the script's turn `turn` (number `n`) to this request.
async fn scripted(api: Api, req: &Request, shared: &Shared, turn: &Turn, n: usize) -> Answer {
    if turn.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(turn.delay_ms)).await;
    }
    if let Some(code) = turn.status {
        return status(code, turn.retry_after.clone());
    }
    let v: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let call = answer::Call {
        api,
        model: v["model"].as_str().unwrap_or("mock").to_string(),
        stream: v["stream"].as_bool().unwrap_or(false),
        prompt: v["messages"].to_string(),
        text: turn.text.clone(),
        tool_calls: turn.calls(n),
        fragments: turn.fragments.unwrap_or(2),
        answer_tool: answer::forces_answer_tool(&v),
    };
    let usage = answer::usage(&call, &turn.text, 1.0);
    if !call.stream {
        return json(200, answer::whole(&call, &turn.text, usage));
    }
    let pieces = if turn.text.is_empty() {
        Vec::new()
    } else {
        answer::pieces(&turn.text, shared.config.chunks)
    };
    let (open, body, close) = answer::sse_events(&call, &pieces, usage);
    let mut events: Vec<String> = open.into_iter().chain(body).chain(close).collect();
    let end = if turn.cut {
        // Half of the events, then the connection closes.
        events.truncate(events.len() / 2);
        End::Cut
    } else {
        End::Clean
    };
    let gap = Duration::from_millis(shared.config.stream_ms) / (events.len().max(1) as u32);
    let events = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| (gap * i as u32, e.into()))
        .collect();
    let mut r = Response::new(MockBody::paced(Paced::new(events, end)));
    let h = r.headers_mut();
    h.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}
