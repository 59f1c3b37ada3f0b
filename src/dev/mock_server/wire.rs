//! The mock server's response bodies for hyper: a whole one, or stream events paced
//! over the answer's time with a scripted end (clean, cut, stalled, endless). A body
//! holds the request's in-flight count until hyper is done with it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// One request being answered: counted until dropped.
pub struct InFlight(Arc<AtomicU64>);

impl InFlight {
    /// Counts one more request in `count`, noting the most in `max`.
    pub fn start(count: &Arc<AtomicU64>, max: &AtomicU64) -> InFlight {
        let now = count.fetch_add(1, Ordering::Relaxed) + 1;
        max.fetch_max(now, Ordering::Relaxed);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a paced stream ends after its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The body ends (the last chunk of a chunked body).
    Clean,
    /// The connection is cut: the client sees a body that breaks off.
    Cut,
    /// Nothing more for an hour, then cut (the client's idle timeout ends it first).
    Stall,
    /// This event again and again, without end (the client's size cap ends it).
    Endless(Bytes),
}

/// The events of a streamed answer and when each is due.
pub struct Paced {
    /// Each event with the time after the start it is due at.
    events: std::vec::IntoIter<(Duration, Bytes)>,
    started: Instant,
    waiting: Option<Bytes>,
    timer: Option<Pin<Box<Sleep>>>,
    end: End,
    pausing: bool,
}

impl Paced {
    /// A stream of `events` (due times after now), ending as `end` says.
    pub fn new(events: Vec<(Duration, Bytes)>, end: End) -> Paced {
        Paced {
            events: events.into_iter(),
            started: Instant::now(),
            waiting: None,
            timer: None,
            end,
            pausing: false,
        }
    }

    fn wait_until(&mut self, at: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let timer = match &mut self.timer {
            Some(t) => {
                t.as_mut().reset(at);
                t
            }
            None => self.timer.insert(Box::pin(tokio::time::sleep_until(at))),
        };
        timer.as_mut().poll(cx)
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, std::io::Error>>> {
        // A wait under way: for an event due later, or the pause before a cut.
        if self.waiting.is_some() || self.pausing {
            if let Some(t) = &mut self.timer {
                if t.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
            }
            return match self.waiting.take() {
                Some(b) => Poll::Ready(Some(Ok(b))),
                None => Poll::Ready(Some(Err(std::io::Error::other(
                    "the mock server cut the stream",
                )))),
            };
        }
        if let Some((due, b)) = self.events.next() {
            let at = self.started + due;
            if at > Instant::now() && self.wait_until(at, cx).is_pending() {
                self.waiting = Some(b);
                return Poll::Pending;
            }
            return Poll::Ready(Some(Ok(b)));
        }
        match &self.end {
            End::Clean => Poll::Ready(None),
            End::Endless(b) => Poll::Ready(Some(Ok(b.clone()))),
            End::Cut => {
                // Pending once first, so hyper sends what it holds before the cut.
                self.pausing = true;
                self.timer = None;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            End::Stall => {
                self.pausing = true;
                let at = Instant::now() + Duration::from_secs(3600);
                match self.wait_until(at, cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => self.poll_next(cx),
                }
            }
        }
    }
}

/// A response body of the mock server.
pub struct MockBody {
    kind: Kind,
    _in_flight: Option<InFlight>,
}

enum Kind {
    Whole(Option<Bytes>),
    Paced(Box<Paced>),
}

impl MockBody {
    /// A paced stream.
    pub fn paced(p: Paced) -> MockBody {
        MockBody {
            kind: Kind::Paced(Box::new(p)),
            _in_flight: None,
        }
    }

    /// The same body, holding `guard` until it is dropped.
    pub fn counted(mut self, guard: InFlight) -> MockBody {
        self._in_flight = Some(guard);
        self
    }
}

impl From<Bytes> for MockBody {
    fn from(b: Bytes) -> MockBody {
        MockBody {
            kind: Kind::Whole(Some(b).filter(|b| !b.is_empty())),
            _in_flight: None,
        }
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match &mut self.get_mut().kind {
            Kind::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Paced(p) => p.poll_next(cx).map(|o| o.map(|r| r.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.kind, Kind::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Paced(_) => SizeHint::default(),
        }
    }
}
