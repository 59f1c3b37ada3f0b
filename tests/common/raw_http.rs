//! A chat-completions server written in the tests, not by plexus: it reads each HTTP
//! request by hand (headers, body) and answers what the test's `answer` says, as an
//! OpenAI-style whole answer with usage 100 + 50 tokens, or an error body.

use std::collections::HashMap;
use std::sync::Arc;

use super::wire::Reply;
pub use super::wire::Request;

/// Starts the server on 127.0.0.1; `answer` gives (HTTP status, the message's content)
/// for each request. Returns its base URL.
pub fn serve(answer: impl Fn(&Request) -> (u16, String) + Send + Sync + 'static) -> String {
    let (url, _) = super::wire::serve(move |req, _| {
        let (status, content) = answer(req);
        if status == 200 {
            Reply::json(
                200,
                serde_json::json!({
                    "choices": [{"finish_reason": "stop", "message": {"content": content, "role": "assistant"}, "index": 0}],
                    "model": "m", "object": "chat.completion", "id": "x",
                    "usage": {"completion_tokens": 50, "prompt_tokens": 100, "total_tokens": 150}
                }),
            )
        } else {
            Reply::json(
                status,
                serde_json::json!({"error": {"message": "down", "type": "server_error"}}),
            )
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
