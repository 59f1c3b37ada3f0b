//! A stored run sent as a trace (`plexus export RUN --otlp URL`): its log read a page at
//! a time, folded by the same span model as a live run, sent in batches; and the prompts
//! of `--otlp-content`, read from the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::build::{BuildOptions, ContentSource, Prompt, SpanBuilder};
use super::send::Report;
use super::send::{Exporter, BATCH};
use super::settings::OtlpSettings;
use crate::data::store::Store;

/// Prompts read from the store's invocation rows (system prompt restored). They hold
/// the request plexus built, never a provider's key or headers.
pub struct StoreContent {
    db: PathBuf,
    store: Option<Store>,
}

impl StoreContent {
    /// Reads from the database at `db` (opened at the first prompt asked for).
    pub fn new(db: PathBuf) -> StoreContent {
        StoreContent { db, store: None }
    }
}

impl ContentSource for StoreContent {
    fn prompt(&mut self, invocation_id: &str) -> Option<Prompt> {
        if self.store.is_none() {
            self.store = Store::open(&self.db).ok();
        }
        let req = self
            .store
            .as_ref()?
            .invocation_request(invocation_id)
            .ok()??;
        let system = req
            .get("system_prompt")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        let user = match req.get("user_prompt") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        Some(Prompt { system, user })
    }
}

/// Sends run `run` of the database at `db` to the collector; `progress(spans_sent,
/// events_read, events_total)` is called after each batch.
pub async fn export_stored(
    db: &Path,
    run: &str,
    settings: OtlpSettings,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> color_eyre::Result<Report> {
    let store = Store::open(db)?;
    let run_id = store.resolve_run(run)?;
    let (last, _) = store.last_event(&run_id)?;
    let url = settings.url.clone();
    let content = settings.content;
    let exporter = Exporter::new(settings).map_err(|e| color_eyre::eyre::eyre!("{e}"))?;
    let opts = BuildOptions {
        content: content.then(|| Box::new(StoreContent::new(db.to_path_buf())) as _),
        cost: None,
    };
    let mut builder = SpanBuilder::new(&run_id, opts);
    let run_arc: Arc<str> = Arc::from(run_id.as_str());
    let mut report = Report {
        url,
        sent: 0,
        dropped: 0,
        failed: 0,
        failed_batches: 0,
        last_error: None,
        dropped_because: None,
    };
    let mut spans = Vec::new();
    let mut at = 1;
    while at <= last {
        let end = last.min(at + crate::data::replay::feed::PAGE - 1);
        for env in crate::data::replay::feed::page(&store, &run_arc, at, end)? {
            builder.feed(&env, &mut spans);
        }
        while spans.len() >= BATCH {
            let rest = spans.split_off(BATCH);
            send(&exporter, std::mem::replace(&mut spans, rest), &mut report).await;
            progress(report.sent, end, last);
        }
        at = end + 1;
    }
    builder.finish(&mut spans);
    while !spans.is_empty() {
        let rest = spans.split_off(BATCH.min(spans.len()));
        send(&exporter, std::mem::replace(&mut spans, rest), &mut report).await;
    }
    progress(report.sent, last, last);
    Ok(report)
}

async fn send(
    exporter: &Exporter,
    batch: Vec<opentelemetry_proto::tonic::trace::v1::Span>,
    report: &mut Report,
) {
    let n = batch.len() as u64;
    match exporter.send(batch, None).await {
        Ok(()) => report.sent += n,
        Err(e) => {
            tracing::warn!("otlp export: a batch of {n} spans failed: {e}");
            report.failed += n;
            report.failed_batches += 1;
            report.last_error = Some(e.to_string());
        }
    }
}
