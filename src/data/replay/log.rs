//! The replay of one run over its log: reads the log once, in pages, keeping the
//! [`Marks`] and a snapshot of the folded state every [`SNAPSHOT_EVERY`] events; a seek
//! clones the nearest snapshot at or before its target and folds the few pages after
//! it, so no seek re-folds the whole log. A run another process is still writing grows
//! as its new events are committed. Synchronous: the player thread drives it, and tests
//! and benchmarks call it directly.

use std::path::Path;
use std::sync::{Arc, RwLock};

use super::feed::{fold_range, page, PAGE};
use super::marks::Marks;
use crate::data::store::{Store, StoreError};
use crate::model::event::Envelope;
use crate::model::state::{reduce, OutputBuffer, RunState};

/// Events between two snapshots.
pub const SNAPSHOT_EVERY: u64 = 16_384;

/// Events past the nearest snapshot in memory beyond which a seek reads a stored one
/// (nearer, folding the few events is quicker than reading a whole state).
pub const STORED_AFTER: u64 = 512;

/// One run's log, indexed as far as it has been read.
pub struct ReplayLog {
    store: Store,
    run: Arc<str>,
    marks: Arc<RwLock<Marks>>,
    /// Snapshots by event number, ascending; the first is the empty state (event 0).
    snapshots: Vec<(u64, RunState)>,
    /// The state after the last event indexed.
    head: RunState,
    /// Events in the log (the last seq committed).
    total: u64,
    /// Events between two snapshots.
    every: u64,
    /// The first state read from a stored snapshot, whose tasks' spans say where their
    /// text is (until the log is indexed that far).
    base: Option<RunState>,
    /// The end this reader stored a snapshot of (once is enough).
    stored_end: Option<u64>,
    /// Whether stored snapshots are read (and stored).
    use_stored: bool,
    /// Set when nobody wants the answers any more (stops a long seek).
    stop: Option<Arc<std::sync::atomic::AtomicBool>>,
}

pub use super::feed::replay_state;

/// A snapshot of the indexing state: the text of running tasks kept (shared, not
/// copied), finished tasks' text left to the log, the budget a live run has.
fn snapshot_of(head: &RunState) -> RunState {
    let mut s = head.clone();
    s.spill_finished();
    s.output_budget = crate::model::state::DEFAULT_OUTPUT_BUDGET;
    s
}

impl ReplayLog {
    /// Opens `run` (an id, a unique prefix or `latest`) in the database at `db`,
    /// read-only. Nothing is read of the log yet.
    pub fn open(db: &Path, run: &str) -> Result<ReplayLog, StoreError> {
        Self::open_sharing(db, run, Arc::new(RwLock::new(Marks::default())))
    }

    /// [`ReplayLog::open`], keeping the marks in `marks` (which others may read).
    pub fn open_sharing(
        db: &Path,
        run: &str,
        marks: Arc<RwLock<Marks>>,
    ) -> Result<ReplayLog, StoreError> {
        if let Ok(mut m) = marks.write() {
            *m = Marks::default();
        }
        let store = Store::open(db)?;
        let run: Arc<str> = Arc::from(store.resolve_run(run)?);
        let (total, _) = store.last_event(&run)?;
        let empty = replay_state(&run);
        // The indexing state keeps no finished task's text (snapshots do not either),
        // and never trims a running task's: a snapshot must hold all of it.
        let mut head = empty.clone();
        head.output_budget = usize::MAX;
        Ok(ReplayLog {
            store,
            marks,
            snapshots: vec![(0, empty)],
            head,
            total,
            run,
            every: SNAPSHOT_EVERY,
            stop: None,
            base: None,
            stored_end: None,
            use_stored: true,
        })
    }

    /// Takes a snapshot every `every` events instead of every [`SNAPSHOT_EVERY`] (tests
    /// use short intervals to exercise many snapshots on small logs).
    pub fn with_snapshots_every(mut self, every: u64) -> ReplayLog {
        self.every = every.max(1);
        self
    }

    /// Never reads the run's stored snapshots: every state is folded from the log (the
    /// benchmark's yardstick: how a run opened before snapshots were stored).
    pub fn without_stored_snapshots(mut self) -> ReplayLog {
        self.use_stored = false;
        self
    }

    /// Stops reading (a seek in progress returns an error) once `stop` is set.
    pub fn with_stop(mut self, stop: Arc<std::sync::atomic::AtomicBool>) -> ReplayLog {
        self.stop = Some(stop);
        self
    }

    fn stopped(&self) -> Result<(), StoreError> {
        match &self.stop {
            Some(s) if s.load(std::sync::atomic::Ordering::Relaxed) => {
                Err(StoreError::WriterGone("the replay was closed".into()))
            }
            _ => Ok(()),
        }
    }

    /// The run id.
    pub fn run_id(&self) -> &Arc<str> {
        &self.run
    }

    /// Events in the log.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Events read and indexed.
    pub fn indexed(&self) -> u64 {
        self.marks.read().map(|m| m.len()).unwrap_or(0)
    }

    /// Snapshots held.
    pub fn snapshots(&self) -> usize {
        self.snapshots.len()
    }

    /// Whether a live process owns the run, so its events may still grow. That holds
    /// whatever the run's status says: a screen that keeps an ended run open may retry
    /// a task or review an answer, and its events come after the run's first end.
    pub fn live(&self) -> Result<bool, StoreError> {
        self.store.run_owner_alive(&self.run)
    }

    /// Looks for events committed since the last look; returns the new total.
    pub fn refresh(&mut self) -> Result<u64, StoreError> {
        let (last, _) = self.store.last_event(&self.run)?;
        self.total = self.total.max(last);
        Ok(self.total)
    }

    /// Reads and indexes up to one page of events; returns how many.
    pub fn index_page(&mut self) -> Result<u64, StoreError> {
        self.stopped()?;
        let from = self.indexed() + 1;
        if from > self.total {
            return Ok(0);
        }
        let to = self.total.min(from + PAGE - 1);
        let events = page(&self.store, &self.run, from, to)?;
        for env in &events {
            reduce(&mut self.head, env);
            if env.seq % self.every == 0 {
                self.snapshots.push((env.seq, snapshot_of(&self.head)));
            }
        }
        self.head.spill_finished();
        // The marks are shared with the UI: written in one short step.
        let mut marks = self
            .marks
            .write()
            .map_err(|_| StoreError::WriterGone("replay marks poisoned".into()))?;
        for env in &events {
            // An event that did not decode still takes its number.
            while marks.len() + 1 < env.seq {
                marks.skip(env.ts);
            }
            marks.add(env);
        }
        while marks.len() < to {
            marks.skip(self.head.last_ts);
        }
        Ok(to + 1 - from)
    }

    /// Indexes the whole log as it is now.
    pub fn index_all(&mut self) -> Result<(), StoreError> {
        while self.index_page()? > 0 {}
        Ok(())
    }

    /// The state after event `to` (clamped to the events in the log): the nearest
    /// snapshot at or before it, with the events after it folded in.
    pub fn seek(&mut self, to: u64) -> Result<RunState, StoreError> {
        let to = to.min(self.total);
        let i = self
            .snapshots
            .partition_point(|(s, _)| *s <= to)
            .saturating_sub(1);
        let at = self.snapshots[i].0;
        // A stored snapshot nearer than the ones indexed so far: no need to read the
        // log up to it first.
        if self.use_stored && to - at > STORED_AFTER {
            let stop = || self.stopped();
            if let Some(opened) =
                super::stored::open_from_snapshot(&self.store, &self.run, to, at, &stop)?
            {
                super::stored::store_if_rebuilt(&self.store, &self.run, to, &opened);
                if self.base.is_none() {
                    self.base = Some(opened.state.clone());
                }
                return Ok(opened.state);
            }
        }
        while self.indexed() < to {
            if self.index_page()? == 0 {
                break;
            }
        }
        let (at, snap) = &self.snapshots[i];
        let (from, mut st) = (at + 1, snap.clone());
        self.fold_checked(&mut st, from, to)?;
        // No stored snapshot served this: store the end for the next reader.
        if self.use_stored && to == self.total && to > 0 && self.stored_end != Some(to) {
            self.stored_end = Some(to);
            let long = self
                .store
                .snapshot_seqs(&self.run)?
                .last()
                .is_none_or(|&s| to - s >= super::stored::REBUILD_AFTER);
            super::stored::store_if_long(&self.store, &self.run, to, &st, long);
        }
        Ok(st)
    }

    /// Folds events `from..=to` into `st` a page at a time, stopping when asked to.
    fn fold_checked(&self, st: &mut RunState, from: u64, to: u64) -> Result<(), StoreError> {
        let mut at = from;
        while at <= to {
            self.stopped()?;
            let end = to.min(at.saturating_add(PAGE - 1));
            fold_range(&self.store, &self.run, st, at, end)?;
            at = end + 1;
        }
        Ok(())
    }

    /// Task `task`'s streamed text as it was after event `to`: folded from the last
    /// snapshot before the task's first event (where its text was still empty) to its
    /// last event at or before `to`, keeping only its text — a task's lifetime, not the
    /// whole log.
    pub fn task_output(&mut self, task: usize, to: u64) -> Result<OutputBuffer, StoreError> {
        let to = to.min(self.total);
        // Not indexed that far yet (the run was opened from a stored snapshot): the
        // task's own events, from where the opened state says they are.
        if self.indexed() < to {
            if let Some(base) = &self.base {
                let first = base.tasks.get(task).map_or(0, |t| t.span.0);
                if first > 0 {
                    let span = (first, u64::MAX);
                    return super::stored::task_text(&self.store, &self.run, base, task, span, to);
                }
            }
        }
        while self.indexed() < to {
            if self.index_page()? == 0 {
                break;
            }
        }
        let id = self
            .head
            .tasks
            .get(task)
            .map(|t| t.id.clone())
            .ok_or_else(|| StoreError::WriterGone(format!("no task {task} in this run")))?;
        // Its text changes only between its first event and its last.
        let (first, last) = self
            .marks
            .read()
            .ok()
            .and_then(|m| m.span_of(&id))
            .unwrap_or((1, to));
        let to = to.min(last);
        let i = self
            .snapshots
            .partition_point(|(s, _)| *s < first)
            .saturating_sub(1);
        let (at, snap) = &self.snapshots[i];
        let (from, mut st) = (at + 1, snap.clone());
        st.output_only = Some(task);
        st.output_budget = usize::MAX;
        self.fold_checked(&mut st, from, to)?;
        Ok(st
            .tasks
            .get_mut(task)
            .map(|t| std::mem::take(&mut Arc::make_mut(t).output))
            .unwrap_or_default())
    }

    /// Events `from..=to`, for playing forward.
    pub fn events(&self, from: u64, to: u64) -> Result<Vec<Envelope>, StoreError> {
        page(&self.store, &self.run, from, to.min(self.total))
    }
}
