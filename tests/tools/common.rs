//! Helpers shared by the tools tests: calls, a scripted tool, and running a call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use plexus::base::protocol::messages::{
    OutputLevel, ToolCallMessage, ToolMetrics, ToolResultMessage, ToolRetryPolicy,
};
use plexus::run::tools::{
    execute_cached, RecordingSleeper, Tool, ToolCache, ToolContext, ToolData, ToolError,
    ToolFuture, ToolRegistry, ToolRun,
};
use serde_json::{json, Value};

/// A call of `tool` with `params` (an object) and an optional level.
pub fn call(tool: &str, params: Value, level: Option<OutputLevel>) -> ToolCallMessage {
    ToolCallMessage {
        tool_call_id: "call_1".into(),
        tool_name: tool.into(),
        parameters: params.as_object().cloned().unwrap_or_default(),
        output_level: level,
    }
}

/// What one attempt of a [`Scripted`] tool does.
#[derive(Clone)]
pub enum Step {
    /// Returns this data.
    Ok(ToolData),
    /// Fails with this error.
    Fail(ToolError),
    /// Never finishes (the executor's time limit ends it).
    Hang,
    /// Panics while running.
    Panic,
}

/// A tool that plays `steps` in order (the last one repeats) and counts its attempts.
pub struct Scripted {
    pub name: &'static str,
    pub steps: Mutex<Vec<Step>>,
    pub attempts: AtomicUsize,
    pub idempotent: bool,
    pub default_level: Option<OutputLevel>,
    pub timeout: Duration,
}

impl Scripted {
    /// A tool named `name` playing `steps`, idempotent, 30 ms time limit.
    pub fn new(name: &'static str, steps: Vec<Step>) -> Self {
        Scripted {
            name,
            steps: Mutex::new(steps),
            attempts: AtomicUsize::new(0),
            idempotent: true,
            default_level: None,
            timeout: Duration::from_millis(30),
        }
    }

    /// Attempts made so far.
    pub fn attempts(&self) -> usize {
        self.attempts.load(Ordering::SeqCst)
    }
}

impl Tool for Scripted {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "scripted test tool"
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"q": {"type": "string"}}})
    }

    fn default_output_level(&self) -> Option<OutputLevel> {
        self.default_level
    }

    fn is_idempotent(&self, _args: &Value) -> bool {
        self.idempotent
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn run<'a>(&'a self, _ctx: &'a ToolContext, _args: &'a Value) -> ToolFuture<'a> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        let step = {
            let steps = self.steps.lock().expect("steps");
            steps[n.min(steps.len() - 1)].clone()
        };
        Box::pin(async move {
            match step {
                Step::Ok(d) => Ok(d),
                Step::Fail(e) => Err(e),
                Step::Panic => panic!("scripted panic"),
                Step::Hang => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Err(ToolError::arguments("unreachable"))
                }
            }
        })
    }
}

/// Runs `c` with the default policy and a recording sleeper.
pub async fn run(
    c: &ToolCallMessage,
    ctx: &ToolContext,
    reg: &ToolRegistry,
    cache: Option<&ToolCache>,
) -> (ToolRun, RecordingSleeper) {
    run_with(c, ctx, reg, &ToolRetryPolicy::default(), cache).await
}

/// Runs `c` with `policy` and a recording sleeper.
pub async fn run_with(
    c: &ToolCallMessage,
    ctx: &ToolContext,
    reg: &ToolRegistry,
    policy: &ToolRetryPolicy,
    cache: Option<&ToolCache>,
) -> (ToolRun, RecordingSleeper) {
    let sleeper = RecordingSleeper::default();
    let out = execute_cached(c, ctx, reg, policy, &sleeper, cache).await;
    (out, sleeper)
}

/// Asserts `r` is a failure in the unified format with `error_type` and `code`.
pub fn assert_error(r: &ToolResultMessage, error_type: &str, code: &str) {
    assert!(!r.success, "expected a failure: {}", r.observation);
    assert_eq!(r.observation, r.format_error_observation());
    let lines: Vec<&str> = r.observation.lines().collect();
    assert_eq!(lines[0], "Operation failed.", "{}", r.observation);
    assert_eq!(
        lines[1],
        format!("Error Type: {error_type}"),
        "{}",
        r.observation
    );
    assert_eq!(lines[2], format!("Error Code: {code}"), "{}", r.observation);
    assert!(lines[3].starts_with("Error Message: "), "{}", r.observation);
    assert_eq!(
        lines.last().copied(),
        Some(format!("Tool Call ID: {}", r.tool_call_id).as_str())
    );
    let block = plexus::run::tools::tool_result_block(r);
    assert!(block.is_error);
}

/// Metrics sanity shared by many tests.
pub fn assert_metrics(m: &ToolMetrics, success: bool, retries: u32, level: &str) {
    assert_eq!(m.success, success);
    assert_eq!(m.retry_count, retries);
    assert_eq!(m.output_level, level);
    assert!(m.duration_ms >= 0.0);
}
