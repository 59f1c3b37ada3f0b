//! `--since`: where a filtered log starts — an RFC 3339 time, a time of day, a
//! duration from the run's start, or an event number.

use chrono::{DateTime, NaiveDateTime, NaiveTime, TimeZone, Utc};
use color_eyre::eyre::{eyre, Result};

/// Where the events kept by `--since` start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Events numbered `N` and after (`#N`).
    Seq(u64),
    /// Events stamped at this time or later (milliseconds since the Unix epoch, as
    /// the log stores them).
    Ms(i64),
}

impl Since {
    /// Whether an event numbered `seq`, stamped `ts`, is kept.
    pub fn keeps(self, seq: u64, ts: i64) -> bool {
        match self {
            Since::Seq(n) => seq >= n,
            Since::Ms(ms) => ts >= ms,
        }
    }

    /// The first event number worth reading.
    pub fn first_seq(self) -> u64 {
        match self {
            Since::Seq(n) => n,
            Since::Ms(_) => 1,
        }
    }
}

/// What `--since` accepts, for error messages.
const FORMS: &str = "use an RFC 3339 time (2026-02-03T10:15:00Z; without an offset it is UTC), \
a time of day HH:MM[:SS] (UTC, on the run's start date), a duration from the run's start \
(+90s, +2m, +1h30m, +250ms) or an event number (#120)";

/// Parses a `--since` value. `start` gives the run's start (milliseconds since the
/// epoch, UTC); it is asked only for the forms that need it.
pub fn parse(text: &str, start: impl FnOnce() -> Result<i64>) -> Result<Since> {
    let t = text.trim();
    let bad = |why: &str| eyre!("--since {text:?}: {why}; {FORMS}");
    if t.is_empty() {
        return Err(bad("no time given"));
    }
    if let Some(n) = t.strip_prefix('#') {
        return match n.parse::<u64>() {
            Ok(0) => Err(bad("event numbers start at 1")),
            Ok(n) => Ok(Since::Seq(n)),
            Err(_) => Err(bad("not an event number")),
        };
    }
    if let Some(d) = t.strip_prefix('+') {
        let ms = duration_ms(d).ok_or_else(|| bad("not a duration"))?;
        return Ok(Since::Ms(start()?.saturating_add(ms)));
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(t) {
        return Ok(Since::Ms(at.timestamp_millis()));
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(at) = NaiveDateTime::parse_from_str(t, f) {
            return Ok(Since::Ms(at.and_utc().timestamp_millis()));
        }
    }
    let of_day = ["%H:%M:%S%.f", "%H:%M"]
        .iter()
        .find_map(|f| NaiveTime::parse_from_str(t, f).ok());
    if let Some(time) = of_day {
        let start = start()?;
        let day = Utc
            .timestamp_millis_opt(start)
            .single()
            .ok_or_else(|| eyre!("the run's start time {start} ms is out of range"))?
            .date_naive();
        return Ok(Since::Ms(day.and_time(time).and_utc().timestamp_millis()));
    }
    Err(bad("not a time"))
}

/// `1h30m`, `90s`, `2m`, `250ms`, `1.5s` in milliseconds; `None` when it is not one.
fn duration_ms(text: &str) -> Option<i64> {
    let mut rest = text;
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit_ms, len) = if rest.starts_with("ms") {
            (1.0, 2)
        } else if rest.starts_with('h') {
            (3_600_000.0, 1)
        } else if rest.starts_with('m') {
            (60_000.0, 1)
        } else if rest.starts_with('s') {
            (1_000.0, 1)
        } else {
            return None;
        };
        rest = &rest[len..];
        total += value * unit_ms;
    }
    (total.is_finite() && total < i64::MAX as f64).then_some(total.round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: i64 = 1_780_000_000_123; // 2026-05-28T20:26:40.123Z

    fn p(text: &str) -> Result<Since> {
        parse(text, || Ok(START))
    }

    #[test]
    fn every_form_parses() {
        assert_eq!(p("#12").ok(), Some(Since::Seq(12)));
        assert_eq!(p("+90s").ok(), Some(Since::Ms(START + 90_000)));
        assert_eq!(p("+2m").ok(), Some(Since::Ms(START + 120_000)));
        assert_eq!(p("+1h30m").ok(), Some(Since::Ms(START + 5_400_000)));
        assert_eq!(p("+250ms").ok(), Some(Since::Ms(START + 250)));
        assert_eq!(p("+1.5s").ok(), Some(Since::Ms(START + 1_500)));
        let at = DateTime::parse_from_rfc3339("2026-05-28T20:30:00Z")
            .expect("time")
            .timestamp_millis();
        assert_eq!(p("2026-05-28T20:30:00Z").ok(), Some(Since::Ms(at)));
        assert_eq!(p("2026-05-28T22:30:00+02:00").ok(), Some(Since::Ms(at)));
        assert_eq!(p("2026-05-28T20:30:00").ok(), Some(Since::Ms(at)));
        assert_eq!(p("20:30").ok(), Some(Since::Ms(at)));
        assert_eq!(p("20:30:00").ok(), Some(Since::Ms(at)));
        assert_eq!(p("20:30:00.5").ok(), Some(Since::Ms(at + 500)));
    }

    #[test]
    fn bad_values_name_the_option() {
        for bad in ["", "yesterday", "+5", "+", "+1x", "#0", "#x", "25:00", "+m"] {
            let e = p(bad).expect_err(bad).to_string();
            assert!(e.starts_with("--since"), "{bad}: {e}");
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_start_is_read_only_when_needed() {
        let never = || -> Result<i64> { panic!("the start is not needed") };
        assert_eq!(parse("#3", never).ok(), Some(Since::Seq(3)));
        assert!(parse("2026-05-28T20:30:00Z", never).is_ok());
    }
}
