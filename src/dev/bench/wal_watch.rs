//! Watching a benchmark run's write-ahead log: the largest size its file reached (sampled
//! every [`SAMPLE_EVERY`]), and optionally a follower beside the run that reads the new
//! events every [`crate::data::replay::player::FOLLOW_EVERY`], as `browse` or `log --follow`
//! does, so the figures show the log stays bounded with a reader there too.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Interval between two looks at the log file's size.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(5);

/// Most events the follower reads in one statement (as `log --follow` does).
const FOLLOW_PAGE: u64 = 4_096;

/// What the watch saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalFigures {
    /// Largest size of the `-wal` file, bytes.
    pub peak_bytes: u64,
    /// Events the follower read (when there was one).
    pub followed_events: Option<u64>,
}

/// A running watch; [`WalWatch::stop`] ends it.
pub struct WalWatch {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    followed: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
    follow: bool,
}

impl WalWatch {
    /// Starts watching the database at `db` (whose run is `run_id`), with a follower
    /// when `follow` is set.
    pub fn start(db: &Path, run_id: &str, follow: bool) -> WalWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let followed = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::new();
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        {
            let (stop, peak) = (stop.clone(), peak.clone());
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(m) = std::fs::metadata(&wal) {
                        peak.fetch_max(m.len(), Ordering::Relaxed);
                    }
                    std::thread::sleep(SAMPLE_EVERY);
                }
            }));
        }
        if follow {
            let (stop, followed) = (stop.clone(), followed.clone());
            let (db, run_id) = (db.to_path_buf(), run_id.to_string());
            threads.push(std::thread::spawn(move || {
                follower(&db, &run_id, &stop, &followed)
            }));
        }
        WalWatch {
            stop,
            peak,
            followed,
            threads,
            follow,
        }
    }

    /// Stops the watch and reports.
    pub fn stop(self) -> WalFigures {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
        WalFigures {
            peak_bytes: self.peak.load(Ordering::Relaxed),
            followed_events: self.follow.then(|| self.followed.load(Ordering::Relaxed)),
        }
    }
}

/// Reads the run's new events, a page per statement, until told to stop.
fn follower(db: &Path, run_id: &str, stop: &AtomicBool, followed: &AtomicU64) {
    let mut store = None;
    let mut next = 1u64;
    while !stop.load(Ordering::Relaxed) {
        if store.is_none() {
            store = crate::data::store::Store::open(db).ok();
        }
        if let Some(s) = &store {
            loop {
                match s.events(run_id, next, next + FOLLOW_PAGE - 1) {
                    Ok(page) if !page.is_empty() => {
                        next += page.len() as u64;
                        followed.fetch_add(page.len() as u64, Ordering::Relaxed);
                    }
                    _ => break,
                }
                if stop.load(Ordering::Relaxed) {
                    return;
                }
            }
        }
        std::thread::sleep(crate::data::replay::player::FOLLOW_EVERY);
    }
}
