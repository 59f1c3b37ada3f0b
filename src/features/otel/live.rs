//! The live sender of a run: a thread of its own takes the run's committed events
//! (after the snapshot keeper, before the screen or the progress printer), passes them
//! on first, then folds them into spans; a second thread sends the spans in batches.
//!
//! Between the two sits a queue of [`QUEUE`] spans. Putting a span in never waits:
//! when the collector is slow or down and the queue is full, the span is dropped and
//! counted. When the run ends, what is queued is sent within [`FLUSH_WAIT`]; whatever
//! is not sent by then is dropped and counted too. The run itself never waits for the
//! collector.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::Span;
use tokio::sync::mpsc::{error::TrySendError, UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::build::{BuildOptions, SpanBuilder};
use super::send::Report;
use super::send::{Exporter, SendError, BATCH};
use super::settings::OtlpSettings;
use super::stored::StoreContent;
use crate::model::event::Envelope;

/// Spans waiting to be sent; past it, new spans are dropped.
pub const QUEUE: usize = 4096;
/// How long the end of a run waits for the last spans to be sent.
pub const FLUSH_WAIT: Duration = Duration::from_secs(5);
/// How long a span waits for its batch to fill before the batch is sent anyway.
pub const BATCH_WAIT: Duration = Duration::from_secs(1);

/// Committed batches of events.
type Batches = Vec<Arc<Envelope>>;

/// Counts of what happened to a run's spans.
#[derive(Debug, Default)]
pub struct Stats {
    /// Spans the collector accepted.
    pub sent: AtomicU64,
    /// Spans dropped: the queue was full, or the flush wait ran out.
    pub dropped: AtomicU64,
    /// Spans in batches the collector refused or never answered.
    pub failed: AtomicU64,
    /// Such batches.
    pub failed_batches: AtomicU64,
}

/// A running live sender.
pub struct LiveExport {
    folder: std::thread::JoinHandle<()>,
    sender: std::thread::JoinHandle<(Option<String>, Option<String>)>,
    stats: Arc<Stats>,
    url: String,
}

/// Starts the live sender of run `run`: batches from `input` go on to `output` and are
/// folded into spans sent to the collector of `settings`.
pub fn spawn_live(
    db: PathBuf,
    run: String,
    settings: OtlpSettings,
    input: UnboundedReceiver<Batches>,
    output: UnboundedSender<Batches>,
) -> Result<LiveExport, String> {
    let url = settings.url.clone();
    let content = settings.content;
    let exporter = Exporter::new(settings)?;
    let stats = Arc::new(Stats::default());
    let (queue_tx, queue_rx) = tokio::sync::mpsc::channel::<Span>(QUEUE);
    let (end_tx, end_rx) = tokio::sync::watch::channel::<Option<std::time::Instant>>(None);
    let s = stats.clone();
    let sender = std::thread::Builder::new()
        .name("plexus-otlp-send".into())
        .spawn(move || send_loop(exporter, queue_rx, end_rx, &s))
        .map_err(|e| format!("cannot start the OTLP sender: {e}"))?;
    let s = stats.clone();
    let folder = std::thread::Builder::new()
        .name("plexus-otlp-spans".into())
        .spawn(move || {
            let opts = BuildOptions {
                content: content.then(|| Box::new(StoreContent::new(db.clone())) as _),
                cost: None,
            };
            fold_loop(db, &run, opts, input, output, &queue_tx, &s);
            // The run's part in this process is over: the sender has FLUSH_WAIT left.
            let _ = end_tx.send(Some(std::time::Instant::now() + FLUSH_WAIT));
        })
        .map_err(|e| format!("cannot start the OTLP span builder: {e}"))?;
    Ok(LiveExport {
        folder,
        sender,
        stats,
        url,
    })
}

impl LiveExport {
    /// Waits for the last spans to be sent (at most [`FLUSH_WAIT`] after the run's
    /// events end) and reports. Call it once the run's event stream has closed.
    pub fn finish(self) -> Report {
        let _ = self.folder.join();
        let (last_error, dropped_because) = self.sender.join().unwrap_or_default();
        let mut report = Report::of(&self.url, &self.stats, last_error);
        report.dropped_because = dropped_because;
        tracing::info!("{}", report.line());
        report
    }
}

fn fold_loop(
    db: PathBuf,
    run: &str,
    opts: BuildOptions,
    mut input: UnboundedReceiver<Batches>,
    output: UnboundedSender<Batches>,
    queue: &tokio::sync::mpsc::Sender<Span>,
    stats: &Stats,
) {
    let mut builder = SpanBuilder::new(run, opts);
    let mut output = Some(output);
    let mut last = 0u64;
    let mut spans = Vec::new();
    let push = |spans: &mut Vec<Span>| {
        for span in spans.drain(..) {
            match queue.try_send(span) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) | Err(TrySendError::Closed(_)) => {
                    stats.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    };
    while let Some(batch) = input.blocking_recv() {
        // The consumer first: the trace never delays the screen.
        if let Some(out) = &output {
            if out.send(batch.clone()).is_err() {
                output = None;
            }
        }
        for env in &batch {
            if env.seq <= last {
                continue;
            }
            if env.seq > last + 1 {
                // A resumed run: the events before this process's part shape the spans
                // (their ids, the tasks' runs) but were the earlier process's to send.
                prime(&db, run, &mut builder, last + 1, env.seq - 1);
            }
            builder.feed(env, &mut spans);
            last = env.seq;
        }
        push(&mut spans);
    }
    builder.finish(&mut spans);
    push(&mut spans);
}

/// Folds stored events `from..=to` into `builder`, sending none of their spans.
fn prime(db: &std::path::Path, run: &str, builder: &mut SpanBuilder, from: u64, to: u64) {
    let Ok(store) = crate::data::store::Store::open(db) else {
        return;
    };
    let run: Arc<str> = Arc::from(run);
    let mut discard = Vec::new();
    let mut at = from;
    while at <= to {
        let end = to.min(at + crate::data::replay::feed::PAGE - 1);
        match crate::data::replay::feed::page(&store, &run, at, end) {
            Ok(page) => {
                for env in &page {
                    builder.feed(env, &mut discard);
                }
            }
            Err(e) => {
                tracing::warn!("otlp: cannot read events {at}..{end} of {run}: {e}");
                return;
            }
        }
        discard.clear();
        at = end + 1;
    }
}

fn send_loop(
    exporter: Exporter,
    mut queue: tokio::sync::mpsc::Receiver<Span>,
    end: tokio::sync::watch::Receiver<Option<std::time::Instant>>,
    stats: &Stats,
) -> (Option<String>, Option<String>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::warn!("otlp: cannot start the sender's runtime: {e}");
            return (Some(e.to_string()), None);
        }
    };
    rt.block_on(async move {
        let mut last_error = None;
        loop {
            let Some(first) = queue.recv().await else {
                break;
            };
            let mut batch = vec![first];
            let until = Instant::now() + BATCH_WAIT;
            while batch.len() < BATCH {
                match tokio::time::timeout_at(until, queue.recv()).await {
                    Ok(Some(span)) => batch.push(span),
                    Ok(None) | Err(_) => break,
                }
            }
            let n = batch.len() as u64;
            let deadline = *end.borrow();
            let result = match deadline {
                Some(d) => exporter.send(batch, Some(Instant::from_std(d))).await,
                None => {
                    // The run may end while this batch is retried: stop at its deadline.
                    let mut end = end.clone();
                    tokio::select! {
                        r = exporter.send(batch, None) => r,
                        () = deadline_passed(&mut end) => Err(SendError::Deadline),
                    }
                }
            };
            match result {
                Ok(()) => {
                    stats.sent.fetch_add(n, Ordering::Relaxed);
                }
                Err(SendError::Deadline) => {
                    stats.dropped.fetch_add(n, Ordering::Relaxed);
                }
                Err(e) => {
                    tracing::warn!("otlp: a batch of {n} spans failed: {e}");
                    stats.failed.fetch_add(n, Ordering::Relaxed);
                    stats.failed_batches.fetch_add(1, Ordering::Relaxed);
                    last_error = Some(e.to_string());
                }
            }
            if let Some(d) = *end.borrow() {
                if std::time::Instant::now() >= d {
                    // Out of time: whatever is still queued is dropped.
                    queue.close();
                    while let Some(_span) = queue.recv().await {
                        stats.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                    break;
                }
            }
        }
        // Spans dropped while sends were failing were not taken for that reason.
        let dropped_because = exporter.last_failure();
        (last_error, dropped_because)
    })
}

/// Resolves once the run has ended and its flush wait has passed.
async fn deadline_passed(end: &mut tokio::sync::watch::Receiver<Option<std::time::Instant>>) {
    loop {
        let d = *end.borrow_and_update();
        if let Some(d) = d {
            tokio::time::sleep_until(Instant::from_std(d)).await;
            return;
        }
        if end.changed().await.is_err() {
            // The builder is gone without saying when: never resolve.
            std::future::pending::<()>().await;
        }
    }
}

impl Report {
    /// The report of a sender from its counters.
    fn of(url: &str, stats: &Stats, last_error: Option<String>) -> Report {
        Report {
            url: url.to_string(),
            sent: stats.sent.load(Ordering::Relaxed),
            dropped: stats.dropped.load(Ordering::Relaxed),
            failed: stats.failed.load(Ordering::Relaxed),
            failed_batches: stats.failed_batches.load(Ordering::Relaxed),
            last_error,
            dropped_because: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full queue drops spans and counts them, and never holds the events back.
    #[test]
    fn a_full_queue_drops_and_counts_and_passes_every_event_on() {
        let events: Vec<Arc<Envelope>> = include_str!("../../../fixtures/runs/demo.jsonl")
            .lines()
            .map(|l| Arc::new(serde_json::from_str(l).expect("an envelope")))
            .collect();
        let run = events[0].run_id.to_string();
        let total = super::super::spans_of(
            &run,
            events.iter().map(|e| e.as_ref()),
            BuildOptions::default(),
        )
        .len() as u64;
        let (in_tx, in_rx) = tokio::sync::mpsc::unbounded_channel();
        let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel();
        for batch in events.chunks(5) {
            in_tx.send(batch.to_vec()).expect("send");
        }
        drop(in_tx);
        let (queue, _keep) = tokio::sync::mpsc::channel::<Span>(2);
        let stats = Stats::default();
        fold_loop(
            PathBuf::from("unused.db"),
            &run,
            BuildOptions::default(),
            in_rx,
            out_tx,
            &queue,
            &stats,
        );
        assert_eq!(stats.dropped.load(Ordering::Relaxed), total - 2);
        let mut passed = 0;
        while let Ok(b) = out_rx.try_recv() {
            passed += b.len();
        }
        assert_eq!(passed, events.len());
    }
}
