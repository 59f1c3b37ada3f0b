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

/// The tree thread: each job written as it comes and, while no job waits, the dispatch
/// document of the next sample still pending; the summary refreshed as samples fail.
/// Whether every write succeeded.
fn write_loop(
    row: EvalRow,
    it: PathBuf,
    total: u64,
    dispatched: Pending,
    failed: BTreeMap<u64, FailureSampleIndexEntry>,
    rx: Receiver<TreeJob>,
) -> bool {
    let mut t = TreeThread {
        row,
        it,
        total,
        dispatched,
        dispatching: true,
        failed,
        dirty: false,
        last: Instant::now(),
        warned: false,
    };
    if let Err(e) = tree::prepare(&t.it) {
        t.report("its folders", &e);
    }
    t.last = Instant::now();
    loop {
        // While samples wait for their dispatch document, one is written whenever no
        // job is waiting.
        let job = if t.dispatching {
            match rx.try_recv() {
                Ok(job) => Some(job),
                Err(_) => t.next_dispatch(),
            }
        } else {
            match rx.recv_timeout(SUMMARY_EVERY) {
                Ok(job) => Some(job),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        };
        if let Some(job) = job {
            t.write(job);
        }
        t.refresh_summary();
    }
    !t.warned
}

/// What the tree thread holds.
struct TreeThread {
    row: EvalRow,
    /// The iteration directory.
    it: PathBuf,
    /// The eval's samples.
    total: u64,
    /// The samples still to dispatch.
    dispatched: Pending,
    /// Whether some may still wait for their dispatch document.
    dispatching: bool,
    /// The index entries of the samples that failed, by dataset order.
    failed: BTreeMap<u64, FailureSampleIndexEntry>,
    /// Whether `failed` changed since the summary was written.
    dirty: bool,
    /// When the summary was last written.
    last: Instant,
    /// Whether a write failed (it is reported once).
    warned: bool,
}

impl TreeThread {
    /// Reports the first write that fails; the others are not.
    fn report(&mut self, what: &str, e: &dyn std::fmt::Display) {
        if !self.warned {
            crate::errln!(
                "eval {}: the failure tree could not be written ({what}: {e}); the results are in the database, and the eval's end writes what is missing",
                self.row.eval_id,
            );
            self.warned = true;
        }
    }

    /// The dispatch job of the next pending sample; `None` (and no more dispatching)
    /// when there is none or the database cannot be read.
    fn next_dispatch(&mut self) -> Option<TreeJob> {
        let next = self.dispatched.next().unwrap_or_else(|e| {
            self.report("the samples to dispatch", &e);
            None
        });
        if next.is_none() {
            self.dispatching = false;
        }
        next.map(TreeJob::Sample)
    }

    /// Writes one job's documents; a failed sample's index entry is kept for the summary.
    fn write(&mut self, job: TreeJob) {
        match job {
            TreeJob::Sample(s) => self.write_sample(&s),
            TreeJob::Docs(b) => {
                let (s, docs) = *b;
                self.write_sample(&s);
                if let Err(e) = tree::write_docs(&self.it, &s, &docs) {
                    self.report("a sample's documents", &e);
                }
                if let Some(entry) = docs.entry {
                    self.failed.insert(s.ord, entry);
                    self.dirty = true;
                }
            }
        }
    }

    /// Writes `samples/ID.json` of `s` when it is not there yet.
    fn write_sample(&mut self, s: &SampleRow) {
        let path = self
            .it
            .join(crate::data::failures::layout::sample_path(&s.file_id));
        if path.exists() {
            return;
        }
        if let Err(e) = tree::write_sample(&self.it, &self.row, s) {
            self.report("a sample", &e);
        }
    }

    /// Writes the summary again when samples failed since, at most once a second, less
    /// often as it grows (it is whole at the end): 50,000 failures are not rewritten
    /// every second.
    fn refresh_summary(&mut self) {
        let every = SUMMARY_EVERY * (1 + (self.failed.len() / 5_000) as u32);
        if !self.dirty || self.last.elapsed() < every {
            return;
        }
        // Written from the entries where they are: 50,000 of them are not copied.
        let at = crate::base::clock::now_rfc3339();
        let total = u32::try_from(self.total).unwrap_or(u32::MAX);
        let summary = SummaryOf::new(self.row.iteration, &at, total, self.failed.values());
        if let Err(e) = tree::write_summary(&self.it, &summary) {
            self.report("the summary", &e);
        }
        self.dirty = false;
        self.last = Instant::now();
    }
}
