//! The writer's counters: events and commits, how long commits waited, the WAL's size.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Counters of the writer, readable while it runs.
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Events committed.
    pub events: AtomicU64,
    /// Transactions committed.
    pub batches: AtomicU64,
    /// Operations queued but not yet committed.
    pub backlog: AtomicUsize,
    /// Histogram of event commit latency (ms after the event's timestamp), 0..=1000.
    pub latency_ms: Mutex<Vec<u64>>,
    /// Longest time, µs, one batch took to be written into its transaction.
    pub longest_write_us: AtomicU64,
    /// Longest time, µs, one commit took (writing the WAL and syncing it).
    pub longest_commit_us: AtomicU64,
    /// Most frames the log held after a commit.
    pub wal_frames_peak: AtomicU64,
    /// Checkpoints the writer completed itself to keep the log bounded.
    pub wal_checkpoints: AtomicU64,
    /// Of those, the ones a reader kept from copying every frame.
    pub wal_checkpoints_short: AtomicU64,
    /// Time the writer spent in its own checkpoints, µs.
    pub wal_checkpoint_us: AtomicU64,
    /// Frames past which the writer completes a checkpoint (0: the default,
    /// [`super::wal::RESTART_FRAMES`]).
    pub wal_restart_frames: AtomicU64,
}

impl WriterStats {
    /// Frames past which the writer completes a checkpoint.
    pub fn restart_frames(&self) -> u32 {
        match self.wal_restart_frames.load(Ordering::Relaxed) {
            0 => super::wal::RESTART_FRAMES,
            n => u32::try_from(n).unwrap_or(u32::MAX),
        }
    }

    /// Latency (ms) at quantile `q` in [0, 1] of committed events.
    pub fn latency_quantile(&self, q: f64) -> u64 {
        let h = self
            .latency_ms
            .lock()
            .map(|h| h.clone())
            .unwrap_or_default();
        let total: u64 = h.iter().sum();
        if total == 0 {
            return 0;
        }
        let target = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (ms, n) in h.iter().enumerate() {
            acc += n;
            if acc >= target {
                return ms as u64;
            }
        }
        h.len() as u64
    }
}
