//! The failure tree of a running eval, written on a thread of its own so that scoring
//! never waits for the disk: each sample's document when it is dispatched (the samples
//! still pending read from the database a page at a time, so none is held in memory),
//! its other documents when it is scored, and `failure_summary.json` refreshed at most once a
//! second while samples fail. A write that fails is reported once and the eval goes on:
//! the database is the record, and `plexus eval export-tree` writes the tree again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::base::protocol::handoff::FailureSampleIndexEntry;
use crate::data::failures::summary::SummaryOf;
use crate::features::eval::read;
use crate::features::eval::record::{EvalRow, SampleRow};
use crate::features::eval::tree::{self, SampleDocs};

/// Jobs queued for the tree thread at most.
const QUEUE: usize = 256;

/// Samples to dispatch read from the database at once.
const PAGE: usize = 256;

/// How often the summary is written again while samples keep failing.
const SUMMARY_EVERY: Duration = Duration::from_secs(1);

/// Work for the tree thread.
pub enum TreeJob {
    /// A sample was dispatched: write `samples/ID.json` (when it is not there yet).
    Sample(SampleRow),
    /// A sample was scored: write its documents.
    Docs(Box<(SampleRow, SampleDocs)>),
}

/// The sending side of the tree thread.
pub struct TreeWriter {
    tx: Option<SyncSender<TreeJob>>,
    thread: Option<JoinHandle<bool>>,
}

impl TreeWriter {
    /// Starts the thread writing eval `row`'s tree of `total` samples under
    /// `iteration_dir`; the samples of `db` still pending are those whose
    /// `samples/ID.json` it writes (between the other jobs, so neither waits for the
    /// other); `failed` are the index entries of samples that failed before (a resumed
    /// eval), by dataset order.
    pub fn start(
        row: EvalRow,
        iteration_dir: PathBuf,
        total: u64,
        db: PathBuf,
        failed: BTreeMap<u64, FailureSampleIndexEntry>,
    ) -> TreeWriter {
        // Bounded: when the disk is slower than scoring, the scorer waits rather than
        // documents piling up in memory.
        let (tx, rx) = sync_channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("plexus-eval-tree".into())
            .spawn(move || {
                let dispatched = Pending::open(&db, &row.eval_id);
                write_loop(row, iteration_dir, total, dispatched, failed, rx)
            })
            .ok();
        TreeWriter {
            tx: Some(tx),
            thread,
        }
    }

    /// Queues a job.
    pub fn send(&self, job: TreeJob) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(job);
        }
    }

    /// Waits for every queued job to be written; whether every write succeeded (false:
    /// some documents are missing, and the eval's end writes them from the database).
    pub fn finish(mut self) -> bool {
        drop(self.tx.take());
        match self.thread.take() {
            Some(t) => t.join().unwrap_or(false),
            None => false,
        }
    }
}

/// The samples still to dispatch, read from the database a page at a time in the order
/// of their ids. A sample scored before its page was read is not in it: its document is
/// written with its other documents.
struct Pending {
    store: Result<crate::data::store::Store, String>,
    eval_id: String,
    after: Option<String>,
    page: std::vec::IntoIter<SampleRow>,
    done: bool,
}

impl Pending {
    fn open(db: &Path, eval_id: &str) -> Pending {
        Pending {
            store: crate::data::store::Store::open(db).map_err(|e| e.to_string()),
            eval_id: eval_id.to_string(),
            after: None,
            page: Vec::new().into_iter(),
            done: false,
        }
    }

    /// The next sample to dispatch; `Err` when the database cannot be read (then none
    /// is given again).
    fn next(&mut self) -> Result<Option<SampleRow>, String> {
        if let Some(s) = self.page.next() {
            return Ok(Some(s));
        }
        if self.done {
            return Ok(None);
        }
        let rows = match &self.store {
            Ok(store) => {
                read::pending_after(store.conn(), &self.eval_id, self.after.as_deref(), PAGE)
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e.clone()),
        };
        let rows = rows.inspect_err(|_| self.done = true)?;
        self.done = rows.len() < PAGE;
        self.after = rows
            .last()
            .map(|r| r.sample_id.clone())
            .or(self.after.take());
        self.page = rows.into_iter();
        Ok(self.page.next())
    }
}

fn write_loop(
    row: EvalRow,
    it: PathBuf,
    total: u64,
    mut dispatched: Pending,
    mut failed: BTreeMap<u64, FailureSampleIndexEntry>,
    rx: Receiver<TreeJob>,
) -> bool {
    let mut dispatching = true;
    let warned = std::cell::Cell::new(false);
    let mut report = |what: &str, e: &dyn std::fmt::Display| {
        if !warned.get() {
            crate::errln!(
                "eval {}: the failure tree could not be written ({what}: {e}); the results are in the database, and the eval's end writes what is missing",
                row.eval_id,
            );
            warned.set(true);
        }
    };
    if let Err(e) = tree::prepare(&it) {
        report("its folders", &e);
    }
    let mut dirty = false;
    let mut last = Instant::now();
    let mut next_sample = |report: &mut dyn FnMut(&str, &dyn std::fmt::Display)| {
        dispatched.next().unwrap_or_else(|e| {
            report("the samples to dispatch", &e);
            None
        })
    };
    loop {
        // While samples wait for their dispatch document, one is written whenever no
        // job is waiting.
        let job = if dispatching {
            match rx.try_recv() {
                Ok(job) => Some(job),
                Err(std::sync::mpsc::TryRecvError::Empty) => match next_sample(&mut report) {
                    Some(s) => Some(TreeJob::Sample(s)),
                    None => {
                        dispatching = false;
                        None
                    }
                },
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    next_sample(&mut report).map(TreeJob::Sample).or_else(|| {
                        dispatching = false;
                        None
                    })
                }
            }
        } else {
            match rx.recv_timeout(SUMMARY_EVERY) {
                Ok(job) => Some(job),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        };
        match job {
            Some(TreeJob::Sample(s)) => {
                let path = it.join(crate::data::failures::layout::sample_path(&s.file_id));
                if !path.exists() {
                    if let Err(e) = tree::write_sample(&it, &row, &s) {
                        report("a sample", &e);
                    }
                }
            }
            Some(TreeJob::Docs(b)) => {
                let (s, docs) = *b;
                let path = it.join(crate::data::failures::layout::sample_path(&s.file_id));
                if !path.exists() {
                    if let Err(e) = tree::write_sample(&it, &row, &s) {
                        report("a sample", &e);
                    }
                }
                if let Err(e) = tree::write_docs(&it, &s, &docs) {
                    report("a sample's documents", &e);
                }
                if let Some(entry) = docs.entry {
                    failed.insert(s.ord, entry);
                    dirty = true;
                }
            }
            None => {}
        }
        // Written again at most once a second, less often as it grows (it is whole
        // at the end): 50,000 failures are not rewritten every second.
        let every = SUMMARY_EVERY * (1 + (failed.len() / 5_000) as u32);
        if dirty && last.elapsed() >= every {
            // Written from the entries where they are: 50,000 of them are not copied.
            let at = crate::base::clock::now_rfc3339();
            let total = u32::try_from(total).unwrap_or(u32::MAX);
            let summary = SummaryOf::new(row.iteration, &at, total, failed.values());
            if let Err(e) = tree::write_summary(&it, &summary) {
                report("the summary", &e);
            }
            dirty = false;
            last = Instant::now();
        }
    }
    !warned.get()
}
