//! What a resumed task carries over from its run before the resume: its retries so far
//! (their count per error and the adjustments they made) and the backoff still owed to a
//! retry that was scheduled but never started.

use super::attempt::Adjust;
use super::run_ctx::RunCtx;

/// Replays task `idx`'s (batch `batch`'s) retries from the log into `adjust` and
/// `retries`; returns the milliseconds still owed to a retry whose attempt (the one after
/// `first_attempt`) never started, counted from when it was set.
pub(super) fn retries(
    ctx: &RunCtx,
    idx: usize,
    batch: Option<u32>,
    first_attempt: u32,
    adjust: &mut Adjust,
    retries: &mut rustc_hash::FxHashMap<&'static str, u32>,
) -> Option<u64> {
    let history = ctx.take_retry_history(idx, batch);
    for r in &history {
        *retries.entry(key(r)).or_insert(0) += 1;
        adjust.replay(ctx, r);
    }
    // A 429's Retry-After or a rate limit is still owed.
    history
        .last()
        .filter(|r| r.next_attempt == first_attempt + 1)
        .and_then(|r| {
            let nth = retries.get(key(r)).copied().unwrap_or(1);
            ctx.owed_backoff_ms(idx, batch, r, nth)
        })
}

/// The retry counter a scheduled retry counts against.
fn key(r: &crate::model::event::RetryScheduled) -> &'static str {
    if r.is_transient() {
        "transient"
    } else {
        r.error_code.as_str()
    }
}
