//! A model server written in the tests, not by plexus, that answers each request with
//! exactly the bytes a test gives — any status, headers, a whole body or a stream sent in
//! parts with pauses between them — the way real servers answer, including what
//! plexus's own mock never does. Each connection carries one request and is closed after
//! its answer.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method and path (`POST /v1/chat/completions`).
    pub line: String,
    /// Headers by lower-case name.
    pub headers: HashMap<String, String>,
    /// The body, as JSON (`null` when it is not).
    pub body: Value,
    /// When it arrived.
    pub at: std::time::Instant,
}

/// One piece of an answer.
#[derive(Debug, Clone)]
pub enum Part {
    /// Bytes sent as they are.
    Bytes(Vec<u8>),
    /// A pause.
    Wait(Duration),
}

/// An answer: its status, headers and body in parts.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Headers besides `connection: close`.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub parts: Vec<Part>,
    /// A pause before the head: the server thinks before it says anything.
    pub head_after: Duration,
}

impl Reply {
    /// A JSON body of `status`.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            parts: vec![Part::Bytes(body.to_string().into_bytes())],
            head_after: Duration::ZERO,
        }
    }

    /// An error body `{"error": {"message": …}}` of `status`.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": "invalid_request_error"}}),
        )
    }

    /// A whole OpenAI chat completion whose message is `message` (no `usage`: many
    /// servers send none).
    pub fn openai_message(message: Value, finish: &str) -> Reply {
        Reply::json(
            200,
            json!({"id": "c1", "object": "chat.completion", "model": "m",
                   "choices": [{"index": 0, "message": message, "finish_reason": finish}]}),
        )
    }

    /// A whole OpenAI chat completion answering `text`.
    pub fn openai_text(text: &str) -> Reply {
        Reply::openai_message(json!({"role": "assistant", "content": text}), "stop")
    }

    /// An OpenAI stream of `deltas` (each a `choices[0].delta`), then `finish`, then
    /// `[DONE]`, with `gap` between events.
    pub fn openai_stream(deltas: &[Value], finish: &str, gap: Duration) -> Reply {
        let mut events: Vec<Value> = deltas
            .iter()
            .map(|d| {
                json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                             "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
            })
            .collect();
        events.push(
            json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                           "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        );
        Reply::sse(&events, true, gap)
    }

    /// Server-sent events: `data: EVENT` each, `data: [DONE]` at the end when `done`.
    pub fn sse(events: &[Value], done: bool, gap: Duration) -> Reply {
        let mut parts = Vec::new();
        for e in events {
            parts.push(Part::Bytes(format!("data: {e}\n\n").into_bytes()));
            if !gap.is_zero() {
                parts.push(Part::Wait(gap));
            }
        }
        if done {
            parts.push(Part::Bytes(b"data: [DONE]\n\n".to_vec()));
        }
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            parts,
            head_after: Duration::ZERO,
        }
    }

    /// Anthropic server-sent events (`event: TYPE` + `data: EVENT`), with `gap` between.
    pub fn anthropic_sse(events: &[Value], gap: Duration) -> Reply {
        let mut parts = Vec::new();
        for e in events {
            let kind = e["type"].as_str().unwrap_or("message");
            parts.push(Part::Bytes(
                format!("event: {kind}\ndata: {e}\n\n").into_bytes(),
            ));
            if !gap.is_zero() {
                parts.push(Part::Wait(gap));
            }
        }
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            parts,
            head_after: Duration::ZERO,
        }
    }

    /// The same answer after a pause before its first byte.
    pub fn after(mut self, wait: Duration) -> Reply {
        self.head_after = wait;
        self
    }

    /// The same answer with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// The requests a server has read, in order.
pub type Seen = Arc<Mutex<Vec<Request>>>;

/// Starts the server on 127.0.0.1; `answer` gives the reply to each request, with the
/// number of requests before it. Returns its base URL and what it saw.
pub fn serve(answer: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let answer = Arc::new(answer);
    let seen: Seen = Arc::default();
    let s = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let (answer, seen) = (answer.clone(), s.clone());
            std::thread::spawn(move || answer_one(stream, &*answer, &seen));
        }
    });
    (url, seen)
}

fn answer_one(
    mut stream: std::net::TcpStream,
    answer: &(dyn Fn(&Request, usize) -> Reply + Send + Sync),
    seen: &Seen,
) {
    let Some(req) = read_request(&stream) else {
        return;
    };
    let n = {
        let mut s = seen.lock().expect("seen");
        s.push(req.clone());
        s.len() - 1
    };
    let reply = answer(&req, n);
    std::thread::sleep(reply.head_after);
    let mut head = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", reply.status);
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    for p in reply.parts {
        match p {
            Part::Bytes(b) => {
                if stream.write_all(&b).and_then(|()| stream.flush()).is_err() {
                    return;
                }
            }
            Part::Wait(d) => std::thread::sleep(d),
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn read_request(stream: &std::net::TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let first = line.trim_end().to_string();
    let mut headers = HashMap::new();
    loop {
        let mut l = String::new();
        if reader.read_line(&mut l).ok()? == 0 {
            return None;
        }
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        line: first,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at: std::time::Instant::now(),
    })
}

/// The structured-output form a request asked in: `json_schema`, `json_object`,
/// `guided_json`, `ollama_format`, `tool` (a forced `answer` tool), or `none`.
pub fn form_of(body: &Value) -> &'static str {
    match body["response_format"]["type"].as_str() {
        Some("json_schema") => return "json_schema",
        Some("json_object") => return "json_object",
        _ => {}
    }
    if body.get("guided_json").is_some() {
        "guided_json"
    } else if body.get("format").is_some_and(Value::is_object) {
        "ollama_format"
    } else if tool_forced(body) {
        "tool"
    } else {
        "none"
    }
}

fn tool_forced(body: &Value) -> bool {
    let c = &body["tool_choice"];
    c["name"] == "answer" || c["function"]["name"] == "answer"
}

/// The schema a request sent, in whichever form it used.
pub fn schema_of(body: &Value) -> Option<&Value> {
    let tool_schema = || {
        body["tools"].as_array()?.iter().find_map(|t| {
            let t = if t["function"].is_object() {
                &t["function"]
            } else {
                t
            };
            (t["name"] == "answer").then(|| {
                t.get("parameters")
                    .or_else(|| t.get("input_schema"))
                    .unwrap_or(&Value::Null)
            })
        })
    };
    body["response_format"]["json_schema"]["schema"]
        .as_object()
        .map(|_| &body["response_format"]["json_schema"]["schema"])
        .or_else(|| body["response_format"].get("schema"))
        .or_else(|| body.get("guided_json"))
        .or_else(|| body.get("format").filter(|f| f.is_object()))
        .or_else(tool_schema)
}

/// The text of the last user message of an OpenAI or Anthropic request.
pub fn last_user_text(body: &Value) -> String {
    let Some(messages) = body["messages"].as_array() else {
        return String::new();
    };
    let Some(m) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
