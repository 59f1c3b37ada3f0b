//! Gathering the writer's next batch: the operations queued, and while operations keep
//! coming, those that arrive within the least gap between two commits.

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use super::ops::WriteOp;

/// Most operations applied in one transaction.
pub(super) const MAX_BATCH: usize = 8192;

/// Least time between two commits while operations keep coming. Commits closer together
/// each write the same b-tree pages into the WAL again and wait for a sync of their
/// own; the operations that arrive within the gap go into one commit instead. An event
/// is committed (and handed to its consumers) at most this much later for it.
pub const COMMIT_GAP: Duration = Duration::from_millis(4);

/// A batch this large commits without waiting out the gap: it already shares its
/// commit widely, and a writer that is behind is not held back.
const ENOUGH: usize = 256;

/// How gathering ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Gathered {
    /// A batch to commit (empty when `wait` ran out with nothing queued: a heartbeat).
    Batch,
    /// Every sender is gone and nothing is left: the writer stops.
    Closed,
}

/// Waits for the next operation (at most `wait`, if given), then adds every operation
/// already queued and those that arrive before the gap since `last_commit` ends.
pub(super) fn gather(
    rx: &Receiver<WriteOp>,
    batch: &mut Vec<WriteOp>,
    wait: Option<Duration>,
    last_commit: Option<Instant>,
) -> Gathered {
    let first = match wait {
        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        Some(w) => rx.recv_timeout(w),
    };
    match first {
        Ok(op) => batch.push(op),
        Err(RecvTimeoutError::Disconnected) => return Gathered::Closed,
        Err(RecvTimeoutError::Timeout) => {}
    }
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(op) => batch.push(op),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
        }
    }
    if !batch.is_empty() {
        fill_gap(rx, batch, last_commit);
    }
    Gathered::Batch
}

/// Adds to `batch` the operations that arrive until [`COMMIT_GAP`] has passed since the
/// last commit (or the batch has [`ENOUGH`]). A writer that last committed longer ago
/// commits at once, and so does a batch someone waits on (a flush or an id reservation).
fn fill_gap(rx: &Receiver<WriteOp>, batch: &mut Vec<WriteOp>, last_commit: Option<Instant>) {
    let Some(gap_end) = last_commit.map(|t| t + COMMIT_GAP) else {
        return;
    };
    let awaited = |op: &WriteOp| matches!(op, WriteOp::Flush(_) | WriteOp::ReserveIds { .. });
    if batch.iter().any(awaited) {
        return;
    }
    while batch.len() < ENOUGH {
        let Some(left) = gap_end.checked_duration_since(Instant::now()) else {
            return;
        };
        match rx.recv_timeout(left) {
            Ok(op) => {
                let stop = awaited(&op);
                batch.push(op);
                if stop {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}
