//! A served session's stream: its events as `data:` lines while the client listens;
//! a client that goes away, or the server stopping, cancels the session; a session that
//! ends without its report says so in an `error` event; `data: [DONE]` ends every
//! stream whose client is still there.

use std::sync::Arc;

use hyper::body::Bytes;
use tokio::sync::{mpsc, OwnedSemaphorePermit};

use super::http::ServeBody;
use super::server::Server;
use crate::base::protocol::debate::{SseData, StreamErrorEvent, StreamEvent};
use crate::cli::launch::Started;
use crate::features::debate::sse;
use crate::model::event::{EngineEvent, Envelope, RunStatus};
use crate::run::engine::Control;

/// Frames waiting for the connection; past them the session waits for the client.
const BUFFERED: usize = 8;

/// Why a served session was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// The client closed its connection or stopped reading.
    ClientGone,
    /// The server is stopping on this signal.
    ServerStopping(&'static str),
}

impl Cancelled {
    /// The reason recorded with the session.
    fn why(self) -> String {
        match self {
            Cancelled::ClientGone => "client disconnected".into(),
            Cancelled::ServerStopping(signal) => format!("the server is stopping ({signal})"),
        }
    }
}

/// The `error` event of a session that ended `status` without its report (`None` for
/// one that succeeded).
pub fn ending(
    status: Result<RunStatus, String>,
    cancelled: Option<Cancelled>,
    reason: Option<&str>,
) -> Option<StreamErrorEvent> {
    let event = |error: &str, reason: &str, message: String| StreamErrorEvent {
        error: error.into(),
        reason: reason.into(),
        message,
        extra: Default::default(),
    };
    match (status, cancelled) {
        (Ok(RunStatus::Succeeded), _) => None,
        (Ok(RunStatus::Cancelled), Some(c)) => Some(event(
            "cancelled",
            match c {
                Cancelled::ClientGone => "client_disconnected",
                Cancelled::ServerStopping(_) => "server_stopping",
            },
            format!("the session was cancelled: {}", c.why()),
        )),
        (Ok(s), _) => Some(event(
            if s == RunStatus::Cancelled {
                "cancelled"
            } else {
                "failed"
            },
            "session_failed",
            match reason {
                Some(why) => format!("the session ended {} without a report: {why}", s.as_str()),
                None => format!("the session ended {} without a report", s.as_str()),
            },
        )),
        (Err(e), _) => Some(event(
            "failed",
            "session_failed",
            format!("the session stopped before its end: {e}"),
        )),
    }
}

/// Starts streaming `started` to the answer's body; the session holds `slot` until it
/// has ended.
pub fn spawn(started: Started, slot: OwnedSemaphorePermit, server: Arc<Server>) -> ServeBody {
    let (tx, rx) = mpsc::channel(BUFFERED);
    tokio::spawn(async move {
        run(started, tx, &server).await;
        drop(slot);
    });
    ServeBody::Stream(rx)
}

async fn run(mut started: Started, tx: mpsc::Sender<Bytes>, server: &Server) {
    let run_id = started.run_id.clone();
    crate::errln!("session {run_id} started");
    let mut events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let control = started.handle.control.clone();
    let finishing = tokio::spawn(started.finish());
    let mut cancelled: Option<Cancelled> = None;
    let mut cancel = |why: Cancelled| {
        if cancelled.is_none() {
            cancelled = Some(why);
            let _ = control.send(Control::Cancel(why.why()));
        }
    };
    let mut connected = true;
    // Why the session ended, as its `debate_finished` says.
    let mut finished_why: Option<String> = None;
    // The session's own `session_failed` event, once streamed, is not sent twice.
    let mut failure_streamed = false;
    let mut stop = server.stop.clone();
    let mut stopping = false;
    loop {
        tokio::select! {
            batch = events.recv() => {
                let Some(batch) = batch else { break };
                if !connected {
                    continue;
                }
                let out = frames(&batch, &mut finished_why, &mut failure_streamed);
                // A client that stops reading fails the connection's write (after
                // the write limit), which drops the body: the send fails.
                if !out.is_empty() && tx.send(Bytes::from(out)).await.is_err() {
                    connected = false;
                    cancel(Cancelled::ClientGone);
                }
            }
            // The connection ended (the client closed it, or stopped reading).
            _ = tx.closed(), if connected => {
                connected = false;
                cancel(Cancelled::ClientGone);
            }
            r = stop.changed(), if !stopping => {
                let signal = *stop.borrow();
                if r.is_err() || signal.is_some() {
                    stopping = true;
                }
                if let Some(signal) = signal {
                    cancel(Cancelled::ServerStopping(signal));
                }
            }
        }
    }
    let status = match finishing.await {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if connected {
        let mut out = String::new();
        let ended = ending(status.clone(), cancelled, finished_why.as_deref())
            .filter(|e| !(failure_streamed && e.reason == "session_failed"));
        if let Some(e) = ended {
            out.push_str(&sse::frame(&SseData::Event(Box::new(StreamEvent::Error(
                e,
            )))));
        }
        out.push_str(&sse::done());
        let _ = tx.send(Bytes::from(out)).await;
    }
    match status {
        Ok(s) => crate::errln!("session {run_id} ended {}", s.as_str()),
        Err(e) => crate::errln!("session {run_id} stopped before its end: {e}"),
    }
}

/// The stream frames of a batch of events; the reason of a `debate_finished` among them
/// noted in `finished_why`, and whether the session's own `session_failed` was streamed
/// in `failure_streamed`.
fn frames(
    batch: &[Arc<Envelope>],
    finished_why: &mut Option<String>,
    failure_streamed: &mut bool,
) -> String {
    let mut out = String::new();
    for env in batch {
        if let EngineEvent::DebateFinished(f) = &env.event {
            *finished_why = Some(f.reason.clone());
        }
        for item in sse::items(env) {
            if let SseData::Event(e) = &item {
                if let StreamEvent::Error(e) = e.as_ref() {
                    *failure_streamed |= e.reason == "session_failed";
                }
            }
            out.push_str(&sse::frame(&item));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_without_its_report_says_why() {
        assert_eq!(ending(Ok(RunStatus::Succeeded), None, None), None);
        let e = ending(
            Ok(RunStatus::Cancelled),
            Some(Cancelled::ServerStopping("SIGINT")),
            None,
        )
        .expect("an event");
        assert_eq!(
            (e.error.as_str(), e.reason.as_str()),
            ("cancelled", "server_stopping")
        );
        assert!(e.message.contains("SIGINT"), "{}", e.message);
        let e =
            ending(Ok(RunStatus::Cancelled), Some(Cancelled::ClientGone), None).expect("an event");
        assert_eq!(e.reason, "client_disconnected");
        let e = ending(
            Ok(RunStatus::Failed),
            None,
            Some("no valid position after round 1"),
        )
        .expect("an event");
        assert_eq!(
            (e.error.as_str(), e.reason.as_str()),
            ("failed", "session_failed")
        );
        assert!(
            e.message.contains("no valid position after round 1"),
            "{}",
            e.message
        );
        let e = ending(Err("the engine crashed".into()), None, None).expect("an event");
        assert!(e.message.contains("the engine crashed"));
    }
}
