//! One request to `plexus serve`: who may ask ([`super::access`]), the path and method,
//! the body within its limits, the start request; then a session started and its
//! stream answered, or the status that says why not.

use std::sync::Arc;

use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response};
use serde_json::json;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::access::{Headers, Verdict};
use super::http::ServeBody;
use super::server::{Server, CHAT_PATH, MAX_BODY, MAX_SESSIONS};
use super::sessions::{session_document, SESSIONS_PATH};
use super::stream;
use crate::base::http_server::{read_body, whole, BodyError};
use crate::base::protocol::debate::MultiAgentStartRequest;
use crate::base::protocol::debate_spec::DebateSpec;
use crate::cli::commands::debate::options::spec_of;
use crate::cli::launch::debate::{comparer_for, moderator_for, now_data, start_debate};
use crate::cli::launch::Started;

type Answer = Response<ServeBody>;

/// A JSON error body, naming the field at fault when there is one.
pub fn error_body(message: &str, field: Option<&str>) -> String {
    match field {
        Some(f) => json!({ "error": message, "field": f }),
        None => json!({ "error": message }),
    }
    .to_string()
}

/// An answer of `status` with `headers` (the access rules' first) and a JSON body.
fn answer(
    status: u16,
    headers: &Headers,
    extra: &[(&'static str, &'static str)],
    body: String,
) -> Answer {
    let mut all = headers.clone();
    all.extend(extra.iter().map(|(n, v)| (*n, HeaderValue::from_static(v))));
    whole(status, &all, body)
}

/// Answers one request; the time its body is due by is `due`.
pub async fn handle(req: Request<Incoming>, server: Arc<Server>, due: Instant) -> Answer {
    match respond(req, &server, due).await {
        Ok(a) | Err(a) => a,
    }
}

/// The answer to one request: a preflight, a session's document, a session's stream
/// (`Ok`), or the refusal that says why not (`Err`).
async fn respond(
    req: Request<Incoming>,
    server: &Arc<Server>,
    due: Instant,
) -> Result<Answer, Answer> {
    let cors = match server.access.check(req.method(), req.headers()) {
        Ok(Verdict::Preflight(h)) => return Ok(whole(204, &h, Bytes::new())),
        Ok(Verdict::Serve(h)) => h,
        Err(r) => return Err(whole(r.status, &r.headers, r.body)),
    };
    if let Some(id) = req.uri().path().strip_prefix(SESSIONS_PATH) {
        return session(req.method(), server, &cors, id).await;
    }
    if req.uri().path() != CHAT_PATH {
        let message = format!(
            "no such path {:?}; sessions start at POST {CHAT_PATH} and are read at GET {SESSIONS_PATH}ID",
            req.uri().path()
        );
        return Err(refuse(&cors, 404, &[], &message, None));
    }
    const ALLOW: (&str, &str) = ("allow", "POST, OPTIONS");
    match *req.method() {
        Method::POST => {}
        Method::OPTIONS => return Ok(answer(204, &cors, &[ALLOW], String::new())),
        ref m => {
            let message = format!("{m} is not allowed here; use POST");
            return Err(refuse(&cors, 405, &[ALLOW], &message, None));
        }
    }
    let headers = req.headers();
    if !headers.contains_key("content-length") && !headers.contains_key("transfer-encoding") {
        let message = "a POST needs a body with a Content-Length (or sent chunked)";
        return Err(refuse(&cors, 411, &[], message, None));
    }
    let body = request_body(req, due, &cors).await?;
    let spec = spec_of_request(server, &body).map_err(|(m, f)| refuse(&cors, 400, &[], &m, f))?;
    if server.stop.borrow().is_some() {
        return Err(refuse(&cors, 503, &[], "the server is stopping", None));
    }
    let Ok(slot) = server.sessions.clone().try_acquire_owned() else {
        let message = format!("{MAX_SESSIONS} sessions are running; try again when one ends");
        return Err(refuse(&cors, 503, &[("retry-after", "10")], &message, None));
    };
    let started = match start_session(server, spec).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("a session could not start: {e}");
            let message = format!("the session could not start: {e}");
            return Err(refuse(&cors, 500, &[], &message, None));
        }
    };
    Ok(stream_answer(started, slot, server, cors))
}

/// A refusal of `status` with `headers` and `extra`: a JSON error body naming `field`.
fn refuse(
    headers: &Headers,
    status: u16,
    extra: &[(&'static str, &'static str)],
    message: &str,
    field: Option<&str>,
) -> Answer {
    answer(status, headers, extra, error_body(message, field))
}

/// The answer to a request for session `id`'s document (a GET; OPTIONS answered with
/// what is allowed).
async fn session(
    method: &Method,
    server: &Server,
    cors: &Headers,
    id: &str,
) -> Result<Answer, Answer> {
    const ALLOW_GET: (&str, &str) = ("allow", "GET, OPTIONS");
    match *method {
        Method::GET => {}
        Method::OPTIONS => return Ok(answer(204, cors, &[ALLOW_GET], String::new())),
        ref m => {
            let message = format!("{m} is not allowed here; use GET");
            return Err(refuse(cors, 405, &[ALLOW_GET], &message, None));
        }
    }
    let (db, id) = (server.db.clone(), id.to_string());
    let read = tokio::task::spawn_blocking(move || session_document(&db, &id)).await;
    match read {
        Ok(Ok(doc)) => Ok(answer(200, cors, &[], doc.to_string())),
        Ok(Err((status, message))) => Err(refuse(cors, status, &[], &message, None)),
        Err(e) => Err(refuse(
            cors,
            500,
            &[],
            &format!("the read failed: {e}"),
            None,
        )),
    }
}

/// The request's body, read within its limit by `due`; the refusal that says why not.
async fn request_body(
    req: Request<Incoming>,
    due: Instant,
    cors: &Headers,
) -> Result<Vec<u8>, Answer> {
    match tokio::time::timeout_at(due, read_body(req.into_body(), MAX_BODY)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(BodyError::TooLarge(n))) => {
            let message =
                format!("the body has {n} bytes or more; at most {MAX_BODY} are accepted");
            Err(refuse(cors, 413, &[], &message, None))
        }
        Ok(Err(BodyError::Broken(e))) => Err(refuse(
            cors,
            400,
            &[],
            &format!("cannot read the body: {e}"),
            None,
        )),
        Err(_) => {
            let message = "the request did not arrive within 10 s";
            Err(refuse(cors, 408, &[], message, None))
        }
    }
}

/// A debate session of `spec` started on the server's provider.
async fn start_session(server: &Server, spec: DebateSpec) -> color_eyre::Result<Started> {
    let now = now_data(&spec.timezone).await?;
    // Each session its own cache of embeddings: a long-running server does not grow.
    let (comparer, _) = comparer_for(&server.profile)?;
    let moderator = moderator_for(&server.profile)?;
    start_debate(
        &server.db,
        spec,
        server.provider.clone(),
        comparer,
        moderator,
        now,
    )
}

/// The answer that streams session `started` (holding its `slot` until it ends), with
/// the access rules' headers and the session's id.
fn stream_answer(
    started: Started,
    slot: OwnedSemaphorePermit,
    server: &Arc<Server>,
    cors: Headers,
) -> Answer {
    let run_id = started.run_id.clone();
    let body = stream::spawn(started, slot, server.clone());
    let mut r = Response::new(body);
    let h = r.headers_mut();
    for (name, value) in cors {
        h.append(name, value);
    }
    h.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    if let Ok(v) = HeaderValue::from_str(&run_id) {
        h.insert("x-plexus-session", v);
    }
    crate::base::http_status::with_reason(r)
}

/// The session settings of a request body, or the message and field of the 400.
fn spec_of_request(
    server: &Server,
    body: &[u8],
) -> Result<DebateSpec, (String, Option<&'static str>)> {
    let start: MultiAgentStartRequest = serde_json::from_slice(body).map_err(|e| {
        let text = e.to_string();
        let field = if text.contains("`message`") {
            Some("message")
        } else if text.contains("`mode`") {
            Some("mode")
        } else {
            None
        };
        (format!("the body is not a start request: {e}"), field)
    })?;
    if start.mode != "multi_agent" {
        return Err((
            format!("mode must be \"multi_agent\" (got {:?})", start.mode),
            Some("mode"),
        ));
    }
    if start.message.trim().is_empty() {
        return Err(("message is empty".into(), Some("message")));
    }
    let mut spec = spec_of(&start.message, &server.options, Some(&server.profile))
        .map_err(|e| (e.to_string(), Some("message")))?;
    spec.embedding = server.embedding.clone();
    if server.profile.moderation_model.is_some() {
        spec.moderation = Some(server.profile.name.clone());
    }
    spec.user_id = start.user_id;
    spec.conversation_id = start.conversation_id;
    Ok(spec)
}
