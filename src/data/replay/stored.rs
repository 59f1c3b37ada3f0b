//! A run's state read from its stored snapshots: the newest snapshot at or before the
//! event wanted, with the events after it folded in; a missing, damaged or outdated
//! snapshot falls back to an older one or to the log from its start, and a state
//! rebuilt that way is stored again (by whoever read it, unless a live process owns
//! the run and stores its own). Also a task's text, folded from the task's own events.

use std::path::Path;
use std::sync::Arc;

use super::feed::PAGE;
use crate::data::store::snapshots::put_snapshot;
use crate::data::store::{Store, StoreError};
use crate::model::event::{EngineEvent, Envelope};
use crate::model::state::snapshot::{decode, measure};
use crate::model::state::{reduce, OutputBuffer, RunState};

/// Events a reader folds past a snapshot before it stores a newer one for the next.
pub const REBUILD_AFTER: u64 = 4 * PAGE;

/// A state and how it was had.
#[derive(Debug)]
pub struct Opened {
    /// The state after the event wanted.
    pub state: RunState,
    /// The stored snapshot it started from, if any.
    pub snapshot: Option<u64>,
    /// Events folded after it.
    pub folded: u64,
    /// Snapshots that could not be used, and why.
    pub refused: Vec<String>,
}

/// The state of `run` after event `to`, starting from the newest usable stored
/// snapshot later than `not_before` (`None` when there is none: the caller has a
/// nearer state of its own). `stopped` is asked between pages.
pub fn open_from_snapshot(
    store: &Store,
    run: &Arc<str>,
    to: u64,
    not_before: u64,
    stopped: &dyn Fn() -> Result<(), StoreError>,
) -> Result<Option<Opened>, StoreError> {
    let mut refused = Vec::new();
    let mut upto = to;
    let (seq, mut st) = loop {
        let usable = store
            .snapshot_before(run, upto)?
            .filter(|s| s.seq > not_before);
        let Some(snap) = usable else {
            if refused.is_empty() {
                return Ok(None);
            }
            // Every snapshot was refused: from the log's start.
            break (0, super::feed::replay_state(run));
        };
        match decode(&snap.data) {
            Ok(st) => break (snap.seq, st),
            Err(e) => {
                tracing::warn!("run {run}: snapshot at event {} not used: {e}", snap.seq);
                refused.push(format!("snapshot at event {}: {e}", snap.seq));
                // Above `not_before`, so at least 1.
                upto = snap.seq - 1;
            }
        }
    };
    let mut at = seq + 1;
    while at <= to {
        stopped()?;
        let end = to.min(at.saturating_add(PAGE - 1));
        for env in super::feed::page(store, run, at, end)? {
            reduce(&mut st, &env);
        }
        at = end + 1;
    }
    Ok(Some(Opened {
        state: st,
        snapshot: (seq > 0).then_some(seq),
        folded: to.saturating_sub(seq),
        refused,
    }))
}

/// The state of `run` after event `to`, from its stored snapshots or, when none is
/// usable, from its whole log; stores the state reached when that took long (see
/// [`store_if_rebuilt`]).
pub fn open_at(store: &Store, run: &Arc<str>, to: u64) -> Result<Opened, StoreError> {
    let opened = match open_from_snapshot(store, run, to, 0, &|| Ok(()))? {
        Some(o) => o,
        None => {
            let mut st = super::feed::replay_state(run);
            super::feed::fold_range(store, run, &mut st, 1, to)?;
            Opened {
                state: st,
                snapshot: None,
                folded: to,
                refused: Vec::new(),
            }
        }
    };
    store_if_rebuilt(store, run, to, &opened);
    Ok(opened)
}

/// Stores the state `opened` reached (after event `to`) as a snapshot when it took many
/// events or a refused snapshot to reach, `to` is the run's last event and no live
/// process owns the run (that one stores its own). Encoded and written on a thread of
/// its own; a failure is only logged (the log stays the record).
pub fn store_if_rebuilt(store: &Store, run: &Arc<str>, to: u64, opened: &Opened) {
    store_if_long(
        store,
        run,
        to,
        &opened.state,
        opened.folded >= REBUILD_AFTER || !opened.refused.is_empty(),
    );
}

/// Stores `state` (after event `to`) when `long` (it took many events or a refused
/// snapshot to reach), on the conditions of [`store_if_rebuilt`].
pub fn store_if_long(store: &Store, run: &Arc<str>, to: u64, state: &RunState, long: bool) {
    if !long {
        return;
    }
    let at_end = store.last_event(run).map(|(last, _)| last == to);
    let owned = store.run_owner_alive(run).unwrap_or(true);
    if at_end.ok() != Some(true) || owned || to == 0 {
        return;
    }
    let (db, run, state) = (store.path().to_path_buf(), run.clone(), state.clone());
    let spawned = std::thread::Builder::new()
        .name("plexus-snapshot".into())
        .spawn(move || {
            if let Err(e) = store_state(&db, &run, state) {
                tracing::info!("run {run}: the state read was not stored: {e}");
            }
        });
    if let Err(e) = spawned {
        tracing::info!("cannot start the snapshot thread: {e}");
    }
}

/// Stores `state` (after its last event) as a snapshot of `run`.
pub fn store_state(db: &Path, run: &str, state: RunState) -> Result<(), String> {
    // The text is left out by the encoding itself.
    let m = measure(&state).map_err(|e| e.to_string())?;
    put_snapshot(db, run, state.last_seq, m.len(), |out| {
        m.write_to(out).map_err(|e| e.to_string())
    })
    .map_err(|e| e.to_string())
}

/// Task `task`'s text as it was after event `upto`: its own events (and the run's)
/// from its first, folded into `base` (any state of the run that lists its tasks).
pub fn task_text(
    store: &Store,
    run: &Arc<str>,
    base: &RunState,
    task: usize,
    span: (u64, u64),
    upto: u64,
) -> Result<OutputBuffer, StoreError> {
    let Some(id) = base.tasks.get(task).map(|t| t.id.clone()) else {
        return Ok(OutputBuffer::new());
    };
    if span.0 == 0 {
        return Ok(OutputBuffer::new());
    }
    let mut st = base.clone();
    st.output_only = Some(task);
    st.output_budget = usize::MAX;
    if let Some(t) = st.tasks.get_mut(task) {
        let t = Arc::make_mut(t);
        t.output = OutputBuffer::new();
        t.spilled = false;
    }
    let to = upto.min(span.1);
    let mut at = span.0;
    while at <= to {
        let end = to.min(at.saturating_add(4 * PAGE - 1));
        for r in store.task_events(run, &id, at, end)? {
            // A start would begin the state again (only an untrusted log has a second).
            if let Ok(event) = r.event {
                if matches!(event, EngineEvent::RunStarted(_)) {
                    continue;
                }
                reduce(
                    &mut st,
                    &Envelope {
                        run_id: run.clone(),
                        seq: r.seq,
                        ts: r.ts,
                        task_id: r.task_id.map(Arc::from),
                        invocation_id: r.invocation_id.map(Arc::from),
                        agent: r.agent.map(Arc::from),
                        event,
                    },
                );
            }
        }
        at = end + 1;
    }
    Ok(st
        .tasks
        .get_mut(task)
        .map(|t| std::mem::take(&mut Arc::make_mut(t).output))
        .unwrap_or_default())
}
