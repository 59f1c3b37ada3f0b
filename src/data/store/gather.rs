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
    let awaited = |op: &WriteOp| {
        matches!(
            op,
            WriteOp::Flush(_) | WriteOp::Committed(_) | WriteOp::ReserveIds { .. }
        )
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    fn flush() -> WriteOp {
        let (tx, _rx) = channel();
        WriteOp::Flush(tx)
    }

    /// An operation nobody waits on.
    fn plain() -> WriteOp {
        WriteOp::RunStatus {
            run_id: "R".into(),
            status: "running".into(),
            finished_at: None,
        }
    }

    /// A last commit whose gap ends `ms` from now (the gap itself is fixed).
    fn gap_ending_in(ms: u64) -> Option<Instant> {
        Some(Instant::now() + Duration::from_millis(ms) - COMMIT_GAP)
    }

    #[test]
    fn small_batches_wait_out_the_gap_and_gather_what_comes_meanwhile() {
        let (tx, rx) = channel();
        tx.send(plain()).expect("send");
        let last = gap_ending_in(60);
        let sender = std::thread::spawn(move || {
            let _ = tx.send(plain());
            // Held open past the gap, so the wait ends by time, not by a closed queue.
            std::thread::sleep(Duration::from_millis(300));
        });
        let mut batch = Vec::new();
        assert_eq!(gather(&rx, &mut batch, None, last), Gathered::Batch);
        let end = last.map(|t| t + COMMIT_GAP).expect("set");
        assert!(Instant::now() >= end, "it waited out the gap");
        assert_eq!(batch.len(), 2, "the one sent during the gap joined");
        sender.join().expect("sender");
    }

    #[test]
    fn a_flush_a_full_batch_or_no_commit_yet_commit_at_once_and_a_closed_queue_ends() {
        // A gap of ten seconds: a batch that waited it out would take that long.
        let at_once = |ops: Vec<WriteOp>, last: Option<Instant>| {
            let (tx, rx) = channel();
            for op in ops {
                tx.send(op).expect("send");
            }
            let mut batch = Vec::new();
            let started = Instant::now();
            gather(&rx, &mut batch, None, last);
            let waited = started.elapsed();
            drop(tx);
            (batch.len(), waited)
        };
        let far = Duration::from_secs(5);
        let (n, waited) = at_once(vec![plain(), flush()], gap_ending_in(10_000));
        assert_eq!(n, 2);
        assert!(waited < far, "a flush is waited on: {waited:?}");
        let (n, waited) = at_once(
            (0..ENOUGH).map(|_| plain()).collect(),
            gap_ending_in(10_000),
        );
        assert_eq!(n, ENOUGH);
        assert!(waited < far, "enough to commit: {waited:?}");
        let (_, waited) = at_once(vec![plain()], None);
        assert!(waited < far, "no commit yet: nothing to keep a gap from");
        // The senders gone mid-gap: what was gathered commits, then the queue is closed.
        let (tx, rx) = channel();
        tx.send(plain()).expect("send");
        drop(tx);
        let mut batch = Vec::new();
        let started = Instant::now();
        assert_eq!(
            gather(&rx, &mut batch, None, gap_ending_in(10_000)),
            Gathered::Batch
        );
        assert!(started.elapsed() < far);
        assert_eq!(batch.len(), 1);
        batch.clear();
        assert_eq!(gather(&rx, &mut batch, None, None), Gathered::Closed);
    }
}
