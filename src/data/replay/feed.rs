//! Reading a run's log as envelopes, a page (an id range) at a time: never the whole
//! log at once.

use std::sync::Arc;

use crate::data::store::{Store, StoreError};
use crate::model::event::Envelope;
use crate::model::state::{reduce, RunState};

/// Events read per query.
pub const PAGE: u64 = 4096;

/// Events `from..=to` of `run` as envelopes, in order. Events this build cannot decode
/// are skipped (and logged): they still count in the numbering.
pub fn page(
    store: &Store,
    run: &Arc<str>,
    from: u64,
    to: u64,
) -> Result<Vec<Envelope>, StoreError> {
    let rows = store.events(run, from, to)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        match r.event {
            Ok(event) => out.push(Envelope {
                run_id: run.clone(),
                seq: r.seq,
                ts: r.ts,
                task_id: r.task_id.map(Arc::from),
                invocation_id: r.invocation_id.map(Arc::from),
                agent: r.agent.map(Arc::from),
                event,
            }),
            Err(e) => tracing::warn!("run {run}: event {} skipped: {e}", r.seq),
        }
    }
    Ok(out)
}

/// A fresh state for replaying `run` (as a live run's starts).
pub fn replay_state(run: &str) -> RunState {
    let mut st = RunState::new();
    st.run_id = run.to_string();
    st
}

/// Folds events `from..=to` of `run` into `st`, a page at a time.
pub fn fold_range(
    store: &Store,
    run: &Arc<str>,
    st: &mut RunState,
    from: u64,
    to: u64,
) -> Result<(), StoreError> {
    let mut at = from;
    while at <= to {
        let end = to.min(at.saturating_add(PAGE - 1));
        for env in page(store, run, at, end)? {
            reduce(st, &env);
        }
        at = end + 1;
    }
    Ok(())
}
