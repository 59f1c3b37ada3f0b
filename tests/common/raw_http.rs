//! A chat-completions server written in the tests, not by plexus: it reads each HTTP
//! request by hand (headers, body) and answers what the test's `answer` says, as an
//! OpenAI-style whole answer with usage 100 + 50 tokens, or an error body.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;

/// A request as the server read it: its headers (names in lower case) and JSON body.
pub struct Request {
    /// Headers by lower-case name.
    pub headers: HashMap<String, String>,
    /// The body, as JSON (`null` when it is not).
    pub body: serde_json::Value,
}

/// Starts the server on 127.0.0.1; `answer` gives (HTTP status, the message's content)
/// for each request. Returns its base URL.
pub fn serve(answer: impl Fn(&Request) -> (u16, String) + Send + Sync + 'static) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let answer = answer.clone();
            std::thread::spawn(move || loop {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let mut headers = HashMap::new();
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let l = line.trim_end();
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
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let req = Request {
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
                };
                let (status, content) = answer(&req);
                let payload = if status == 200 {
                    serde_json::json!({
                        "choices": [{"finish_reason": "stop", "message": {"content": content, "role": "assistant"}, "index": 0}],
                        "model": "m", "object": "chat.completion", "id": "x",
                        "usage": {"completion_tokens": 50, "prompt_tokens": 100, "total_tokens": 150}
                    })
                    .to_string()
                } else {
                    r#"{"error": {"message": "down", "type": "server_error"}}"#.to_string()
                };
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{payload}",
                    payload.len()
                );
                if stream.write_all(reply.as_bytes()).is_err() {
                    return;
                }
            });
        }
    });
    url
}

/// Requests seen per plexus task (`x-plexus-task`), shared with a [`counting`] server.
pub type Counts = Arc<std::sync::Mutex<HashMap<String, u32>>>;

/// [`serve`] answering every request with `answer(task)` after `delay`, counting the
/// requests per plexus task (the `x-plexus-task` header). Returns its URL and the counts.
pub fn counting(
    delay: std::time::Duration,
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (String, Counts) {
    let counts: Counts = Arc::default();
    let c = counts.clone();
    let url = serve(move |req| {
        let task = req
            .headers
            .get("x-plexus-task")
            .cloned()
            .unwrap_or_default();
        if let Ok(mut c) = c.lock() {
            *c.entry(task.clone()).or_default() += 1;
        }
        std::thread::sleep(delay);
        (200, answer(&task))
    });
    (url, counts)
}
