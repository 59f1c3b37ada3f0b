//! Run ownership: a run being executed is owned by exactly one live process, recorded as
//! a lease row (`run_leases`: process id, host, start time, heartbeat). A process takes
//! the lease in one `BEGIN IMMEDIATE` transaction before it writes anything of the run;
//! the store writer refreshes the heartbeat and gives the lease back when it stops. A
//! lease whose process is gone (a dead pid on this host, or a heartbeat older than
//! [`STALE_AFTER`]) may be taken over; a live one may not.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};

use super::{open_connection, StoreError};

/// How often the owner refreshes its heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);

/// A heartbeat older than this means the owner is gone, whatever its pid says (a
/// stopped process, another host, a reused pid).
pub const STALE_AFTER: Duration = Duration::from_secs(30);

/// Who holds (or held) a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// When the lease was taken (RFC 3339).
    pub started_at: String,
    /// Last heartbeat, ms since the Unix epoch.
    pub heartbeat_ms: i64,
}

impl Owner {
    /// "pid 123 on host h (owner since …, last heartbeat 1.2 s ago)".
    pub fn describe(&self, now_ms: i64) -> String {
        format!(
            "pid {} on host {} (owner since {}, last heartbeat {:.1} s ago)",
            self.pid,
            crate::base::text::sanitize::sanitize(&self.host),
            self.started_at,
            (now_ms - self.heartbeat_ms).max(0) as f64 / 1000.0
        )
    }
}

/// Why a lease could be taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gone {
    /// The owner's process no longer exists on this host.
    ProcessGone,
    /// The owner has not refreshed its heartbeat within [`STALE_AFTER`].
    HeartbeatStale,
}

impl Gone {
    /// The reason as the log records it.
    pub fn as_str(self) -> &'static str {
        match self {
            Gone::ProcessGone => "process_gone",
            Gone::HeartbeatStale => "heartbeat_stale",
        }
    }
}

/// A lease this process holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The run.
    pub run_id: String,
    /// Random number naming this holder (a heartbeat that finds another one has lost).
    pub token: i64,
    /// The previous owner, when the lease was taken over from a process that is gone.
    pub taken_over: Option<(Owner, Gone)>,
}

/// A lease this process took and has not handed to a store writer yet: given back when
/// dropped, so a command that fails before its run starts leaves no owner behind.
#[derive(Debug)]
pub struct HeldLease {
    db: std::path::PathBuf,
    lease: Option<Lease>,
}

impl HeldLease {
    /// Takes the lease of `run_id` in the database at `db` (see [`acquire`]).
    pub fn acquire(db: &Path, run_id: &str) -> Result<HeldLease, StoreError> {
        Ok(HeldLease {
            db: db.to_path_buf(),
            lease: Some(acquire(db, run_id)?),
        })
    }

    /// The lease.
    pub fn lease(&self) -> Option<&Lease> {
        self.lease.as_ref()
    }

    /// Hands the lease to the store writer that now holds it (it refreshes the heartbeat
    /// and gives it back when it stops).
    pub fn handed_over(mut self) -> Option<Lease> {
        self.lease.take()
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            if let Err(e) = release_at(&self.db, &lease) {
                tracing::warn!("cannot give back the lease of {}: {e}", lease.run_id);
            }
        }
    }
}

/// This host's name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether process `pid` exists on this host.
pub fn process_alive(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        let exists = match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
            Ok(()) => true,
            // It exists but belongs to someone else.
            Err(nix::errno::Errno::EPERM) => true,
            Err(_) => false,
        };
        // A process that died but was not reaped yet (a zombie) still answers.
        exists && !is_zombie(pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        true
    }
}

/// Whether `/proc` says process `pid` has ended and waits to be reaped.
#[cfg(target_os = "linux")]
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The state follows the command name, which is in parentheses and may hold
            // anything, so it is found after the last ')'.
            let rest = &stat[stat.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|s| s == "Z" || s == "X")
        })
        .unwrap_or(false)
}

/// Whether `owner` is gone, and why; `None` while it is alive.
pub fn gone(owner: &Owner, now_ms: i64) -> Option<Gone> {
    if owner.host == host_name() && !process_alive(owner.pid) {
        return Some(Gone::ProcessGone);
    }
    if now_ms - owner.heartbeat_ms > STALE_AFTER.as_millis() as i64 {
        return Some(Gone::HeartbeatStale);
    }
    None
}

/// The current owner of `run_id`, if any.
pub fn owner(conn: &Connection, run_id: &str) -> Result<Option<Owner>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT pid, host, started_at, heartbeat_ms FROM run_leases WHERE run_id = ?1",
            [run_id],
            |r| {
                Ok(Owner {
                    pid: r.get(0)?,
                    host: r.get(1)?,
                    started_at: r.get(2)?,
                    heartbeat_ms: r.get(3)?,
                })
            },
        )
        .optional()?)
}

/// Takes the lease of `run_id` for this process in the database at `path` (created and
/// migrated if needed). Refused with [`StoreError::Owned`] while a live process holds it.
pub fn acquire(path: &Path, run_id: &str) -> Result<Lease, StoreError> {
    let mut conn = open_connection(path)?;
    acquire_on(&mut conn, run_id)
}

/// [`acquire`] on an open connection.
pub fn acquire_on(conn: &mut Connection, run_id: &str) -> Result<Lease, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now_ms();
    let previous = owner(&tx, run_id)?;
    let taken_over = match previous {
        None => None,
        Some(o) => match gone(&o, now) {
            Some(why) => Some((o, why)),
            None => {
                return Err(StoreError::Owned {
                    run_id: run_id.to_string(),
                    owner: o.describe(now),
                })
            }
        },
    };
    let token = fastrand::i64(..);
    tx.execute(
        "INSERT OR REPLACE INTO run_leases (run_id, token, pid, host, started_at, heartbeat_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            run_id,
            token,
            std::process::id(),
            host_name(),
            crate::base::clock::now_rfc3339(),
            now
        ],
    )?;
    tx.commit()?;
    Ok(Lease {
        run_id: run_id.to_string(),
        token,
        taken_over,
    })
}

/// Refreshes the heartbeat of `lease`; [`StoreError::LeaseLost`] when another process
/// took the run over.
pub fn heartbeat(conn: &Connection, lease: &Lease) -> Result<(), StoreError> {
    let n = conn.execute(
        "UPDATE run_leases SET heartbeat_ms = ?3 WHERE run_id = ?1 AND token = ?2",
        params![lease.run_id, lease.token, now_ms()],
    )?;
    if n == 1 {
        return Ok(());
    }
    let now = now_ms();
    Err(StoreError::LeaseLost {
        run_id: lease.run_id.clone(),
        by: owner(conn, &lease.run_id)?
            .map(|o| o.describe(now))
            .unwrap_or_else(|| "nobody (the lease row was removed)".into()),
    })
}

/// Checks, without writing, that `lease` is still this process's; run inside each
/// batch's transaction so a process that lost its lease writes nothing more.
pub fn still_held(conn: &Connection, lease: &Lease) -> Result<(), StoreError> {
    let token: Option<i64> = conn
        .prepare_cached("SELECT token FROM run_leases WHERE run_id = ?1")?
        .query_row([&lease.run_id], |r| r.get(0))
        .optional()?;
    if token == Some(lease.token) {
        return Ok(());
    }
    let now = now_ms();
    Err(StoreError::LeaseLost {
        run_id: lease.run_id.clone(),
        by: owner(conn, &lease.run_id)?
            .map(|o| o.describe(now))
            .unwrap_or_else(|| "nobody (the lease row was removed)".into()),
    })
}

/// Gives the lease back (nothing happens when it was lost).
pub fn release(conn: &Connection, lease: &Lease) -> Result<(), StoreError> {
    conn.execute(
        "DELETE FROM run_leases WHERE run_id = ?1 AND token = ?2",
        params![lease.run_id, lease.token],
    )?;
    Ok(())
}

/// [`release`] on a connection of its own to the database at `path`.
pub fn release_at(path: &Path, lease: &Lease) -> Result<(), StoreError> {
    release(&open_connection(path)?, lease)
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
