//! The time tools on a fixed clock: time zones across DST, weekdays, ISO weeks, date
//! arithmetic and its errors.

use chrono::{DateTime, Utc};
use plexus::base::protocol::messages::OutputLevel;
use plexus::run::tools::{ToolClock, ToolContext, ToolRegistry};
use serde_json::{json, Value};

use super::builtins::tool;
use super::common::{assert_error, call, run};

fn at(s: &str) -> ToolContext {
    let t: DateTime<Utc> = s.parse().expect("instant");
    ToolContext::new(".").with_clock(ToolClock::Fixed(t))
}

async fn full(ctx: &ToolContext, name: &str, args: Value) -> Value {
    let reg = ToolRegistry::with_builtins();
    let (out, _) = run(&call(name, args, Some(OutputLevel::Full)), ctx, &reg, None).await;
    // No data folder: full data under 1 MB is the observation itself.
    let obs = out.result.observation;
    serde_json::from_str(&obs).unwrap_or_else(|_| panic!("not JSON: {obs}"))
}

#[tokio::test]
async fn get_now_in_time_zones_across_dst() {
    let ctx = at("2024-03-10T06:59:59Z");
    let ny = full(&ctx, "get_now", json!({"timezone": "America/New_York"})).await;
    assert_eq!(ny["datetime"], "2024-03-10T01:59:59-05:00");
    assert_eq!(ny["abbreviation"], "EST");
    assert_eq!(ny["weekday"], "Sunday");
    let ctx = at("2024-03-10T07:00:00Z");
    let ny = full(&ctx, "get_now", json!({"timezone": "America/New_York"})).await;
    assert_eq!(ny["datetime"], "2024-03-10T03:00:00-04:00");
    assert_eq!(ny["abbreviation"], "EDT");
    let sh = full(&ctx, "get_now", json!({"timezone": "Asia/Shanghai"})).await;
    assert_eq!(sh["datetime"], "2024-03-10T15:00:00+08:00");
    assert_eq!(sh["iso_week"], "2024-W10");
    let utc = tool(&ctx, "get_now", json!({})).await;
    assert_eq!(
        utc.observation.lines().next(),
        Some("Now: 2024-03-10T07:00:00+00:00 (Sunday, UTC).")
    );
    let late = at("2024-03-10T20:00:00Z");
    let sh = full(&late, "get_now", json!({"timezone": "Asia/Shanghai"})).await;
    assert_eq!(
        (sh["date"].as_str(), sh["weekday"].as_str()),
        (Some("2024-03-11"), Some("Monday"))
    );
    let r = tool(&ctx, "get_now", json!({"timezone": "Mars/Olympus_Mons"})).await;
    assert_error(&r, "validation_error", "INVALID_TIME_ZONE");
}

#[tokio::test]
async fn calculate_date_shifts_and_finds_weekdays() {
    let ctx = at("2024-03-10T20:00:00Z");
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-01-31", "months": 1}),
    )
    .await;
    assert_eq!(
        (d["date"].as_str(), d["weekday"].as_str()),
        (Some("2024-02-29"), Some("Thursday"))
    );
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-03-08", "weekday": "friday"}),
    )
    .await;
    assert_eq!(d["date"], "2024-03-15", "next is strictly later");
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-03-11", "weekday": "Monday", "direction": "previous"}),
    )
    .await;
    assert_eq!(d["date"], "2024-03-04");
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-12-23", "weeks": 1}),
    )
    .await;
    assert_eq!(
        (d["date"].as_str(), d["iso_week"].as_str()),
        (Some("2024-12-30"), Some("2025-W01"))
    );
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-03-01", "days": -1}),
    )
    .await;
    assert_eq!(d["date"], "2024-02-29");
    // Today in the zone: 20:00 UTC is already Monday in Shanghai, still Sunday in New York.
    let d = full(
        &ctx,
        "calculate_date",
        json!({"timezone": "Asia/Shanghai", "days": 1}),
    )
    .await;
    assert_eq!(
        (d["base_date"].as_str(), d["date"].as_str()),
        (Some("2024-03-11"), Some("2024-03-12"))
    );
    let d = full(
        &ctx,
        "calculate_date",
        json!({"timezone": "America/New_York"}),
    )
    .await;
    assert_eq!(d["date"], "2024-03-10");
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-11-03T05:30:00Z", "timezone": "America/New_York"}),
    )
    .await;
    assert_eq!(d["date"], "2024-11-03");
    let r = tool(&ctx, "calculate_date", json!({"base_date": "2023-02-29"})).await;
    assert_error(&r, "validation_error", "INVALID_DATE");
    let r = tool(&ctx, "calculate_date", json!({"timezone": "Nowhere/City"})).await;
    assert_error(&r, "validation_error", "INVALID_TIME_ZONE");
    let r = tool(
        &ctx,
        "calculate_date",
        json!({"base_date": "2024-01-01", "weekday": "someday"}),
    )
    .await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn the_time_tools_answer_in_the_debate_protocol_shape_too() {
    // `get_now`: `now` (local, no offset), `timezone`, `weekday`, `date`.
    let ctx = at("2025-12-04T02:00:00Z");
    let now = full(&ctx, "get_now", json!({"timezone": "Asia/Shanghai"})).await;
    assert_eq!(now["now"], "2025-12-04T10:00:00");
    assert_eq!(now["timezone"], "Asia/Shanghai");
    assert_eq!(now["weekday"], "Thursday");
    assert_eq!(now["date"], "2025-12-04");
    // `calculate_date` with weeks and days: `result_date` and its weekday.
    let d = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2025-12-04", "offset": {"weeks": 2, "days": 3}}),
    )
    .await;
    assert_eq!(d["result_date"], "2025-12-21");
    assert_eq!(d["weekday"], "Sunday");
    let flat = full(
        &ctx,
        "calculate_date",
        json!({"base_date": "2025-12-04", "weeks": 2, "days": 3}),
    )
    .await;
    assert_eq!(flat["result_date"], "2025-12-21");
}
