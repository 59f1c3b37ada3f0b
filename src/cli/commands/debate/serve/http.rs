//! hyper under `plexus serve`: one request per connection, its head due within
//! [`REQUEST_TIME`] (else `408` on the bare socket), every write within [`WRITE_TIME`]
//! (a client that stops reading is gone), answers whole or streamed from a channel,
//! and the few answers written by hand where no request was read.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

/// Time a request has to arrive whole.
pub const REQUEST_TIME: Duration = Duration::from_secs(10);
/// Time one write may wait for a client that does not read.
pub const WRITE_TIME: Duration = Duration::from_secs(30);
/// Time a refusal written by hand may take, reading what the client still sends.
const LINGER_TIME: Duration = Duration::from_secs(2);

/// An answer's body: whole, or the stream's frames as a channel delivers them.
pub enum ServeBody {
    /// A whole body (`None` once sent).
    Whole(Option<Bytes>),
    /// A stream; it ends when every sender is gone.
    Stream(mpsc::Receiver<Bytes>),
}

impl From<Bytes> for ServeBody {
    fn from(b: Bytes) -> ServeBody {
        ServeBody::Whole(Some(b).filter(|b| !b.is_empty()))
    }
}

impl Body for ServeBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ServeBody::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ServeBody::Stream(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ServeBody::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ServeBody::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            ServeBody::Stream(_) => SizeHint::default(),
        }
    }
}

/// A socket whose writes fail once one has waited [`WRITE_TIME`] for the client.
struct WriteLimit {
    inner: TcpStream,
    waiting: Option<Pin<Box<Sleep>>>,
}

impl WriteLimit {
    /// `r` of a write, or the time-out when the write has been pending too long.
    fn limit<T>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if r.is_ready() {
            self.waiting = None;
            return r;
        }
        let timer = self
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(WRITE_TIME)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for WriteLimit {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteLimit {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.limit(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.limit(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_flush(cx);
        this.limit(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.limit(cx, r)
    }
}

/// Serves one connection: one request, answered by `handle` (given the time its body
/// is due by). A request whose head does not arrive in time is answered `408` by hand;
/// when `stop` fires first the connection closes, or finishes the answer it has begun.
pub async fn serve_connection<F, Fut>(
    stream: TcpStream,
    handle: F,
    stop: impl Future<Output = ()>,
    refuse_late: impl FnOnce() -> String,
) where
    F: Fn(Request<Incoming>, Instant) -> Fut + Send + 'static,
    Fut: Future<Output = Response<ServeBody>> + Send + 'static,
{
    let due = Instant::now() + REQUEST_TIME;
    let arrived = Arc::new(AtomicBool::new(false));
    let seen = arrived.clone();
    let handle = Arc::new(handle);
    let service = service_fn(move |req| {
        seen.store(true, Ordering::Relaxed);
        let handle = handle.clone();
        async move { Ok::<_, Infallible>(handle(req, due).await) }
    });
    let io = TokioIo::new(WriteLimit {
        inner: stream,
        waiting: None,
    });
    let mut conn = http1::Builder::new()
        .keep_alive(false)
        .title_case_headers(true)
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::select! {
        _ = &mut conn => return,
        _ = tokio::time::sleep_until(due) => {}
        _ = stop => {
            if !arrived.load(Ordering::Relaxed) {
                return;
            }
        }
    }
    if arrived.load(Ordering::Relaxed) {
        let _ = conn.await;
        return;
    }
    let stream = conn.into_parts().io.into_inner().inner;
    refuse_raw(stream, 408, &[], &refuse_late()).await;
}

/// Writes a whole answer by hand on a connection no request was read from, then reads
/// what the client still sends (so closing does not reset the answer away) for a moment.
pub async fn refuse_raw(mut stream: TcpStream, status: u16, extra: &[(&str, &str)], body: &str) {
    let raw = crate::base::http_server::raw_response(status, extra, body);
    let _ = tokio::time::timeout(LINGER_TIME, async {
        stream.write_all(raw.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, io::Error>(())
    })
    .await;
}
