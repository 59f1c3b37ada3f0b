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
use crate::event::{Envelope, RunStatus};
use crate::state::{reduce, RunState};
use crate::store::{Store, StoreError};

/// Events between two snapshots.
pub const SNAPSHOT_EVERY: u64 = 16_384;

/// Streamed text the indexing state holds before finished tasks' text is evicted. It is
/// only cloned into snapshots, which keep no finished task's text (it is read back from
/// the log when looked at), so it can be small.
pub const INDEX_OUTPUT_BUDGET: usize = 2 << 20;

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
}

/// A fresh state for replaying `run` (as a live run's starts).
pub fn replay_state(run: &str) -> RunState {
    let mut st = RunState::new();
    st.run_id = run.to_string();
    st
}

/// A snapshot of the indexing state: the text of running tasks kept (shared, not
/// copied), finished tasks' text left to the log, the budget a live run has.
fn snapshot_of(head: &RunState) -> RunState {
    let mut s = head.clone();
    s.spill_finished();
    s.output_budget = crate::state::DEFAULT_OUTPUT_BUDGET;
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
        let summary = store.run(run)?;
        let run: Arc<str> = Arc::from(summary.run_id.as_str());
        let (total, _) = store.last_event(&run)?;
        let empty = replay_state(&run);
        let mut head = empty.clone();
        head.output_budget = INDEX_OUTPUT_BUDGET;
        Ok(ReplayLog {
            store,
            marks,
            snapshots: vec![(0, empty)],
            head,
            total,
            run,
        })
    }

    /// The run id.
    pub fn run_id(&self) -> &Arc<str> {
        &self.run
    }

    /// The marks, shared (the UI reads them for jumps and times).
    pub fn marks(&self) -> &Arc<RwLock<Marks>> {
        &self.marks
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

    /// The run's status as stored, and whether a live process owns it (its events may
    /// still grow).
    pub fn live(&self) -> Result<bool, StoreError> {
        let status = self.store.run(&self.run)?.status;
        let running = matches!(
            RunStatus::parse(&status),
            Some(RunStatus::Running | RunStatus::Paused)
        );
        Ok(running && self.store.run_owner_alive(&self.run)?)
    }

    /// Looks for events committed since the last look; returns the new total.
    pub fn refresh(&mut self) -> Result<u64, StoreError> {
        let (last, _) = self.store.last_event(&self.run)?;
        self.total = self.total.max(last);
        Ok(self.total)
    }

    /// Reads and indexes up to one page of events; returns how many.
    pub fn index_page(&mut self) -> Result<u64, StoreError> {
        let from = self.indexed() + 1;
        if from > self.total {
            return Ok(0);
        }
        let to = self.total.min(from + PAGE - 1);
        let events = page(&self.store, &self.run, from, to)?;
        for env in &events {
            reduce(&mut self.head, env);
            if env.seq % SNAPSHOT_EVERY == 0 {
                self.snapshots.push((env.seq, snapshot_of(&self.head)));
            }
        }
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
        while self.indexed() < to {
            if self.index_page()? == 0 {
                break;
            }
        }
        let i = self.snapshots.partition_point(|(s, _)| *s <= to) - 1;
        let (at, snap) = &self.snapshots[i];
        let mut st = snap.clone();
        fold_range(&self.store, &self.run, &mut st, at + 1, to)?;
        Ok(st)
    }

    /// Events `from..=to`, for playing forward.
    pub fn events(&self, from: u64, to: u64) -> Result<Vec<Envelope>, StoreError> {
        page(&self.store, &self.run, from, to.min(self.total))
    }
}
