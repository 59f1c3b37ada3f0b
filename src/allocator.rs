//! How soon the allocator (mimalloc, set as the global allocator by the binary) gives
//! memory it no longer uses back to the system.
//!
//! mimalloc keeps freed memory for a while (its purge delay, 1,000 ms by default) so it
//! can be used again without asking the system. That suits a run's steady work, where
//! the same sizes come and go. The opening of a large run is different: the plan's text,
//! its parsed form and the announcement of every task are built and dropped one after
//! another within a second, and memory kept for a second after each stacked up into the
//! run's peak (about 20 MB on a 100,000-task run). So while a run opens, freed memory is
//! given back at once; once its opening is folded, mimalloc's default applies again
//! (given back at once all the time cost about 10% of the CPU of a streamed call).
//!
//! A `MIMALLOC_PURGE_DELAY` in the environment wins: nothing here changes it.

use std::sync::atomic::{AtomicBool, Ordering};

/// mimalloc's number for the purge delay option, which `libmimalloc-sys` does not name:
/// the one before the option it names next (checked when building, so a renumbering
/// fails the build rather than setting another option).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const _: () = assert!(libmimalloc_sys::mi_option_use_numa_nodes - 1 == MI_OPTION_PURGE_DELAY);

/// mimalloc's own purge delay (milliseconds), restored once a run has opened.
const DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// Whether memory is currently given back at once (so the opening ends only once).
static EAGER: AtomicBool = AtomicBool::new(false);

/// Gives freed memory back at once from now on (`plexus run` calls this before it
/// reads the plan).
pub fn opening() {
    if set_purge_delay(0) {
        EAGER.store(true, Ordering::Relaxed);
    }
}

/// The run has opened: mimalloc's default delay applies again.
pub fn opened() {
    if EAGER.swap(false, Ordering::Relaxed) {
        set_purge_delay(DEFAULT_PURGE_DELAY_MS);
    }
}

/// Sets the purge delay unless the environment set it; whether it was set.
#[allow(unsafe_code)]
fn set_purge_delay(ms: std::ffi::c_long) -> bool {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return false;
    }
    // SAFETY: `mi_option_set` takes an option number and a value and only stores the
    // value in mimalloc's option table; any value is valid for the purge delay, and it
    // may be called at any time from any thread. If mimalloc is not the allocator in use
    // (the library's tests), the setting is stored and never read.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms) };
    true
}
