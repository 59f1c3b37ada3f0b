//! Wall-clock stamps at one-second resolution, formatted once per second per thread.
//!
//! Every invocation id and every stored row carries a stamp to the second; formatting
//! it with chrono for each of them cost more than the rest of building the id. A
//! thread-local cache keeps the last second's text.

use std::cell::RefCell;

use chrono::{DateTime, SecondsFormat, Utc};

/// The last second formatted on this thread, in both formats.
struct Cached {
    secs: i64,
    rfc3339: String,
    compact: String,
}

thread_local! {
    static CACHE: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// Runs `f` on the cached stamps of `at`'s second, formatting them if the second changed.
fn with_stamps<R>(at: DateTime<Utc>, f: impl FnOnce(&Cached) -> R) -> R {
    let secs = at.timestamp();
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|k| k.secs != secs) {
            *c = Some(Cached {
                secs,
                rfc3339: at.to_rfc3339_opts(SecondsFormat::Secs, true),
                compact: at.format("%Y%m%d_%H%M%S").to_string(),
            });
        }
        f(c.as_ref().expect("filled above"))
    })
}

/// `at` in RFC 3339, UTC, to the second (`2026-11-26T07:50:15Z`).
pub fn rfc3339(at: DateTime<Utc>) -> String {
    with_stamps(at, |k| k.rfc3339.clone())
}

/// The current time in RFC 3339, UTC, to the second.
pub fn now_rfc3339() -> String {
    rfc3339(Utc::now())
}

/// Appends `at` as `YYYYMMDD_HHMMSS` (the stamp of seed 001 §9.1 invocation ids) to `out`.
pub fn push_compact(at: DateTime<Utc>, out: &mut String) {
    with_stamps(at, |k| out.push_str(&k.compact));
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn stamps_match_chrono_across_second_changes() {
        for secs in [0i64, 1, 59, 60, 1_795_679_415, 1_795_679_416, 1_795_679_415] {
            let at = Utc
                .timestamp_opt(secs, 123_000_000)
                .single()
                .expect("valid");
            assert_eq!(rfc3339(at), at.to_rfc3339_opts(SecondsFormat::Secs, true));
            let mut s = String::from("x");
            push_compact(at, &mut s);
            assert_eq!(s, format!("x{}", at.format("%Y%m%d_%H%M%S")));
        }
    }
}
