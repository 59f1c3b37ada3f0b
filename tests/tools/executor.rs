//! The executor's rules with scripted tools.

use std::sync::Arc;

use plexus::base::protocol::messages::{OutputLevel, ToolErrorType, ToolRetryPolicy};
use plexus::run::tools::{
    effective_level, execute, RecordingSleeper, ToolCache, ToolContext, ToolData, ToolError,
    ToolErrorCode, ToolRegistry, SPILL_THRESHOLD_BYTES,
};
use serde_json::json;

use super::common::{assert_error, assert_metrics, call, run, run_with, Scripted, Step};

use OutputLevel::{Brief as B, Full as F, Standard as S};

#[test]
fn output_level_decision_table() {
    // (explicit, tool default, global default, usage) → level
    let table = [
        (None, None, S, 0.0, S),
        (None, None, B, 0.0, B),
        (None, None, F, 0.5, F),
        (None, Some(F), S, 0.0, F),
        (None, Some(B), F, 0.0, B),
        (Some(S), Some(F), B, 0.0, S),
        (Some(F), Some(B), B, 0.0, F),
        (Some(B), None, F, 0.0, B),
        // Exactly 80% keeps the chosen level; above it, brief wins over everything.
        (Some(F), None, S, 0.8, F),
        (None, Some(F), S, 0.8, F),
        (None, None, F, 0.8, F),
        (Some(F), None, S, 0.81, B),
        (None, Some(F), S, 0.81, B),
        (None, None, F, 0.81, B),
        (Some(S), Some(S), S, 1.0, B),
        (Some(F), Some(F), F, 0.800_000_1, B),
        (Some(F), None, S, f64::NAN, F),
    ];
    for (explicit, tool, global, usage, want) in table {
        assert_eq!(
            effective_level(explicit, tool, global, usage),
            want,
            "{explicit:?} {tool:?} {global:?} {usage}"
        );
    }
    // Every combination: the first level named, in priority order, unless > 80%.
    let levels = [None, Some(B), Some(S), Some(F)];
    for e in levels {
        for t in levels {
            for g in [B, S, F] {
                for usage in [0.0, 0.8, 0.81] {
                    let chosen = e.or(t).unwrap_or(g);
                    let want = if usage > 0.8 { B } else { chosen };
                    assert_eq!(effective_level(e, t, g, usage), want);
                }
            }
        }
    }
}

fn registry(tool: Scripted) -> (ToolRegistry, Arc<Scripted>) {
    let tool = Arc::new(tool);
    let mut reg = ToolRegistry::empty();
    reg.register(tool.clone());
    (reg, tool)
}

fn text_of(n: usize) -> ToolData {
    ToolData::text("x".repeat(n), format!("{n} bytes of x"), "some x")
}

#[tokio::test]
async fn level_reaches_the_observation_and_metrics() {
    let data = ToolData::json(json!({"n": 1}), "brief one", "standard one");
    let mut tool = Scripted::new("t", vec![Step::Ok(data)]);
    tool.default_level = Some(B);
    let (reg, _) = registry(tool);
    let ctx = ToolContext::new(".");
    let (out, _) = run(&call("t", json!({}), None), &ctx, &reg, None).await;
    assert_eq!(out.result.observation, "brief one");
    assert_metrics(&out.metrics, true, 0, "brief");
    let (out, _) = run(&call("t", json!({}), Some(S)), &ctx, &reg, None).await;
    assert_eq!(out.result.observation, "standard one");
    assert_eq!(out.result.output_level, S);
    let full = ctx.clone().with_context_usage(0.9);
    let (out, _) = run(&call("t", json!({}), Some(S)), &full, &reg, None).await;
    assert_eq!(out.result.observation, "brief one");
    assert!(out.metrics.output_tokens > 0 && out.metrics.input_tokens > 0);
}

#[tokio::test]
async fn spills_at_exactly_one_mebibyte_and_not_a_byte_less() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ToolContext::new(dir.path()).with_data_dir(dir.path().join("tool_data/run1"));
    let n = SPILL_THRESHOLD_BYTES as usize;
    assert_eq!(n, 1_048_576);

    let (reg, _) = registry(Scripted::new("t", vec![Step::Ok(text_of(n))]));
    let (out, _) = run(&call("t", json!({}), None), &ctx, &reg, None).await;
    let r = out.result;
    assert!(r.success);
    let file = r.data_file.clone().expect("stored in a file");
    assert!(
        r.observation
            .starts_with(&format!("Data stored in file: {file}\n")),
        "{}",
        r.observation
    );
    assert!(r.observation.contains("1048576 bytes of x"));
    assert_eq!(r.data_size_bytes, 1_048_576);
    assert_eq!(r.data_summary.as_deref(), Some("1048576 bytes of x"));
    let path = std::path::Path::new(&file);
    assert_eq!(
        path.parent(),
        Some(dir.path().join("tool_data/run1").as_path())
    );
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        name.starts_with("call_1_")
            && name.ends_with(".txt")
            && name.len() == "call_1_".len() + 8 + 4,
        "{name}"
    );
    assert_eq!(
        std::fs::metadata(path).map(|m| m.len()).ok(),
        Some(1_048_576)
    );

    let (reg, _) = registry(Scripted::new("t", vec![Step::Ok(text_of(n - 1))]));
    let (out, _) = run(&call("t", json!({}), None), &ctx, &reg, None).await;
    assert_eq!(out.result.data_file, None);
    assert_eq!(out.result.observation, "some x");
    assert_eq!(out.result.data_size_bytes, 1_048_575);
}

#[tokio::test]
async fn full_level_spills_small_data_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ToolContext::new(dir.path()).with_data_dir(dir.path().join("d"));
    let data = ToolData::json(json!({"items": [1, 2, 3]}), "Found 3 items", "1, 2, 3");
    let (reg, _) = registry(Scripted::new("t", vec![Step::Ok(data)]));
    let (out, _) = run(&call("t", json!({}), Some(F)), &ctx, &reg, None).await;
    let file = out.result.data_file.clone().expect("full goes to a file");
    assert!(file.ends_with(".json"));
    assert_eq!(
        std::fs::read_to_string(&file).ok().as_deref(),
        Some(r#"{"items":[1,2,3]}"#)
    );
    assert!(out.result.observation.contains("Summary: Found 3 items"));
    assert_metrics(&out.metrics, true, 0, "full");

    // Without a data folder: full data under 1 MB is shown whole, larger data summed up.
    let bare = ToolContext::new(dir.path());
    let (out, _) = run(&call("t", json!({}), Some(F)), &bare, &reg, None).await;
    assert_eq!(out.result.data_file, None);
    assert!(
        out.result.observation.contains("\"items\": ["),
        "{}",
        out.result.observation
    );
    let (reg, _) = registry(Scripted::new(
        "t",
        vec![Step::Ok(text_of(SPILL_THRESHOLD_BYTES as usize))],
    ));
    let (out, _) = run(&call("t", json!({}), None), &bare, &reg, None).await;
    assert!(out.result.observation.starts_with("1048576 bytes of x\n"));
    assert!(out.result.observation.len() < 1000);
}

fn resource() -> ToolError {
    ToolError::resource(ToolErrorCode::ResourceBusy, "database is locked")
}

#[tokio::test]
async fn timeouts_are_retried_with_growing_delays() {
    let ok = ToolData::text("done", "done", "done");
    let (reg, tool) = registry(Scripted::new(
        "t",
        vec![Step::Hang, Step::Hang, Step::Ok(ok)],
    ));
    let (out, sleeper) = run(
        &call("t", json!({}), None),
        &ToolContext::new("."),
        &reg,
        None,
    )
    .await;
    assert!(out.result.success, "{}", out.result.observation);
    assert_eq!(tool.attempts(), 3);
    assert_eq!(sleeper.delays_ms(), [1000, 1500]);
    assert_metrics(&out.metrics, true, 2, "standard");
}

#[tokio::test]
async fn resource_errors_are_retried() {
    let ok = ToolData::text("done", "done", "done");
    let (reg, tool) = registry(Scripted::new(
        "t",
        vec![Step::Fail(resource()), Step::Ok(ok)],
    ));
    let (out, sleeper) = run(
        &call("t", json!({}), None),
        &ToolContext::new("."),
        &reg,
        None,
    )
    .await;
    assert!(out.result.success);
    assert_eq!(tool.attempts(), 2);
    assert_eq!(sleeper.delays_ms(), [1000]);
    assert_eq!(out.metrics.retry_count, 1);
}

#[tokio::test]
async fn other_errors_are_not_retried() {
    let e = ToolError::failed(ToolErrorCode::ToolFailed, "broken");
    let (reg, tool) = registry(Scripted::new("t", vec![Step::Fail(e)]));
    let (out, sleeper) = run(
        &call("t", json!({}), None),
        &ToolContext::new("."),
        &reg,
        None,
    )
    .await;
    assert_error(&out.result, "execution_error", "TOOL_FAILED");
    assert!(out.result.observation.contains("Error Message: broken"));
    assert_eq!(tool.attempts(), 1);
    assert!(sleeper.delays_ms().is_empty());
    assert_metrics(&out.metrics, false, 0, "standard");
}

#[tokio::test]
async fn a_panicking_tool_is_one_error_observation() {
    let (reg, tool) = registry(Scripted::new("p", vec![Step::Panic]));
    let (out, sleeper) = run(
        &call("p", json!({}), None),
        &ToolContext::new("."),
        &reg,
        None,
    )
    .await;
    assert_error(&out.result, "execution_error", "TOOL_FAILED");
    assert!(out
        .result
        .observation
        .contains("`p` stopped unexpectedly (it panicked)"));
    assert_eq!(tool.attempts(), 1);
    assert!(sleeper.delays_ms().is_empty());
}

#[tokio::test]
async fn gives_up_after_three_retries() {
    let (reg, tool) = registry(Scripted::new("t", vec![Step::Fail(resource())]));
    let (out, sleeper) = run(
        &call("t", json!({}), None),
        &ToolContext::new("."),
        &reg,
        None,
    )
    .await;
    assert_eq!(tool.attempts(), 4);
    assert_eq!(sleeper.delays_ms(), [1000, 1500, 2250]);
    assert_error(&out.result, "resource_error", "RESOURCE_BUSY");
    assert_metrics(&out.metrics, false, 3, "standard");

    // A tool that always hangs: 4 attempts, each with a longer limit (30 ms × 1.5^3).
    let (reg, tool) = registry(Scripted::new("h", vec![Step::Hang]));
    let (out, sleeper) = run(
        &call("h", json!({}), None),
        &ToolContext::new("."),
        &reg,
        None,
    )
    .await;
    assert_eq!(tool.attempts(), 4);
    assert_eq!(sleeper.delays_ms(), [1000, 1500, 2250]);
    assert_error(&out.result, "timeout", "TIMEOUT");
    assert!(
        out.result
            .observation
            .contains("did not finish within 101 ms"),
        "{}",
        out.result.observation
    );
}

#[tokio::test]
async fn delays_are_capped_at_ten_seconds() {
    let policy = ToolRetryPolicy {
        max_retries: 8,
        ..ToolRetryPolicy::default()
    };
    let (reg, tool) = registry(Scripted::new("t", vec![Step::Fail(resource())]));
    let (_, sleeper) = run_with(
        &call("t", json!({}), None),
        &ToolContext::new("."),
        &reg,
        &policy,
        None,
    )
    .await;
    assert_eq!(tool.attempts(), 9);
    assert_eq!(
        sleeper.delays_ms(),
        [1000, 1500, 2250, 3375, 5063, 7594, 10_000, 10_000]
    );
    assert_eq!(policy.delay_ms(3), 2250);
    assert!(policy.should_retry(&ToolErrorType::Timeout, 7));
    assert!(!policy.should_retry(&ToolErrorType::Timeout, 8));
}

#[tokio::test]
async fn unknown_tools_bad_arguments_and_oversize_input_are_error_observations() {
    let reg = ToolRegistry::with_builtins();
    let ctx = ToolContext::new(".");
    let sleeper = RecordingSleeper::default();
    let policy = ToolRetryPolicy::default();

    let (r, m) = execute(
        &call("rm_rf", json!({}), None),
        &ctx,
        &reg,
        &policy,
        &sleeper,
    )
    .await;
    assert_error(&r, "validation_error", "UNKNOWN_TOOL");
    assert!(r.observation.contains("no tool named `rm_rf`; the tools are: atom_query, calculate_date, file_reader, file_search, get_now"));
    assert_eq!(r.tool_call_id, "call_1");
    assert_metrics(&m, false, 0, "standard");

    let (r, _) = execute(
        &call("file_reader", json!({"start_line": "x"}), None),
        &ctx,
        &reg,
        &policy,
        &sleeper,
    )
    .await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
    assert!(
        r.observation.contains("$.path is required"),
        "{}",
        r.observation
    );
    assert!(r
        .observation
        .contains("$.start_line must be integer, not string"));

    let (r, _) = execute(
        &call("get_now", json!({"timezone": 8}), None),
        &ctx,
        &reg,
        &policy,
        &sleeper,
    )
    .await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");

    let big = "y".repeat(10 * 1024 * 1024);
    let (r, m) = execute(
        &call("file_reader", json!({"path": big}), None),
        &ctx,
        &reg,
        &policy,
        &sleeper,
    )
    .await;
    assert_error(&r, "validation_error", "INPUT_TOO_LARGE");
    assert!(r
        .observation
        .contains("the limit is 10 MB (10485760 bytes)"));
    assert!(m.input_tokens > 0);
    assert!(sleeper.delays_ms().is_empty());
}

#[tokio::test]
async fn cache_answers_idempotent_calls_only() {
    let data = ToolData::text("v", "v", "v");
    let (reg, tool) = registry(Scripted::new("t", vec![Step::Ok(data)]));
    let ctx = ToolContext::new(".");
    let cache = ToolCache::new(16);
    let mut first = call("t", json!({"q": "a", "z": 1}), None);
    let (out, _) = run(&first, &ctx, &reg, Some(&cache)).await;
    assert!(!out.cached);
    first.tool_call_id = "call_2".into();
    first.parameters = json!({"z": 1, "q": "a"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let (out, _) = run(&first, &ctx, &reg, Some(&cache)).await;
    assert!(out.cached, "same arguments in another order hit the cache");
    assert_eq!(out.result.tool_call_id, "call_2");
    assert_eq!(out.metrics.retry_count, 0);
    assert_eq!(tool.attempts(), 1);
    let (out, _) = run(
        &call("t", json!({"q": "a", "z": 1}), Some(B)),
        &ctx,
        &reg,
        Some(&cache),
    )
    .await;
    assert!(!out.cached, "another level is another entry");
    assert_eq!(tool.attempts(), 2);

    // A cache hit after retries still records 0 retries.
    let (reg, tool) = registry(Scripted::new(
        "r",
        vec![
            Step::Fail(resource()),
            Step::Ok(ToolData::text("v", "v", "v")),
        ],
    ));
    let (out, _) = run(&call("r", json!({}), None), &ctx, &reg, Some(&cache)).await;
    assert_eq!(out.metrics.retry_count, 1);
    let (out, _) = run(&call("r", json!({}), None), &ctx, &reg, Some(&cache)).await;
    assert!(out.cached);
    assert_eq!(out.metrics.retry_count, 0);
    assert_eq!(tool.attempts(), 2);

    // Not idempotent: never cached.
    let mut t = Scripted::new("n", vec![Step::Ok(ToolData::text("v", "v", "v"))]);
    t.idempotent = false;
    let (reg, tool) = registry(t);
    let before = cache.len();
    for _ in 0..2 {
        let (out, _) = run(&call("n", json!({}), None), &ctx, &reg, Some(&cache)).await;
        assert!(!out.cached);
    }
    assert_eq!(tool.attempts(), 2);
    assert_eq!(cache.len(), before);

    // Failures are not cached.
    let e = ToolError::failed(ToolErrorCode::ToolFailed, "no");
    let (reg, tool) = registry(Scripted::new("f", vec![Step::Fail(e)]));
    for _ in 0..2 {
        let (out, _) = run(&call("f", json!({}), None), &ctx, &reg, Some(&cache)).await;
        assert!(!out.cached);
    }
    assert_eq!(tool.attempts(), 2);
}
