//! How soon the allocator (mimalloc, set as the global allocator by the binary) gives
//! memory it no longer uses back to the system.
//!
//! mimalloc keeps freed memory for a while (its purge delay, 1,000 ms by default) so it
//! can be used again without asking the system. That suits a run's steady work, where
//! the same sizes come and go. The opening of a large run is different: the plan's text,
//! its parsed form and the announcement of every task are built and dropped one after
//! another within a second, and memory kept for a second after each stacked up into the
//! run's peak (about 20 MB on a 100,000-task run). So while a run opens, freed memory is
//! given back at once; once its opening is folded, the delay in force before applies again
//! (given back at once all the time cost about 10% of the CPU of a streamed call).
//!
//! A `MIMALLOC_PURGE_DELAY` (or its older name `MIMALLOC_RESET_DELAY`) in the
//! environment wins: nothing here changes it.

use std::sync::atomic::{AtomicI64, Ordering};

/// mimalloc's number for the purge delay option, which `libmimalloc-sys` does not name:
/// the one before the option it names next, as in mimalloc's header of the version the
/// lock file pins. The build checks it against the crate's number for that next
/// option, so a crate that renumbers its options fails the build.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const _: () = assert!(libmimalloc_sys::mi_option_use_numa_nodes - 1 == MI_OPTION_PURGE_DELAY);

/// The delay in force before the opening, restored once the run has opened (`-1`:
/// nothing to restore).
static BEFORE: AtomicI64 = AtomicI64::new(-1);

/// The environment variables mimalloc reads for the purge delay (its reader ignores
/// case; the second is the older name).
const ENV_NAMES: [&str; 2] = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"];

/// Gives freed memory back at once from now on (`plexus run` calls this before it
/// reads the plan), unless the environment sets the delay.
pub fn opening() {
    let set_by_env = std::env::vars_os().any(|(k, _)| {
        k.to_str()
            .is_some_and(|k| ENV_NAMES.iter().any(|n| n.eq_ignore_ascii_case(k)))
    });
    if set_by_env || BEFORE.load(Ordering::Relaxed) >= 0 {
        return;
    }
    // `c_long` is 64 bits here and 32 bits on some targets.
    #[allow(clippy::useless_conversion)]
    let before = i64::from(purge_delay(None));
    BEFORE.store(before.max(0), Ordering::Relaxed);
    purge_delay(Some(0));
}

/// The run has opened: the delay in force before [`opening`] applies again.
pub fn opened() {
    let before = BEFORE.swap(-1, Ordering::Relaxed);
    if before >= 0 {
        purge_delay(Some(before as std::ffi::c_long));
    }
}

/// Reads mimalloc's purge delay, or sets it to `to`; returns the value read (or set).
#[allow(unsafe_code)]
fn purge_delay(to: Option<std::ffi::c_long>) -> std::ffi::c_long {
    // SAFETY: `mi_option_get` and `mi_option_set` take an option number (checked above
    // against the crate's numbering) and read or store one value in mimalloc's option
    // table; any value is valid for the purge delay. The store is not atomic, but a
    // reader on another thread sees the old or the new delay, either of which is valid.
    // If mimalloc is not the allocator in use (the library's tests), the setting is
    // stored and never read.
    unsafe {
        match to {
            Some(ms) => {
                libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms);
                ms
            }
            None => libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY),
        }
    }
}
