//! `get_now` and `calculate_date`: the time by the context's clock in an IANA time zone,
//! and date arithmetic (days, weeks, months, the next or previous weekday).

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, SecondsFormat, Weekday};
use chrono_tz::Tz;
use serde_json::{json, Value};

use super::args::{int_arg, str_arg};
use super::context::ToolContext;
use super::error::{ToolError, ToolErrorCode};
use super::tool::{Tool, ToolData, ToolFuture};

/// Largest shift in days (about 2,700 years) — beyond it a date is surely a mistake.
pub const MAX_DAYS: i64 = 1_000_000;

/// The time zone named `name` (IANA, e.g. `Asia/Shanghai`; `UTC` when absent).
pub fn parse_zone(name: Option<&str>) -> Result<Tz, ToolError> {
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("UTC");
    name.parse::<Tz>().map_err(|_| {
        ToolError::invalid(
            ToolErrorCode::InvalidTimeZone,
            format!(
                "`{}` is not an IANA time zone name (e.g. UTC, Europe/Paris, America/New_York, Asia/Shanghai)",
                crate::base::text::cut::cut_chars(name, 100)
            ),
        )
    })
}

/// The English name of a weekday.
pub fn weekday_name(w: Weekday) -> &'static str {
    match w {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

fn zone_schema() -> Value {
    json!({"type": "string", "maxLength": 100,
           "description": "IANA time zone, e.g. Asia/Shanghai or America/New_York (default UTC)"})
}

/// The current time in a time zone.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetNow;

impl Tool for GetNow {
    fn name(&self) -> &str {
        "get_now"
    }

    fn description(&self) -> &str {
        "The current date and time in an IANA time zone (default UTC): ISO 8601 with the UTC \
         offset, the weekday and the ISO week."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"timezone": zone_schema()},
            "additionalProperties": false
        })
    }

    fn is_idempotent(&self, _args: &Value) -> bool {
        false
    }

    fn run<'a>(&'a self, ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a> {
        let out = now(ctx, args);
        Box::pin(std::future::ready(out))
    }
}

fn now(ctx: &ToolContext, args: &Value) -> Result<ToolData, ToolError> {
    let tz = parse_zone(str_arg(args, "timezone"))?;
    let t = ctx.clock.now().with_timezone(&tz);
    let iso = t.to_rfc3339_opts(SecondsFormat::Secs, false);
    let weekday = weekday_name(t.weekday());
    let week = t.iso_week();
    let data = json!({
        "timezone": tz.name(),
        "now": t.format("%Y-%m-%dT%H:%M:%S").to_string(),
        "datetime": iso,
        "date": t.format("%Y-%m-%d").to_string(),
        "time": t.format("%H:%M:%S").to_string(),
        "weekday": weekday,
        "utc_offset": t.format("%:z").to_string(),
        "abbreviation": t.format("%Z").to_string(),
        "iso_week": format!("{}-W{:02}", week.year(), week.week()),
        "unix_seconds": t.timestamp(),
    });
    let brief = format!("Now: {iso} ({weekday}, {}).", tz.name());
    let standard = format!(
        "{brief}\nDate: {}\nTime: {} ({}, UTC{})\nISO week: {}",
        data["date"].as_str().unwrap_or_default(),
        data["time"].as_str().unwrap_or_default(),
        data["abbreviation"].as_str().unwrap_or_default(),
        data["utc_offset"].as_str().unwrap_or_default(),
        data["iso_week"].as_str().unwrap_or_default(),
    );
    Ok(ToolData::json(data, brief, standard))
}

/// Date arithmetic from a base date.
#[derive(Debug, Clone, Copy, Default)]
pub struct CalculateDate;

impl Tool for CalculateDate {
    fn name(&self) -> &str {
        "calculate_date"
    }

    fn description(&self) -> &str {
        "Date arithmetic: from base_date (YYYY-MM-DD or an ISO 8601 date-time; default today in \
         the time zone) add months, then weeks, then days (negative values go back), then \
         optionally move to the next (strictly later) or previous (strictly earlier) given \
         weekday. Returns the date, its weekday and ISO week. Adding months to the 31st gives \
         the last day of a shorter month."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "base_date": {"type": "string", "maxLength": 64,
                              "description": "Start date, YYYY-MM-DD or ISO 8601 date-time (default: today)"},
                "timezone": zone_schema(),
                "days": {"type": "integer", "minimum": -MAX_DAYS, "maximum": MAX_DAYS},
                "weeks": {"type": "integer", "minimum": -MAX_DAYS / 7, "maximum": MAX_DAYS / 7},
                "months": {"type": "integer", "minimum": -MAX_DAYS / 28, "maximum": MAX_DAYS / 28},
                "offset": {
                    "type": "object",
                    "description": "The shift as one object ({\"weeks\": 2, \"days\": 3}), instead of or added to the fields above",
                    "properties": {
                        "days": {"type": "integer", "minimum": -MAX_DAYS, "maximum": MAX_DAYS},
                        "weeks": {"type": "integer", "minimum": -MAX_DAYS / 7, "maximum": MAX_DAYS / 7},
                        "months": {"type": "integer", "minimum": -MAX_DAYS / 28, "maximum": MAX_DAYS / 28}
                    },
                    "additionalProperties": false
                },
                "weekday": {"type": "string", "maxLength": 16,
                            "description": "Move to this weekday (monday … sunday)"},
                "direction": {"type": "string", "enum": ["next", "previous"],
                              "description": "With weekday: the next (default) or previous one"}
            },
            "additionalProperties": false
        })
    }

    /// Idempotent only with an explicit base date: "today" changes.
    fn is_idempotent(&self, args: &Value) -> bool {
        str_arg(args, "base_date").is_some()
    }

    fn run<'a>(&'a self, ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a> {
        let out = calculate(ctx, args);
        Box::pin(std::future::ready(out))
    }
}

fn invalid_date(message: String) -> ToolError {
    ToolError::invalid(ToolErrorCode::InvalidDate, message)
}

/// The base date: `YYYY-MM-DD` as written, a date-time as its date in `tz`, or today
/// in `tz` by the context's clock.
fn base_date(ctx: &ToolContext, tz: Tz, given: Option<&str>) -> Result<NaiveDate, ToolError> {
    let Some(s) = given.map(str::trim) else {
        return Ok(ctx.clock.now().with_timezone(&tz).date_naive());
    };
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&tz).date_naive());
    }
    Err(invalid_date(format!(
        "`{}` is not a valid date (YYYY-MM-DD, e.g. 2024-02-29, or an ISO 8601 date-time with offset)",
        crate::base::text::cut::cut_chars(s, 64)
    )))
}

fn parse_weekday(s: &str) -> Result<Weekday, ToolError> {
    s.trim().parse::<Weekday>().map_err(|_| {
        ToolError::arguments(format!(
            "`{}` is not a weekday (monday, tuesday, … sunday)",
            crate::base::text::cut::cut_chars(s, 16)
        ))
    })
}

/// Shifts `d` by `n` days (negative: back).
fn add_days(d: NaiveDate, n: i64) -> Option<NaiveDate> {
    if n >= 0 {
        d.checked_add_days(Days::new(n as u64))
    } else {
        d.checked_sub_days(Days::new(n.unsigned_abs()))
    }
}

/// Shifts `d` by `n` months (negative: back), clamping the day to the month's last.
fn add_months(d: NaiveDate, n: i64) -> Option<NaiveDate> {
    let m = Months::new(u32::try_from(n.unsigned_abs()).ok()?);
    if n >= 0 {
        d.checked_add_months(m)
    } else {
        d.checked_sub_months(m)
    }
}

fn calculate(ctx: &ToolContext, args: &Value) -> Result<ToolData, ToolError> {
    let tz = parse_zone(str_arg(args, "timezone"))?;
    let base = base_date(ctx, tz, str_arg(args, "base_date"))?;
    let offset = args.get("offset").cloned().unwrap_or(Value::Null);
    let both = |name: &str| {
        int_arg(args, name)
            .unwrap_or(0)
            .saturating_add(int_arg(&offset, name).unwrap_or(0))
    };
    let (months, weeks, days) = (both("months"), both("weeks"), both("days"));
    let out_of_range = || {
        invalid_date(format!(
            "the result is out of the calendar's range (from {base})"
        ))
    };
    let mut date = add_months(base, months).ok_or_else(out_of_range)?;
    date =
        add_days(date, weeks.checked_mul(7).ok_or_else(out_of_range)?).ok_or_else(out_of_range)?;
    date = add_days(date, days).ok_or_else(out_of_range)?;
    if let Some(w) = str_arg(args, "weekday") {
        let want = parse_weekday(w)?;
        let previous = str_arg(args, "direction") == Some("previous");
        let step = if previous { -1 } else { 1 };
        // At most 7 steps: strictly after (or before) the date reached so far.
        for _ in 0..7 {
            date = add_days(date, step).ok_or_else(out_of_range)?;
            if date.weekday() == want {
                break;
            }
        }
    }
    let weekday = weekday_name(date.weekday());
    let week = date.iso_week();
    let iso_week = format!("{}-W{:02}", week.year(), week.week());
    let shift = (date - base).num_days();
    let data = json!({
        "base_date": base.to_string(),
        "date": date.to_string(),
        "result_date": date.to_string(),
        "weekday": weekday,
        "iso_week": iso_week,
        "iso_year": week.year(),
        "week_number": week.week(),
        "day_of_year": date.ordinal(),
        "days_from_base": shift,
        "timezone": tz.name(),
    });
    let brief = format!("{date} ({weekday}, ISO week {iso_week}).");
    let standard = format!(
        "{brief}\nFrom {base} ({}): {shift:+} days. Day {} of {}.",
        weekday_name(base.weekday()),
        date.ordinal(),
        date.year()
    );
    Ok(ToolData::json(data, brief, standard))
}
