//! A run's stored snapshots against its log: the state a reader opens from them must be
//! the state a fold of the whole log gives.

use std::path::Path;
use std::sync::Arc;

use plexus::data::replay::feed::fold_range;
use plexus::data::replay::log::replay_state;
use plexus::data::replay::stored::open_from_snapshot;
use plexus::data::store::Store;
use plexus::model::state::snapshot::{decode, normal_form};
use plexus::model::state::RunState;

/// The state of `run` folded from its whole log, in a snapshot's normal form.
pub fn folded_from_log(store: &Store, run: &str) -> RunState {
    let run: Arc<str> = Arc::from(run);
    let (last, _) = store.last_event(&run).expect("last event");
    let mut st = replay_state(&run);
    fold_range(store, &run, &mut st, 1, last).expect("fold the log");
    normal_form(&mut st);
    st
}

/// Asserts that `run` has a stored snapshot (at its last event when `at_end`: the
/// process that ran it stored its end) and that the state opened from it equals a fold
/// of the whole log.
pub fn assert_snapshot_matches_log(db: &Path, run: &str, at_end: bool) {
    let store = Store::open(db).expect("open the database");
    let (last, _) = store.last_event(run).expect("last event");
    let snap = store
        .snapshot_before(run, last)
        .expect("read the snapshots")
        .unwrap_or_else(|| panic!("run {run} has no stored snapshot"));
    if at_end {
        assert_eq!(snap.seq, last, "the snapshot is at the run's last event");
    }
    decode(&snap.data).expect("the stored snapshot decodes");
    let id: Arc<str> = Arc::from(run);
    let opened = open_from_snapshot(&store, &id, last, 0, &|| Ok(()))
        .expect("open from the snapshot")
        .expect("a stored snapshot is used");
    assert!(opened.refused.is_empty(), "{:?}", opened.refused);
    assert_eq!(opened.snapshot, Some(snap.seq));
    let mut state = opened.state;
    normal_form(&mut state);
    let want = folded_from_log(&store, run);
    assert!(
        state == want,
        "run {run}: the state opened from the snapshot at event {} differs from the log's fold: {}",
        snap.seq,
        first_difference(&state, &want)
    );
}

/// Where two states first differ, for the failure message.
pub fn first_difference(a: &RunState, b: &RunState) -> String {
    for (i, (x, y)) in a.tasks.iter().zip(&b.tasks).enumerate() {
        if x != y {
            return format!("task {i}:\n{x:?}\n---\n{y:?}");
        }
    }
    let mut a = a.clone();
    let mut b = b.clone();
    a.tasks.clear();
    b.tasks.clear();
    format!("{a:?}\n---\n{b:?}")
}
