//! The demo's timings. On the simulated provider the demo runs a fast clock (timeouts
//! ×0.005, retry delays ÷20) so its faults show up in seconds; on a real provider
//! (`plexus demo --provider NAME`) it keeps the real timeouts and delays. Either way
//! every request records the timeout actually enforced, the same in the
//! invocation_started event and in the stored request.

use std::collections::HashMap;
use std::path::Path;

use crate::common;

use common::{mock_profile, run_plexus};
use plexus::base::protocol::ErrorCode;
use plexus::data::store::Store;
use plexus::dev::mock_server::{MockConfig, MockServer};
use plexus::model::event::EngineEvent;
use plexus::model::plan::parse_plan;
use plexus::run::engine::request::constraints_for;
use plexus::run::engine::retry::RetryPolicy;
use plexus::run::engine::EngineConfig;

/// One attempt as the log has it.
struct Attempt {
    task: String,
    attempt: u32,
    /// constraints.timeout_seconds of the invocation_started event.
    event_timeout: f64,
    /// constraints.timeout_seconds of the stored request.
    request_timeout: f64,
    /// E004 retries the task had scheduled before this attempt.
    grown: i32,
    /// The attempt's error message and duration (ms) when it timed out.
    timed_out: Option<(String, u64)>,
}

/// The demo run in `db`: its stored config, and each attempt with the timeout the
/// task's agent has in the plan (before any scale). The run ended with `status`.
fn read_demo(db: &Path, status: &str) -> (serde_json::Value, Vec<(Attempt, f64)>) {
    let store = Store::open(db).expect("store");
    let runs = store.list_runs().expect("runs");
    assert_eq!(runs.len(), 1);
    let run = &runs[0].run_id;
    assert_eq!(runs[0].status, status);
    let (_, plan_json, config_json) = store.run_plan(run).expect("run row");
    let config: serde_json::Value = serde_json::from_str(&config_json).expect("config json");
    let plan = parse_plan(&plan_json, "stored plan").expect("plan");
    let min_temperature = EngineConfig::default().min_temperature;
    let real: HashMap<&str, f64> = plan
        .tasks
        .iter()
        .map(|t| {
            let c = constraints_for(
                &plan.agents[&*t.agent],
                plan.execution_mode,
                &t.options().constraints,
                min_temperature,
            );
            (t.task_id.as_str(), c.timeout_seconds)
        })
        .collect();
    let mut grown: HashMap<String, i32> = HashMap::new();
    let mut attempts: Vec<(Attempt, f64)> = Vec::new();
    let mut by_invocation: HashMap<String, usize> = HashMap::new();
    for e in store.events(run, 1, u64::MAX).expect("events") {
        let task = e.task_id.clone().unwrap_or_default();
        match e.event.expect("every event decodes") {
            EngineEvent::InvocationStarted(s) => {
                let id = e.invocation_id.clone().expect("invocation id");
                let request = store
                    .invocation_request(&id)
                    .expect("request")
                    .expect("stored request");
                let request_timeout = request["constraints"]["timeout_seconds"]
                    .as_f64()
                    .expect("timeout_seconds in the request");
                by_invocation.insert(id, attempts.len());
                attempts.push((
                    Attempt {
                        grown: grown.get(&task).copied().unwrap_or(0),
                        task: task.clone(),
                        attempt: s.attempt,
                        event_timeout: s.constraints.timeout_seconds,
                        request_timeout,
                        timed_out: None,
                    },
                    real[task.as_str()],
                ));
            }
            EngineEvent::InvocationFinished(f) if f.errors.contains(&ErrorCode::E004) => {
                let id = e.invocation_id.clone().expect("invocation id");
                attempts[by_invocation[&id]].0.timed_out =
                    Some((f.error_message.unwrap_or_default(), f.execution_time_ms));
            }
            EngineEvent::RetryScheduled(r) if r.error_code == ErrorCode::E004 => {
                *grown.entry(task).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    assert!(attempts.len() >= plan.tasks.len(), "every task ran");
    (config, attempts)
}

/// `s` rounded to the millisecond, as the engine records it.
fn ms(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}

#[test]
fn the_demo_on_a_real_provider_keeps_real_timeouts_and_retry_delays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start(
        MockConfig {
            stream_ms: 20,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    mock_profile(dir.path(), &server.url());
    let (status, err) = run_plexus(
        dir.path(),
        &[
            "--db",
            "d.db",
            "--config",
            "plexus.toml",
            "demo",
            "--provider",
            "mock",
            "--headless",
        ],
    );
    assert!(status.success(), "{err}");
    let (config, attempts) = read_demo(&dir.path().join("d.db"), "succeeded");
    assert_eq!(config["provider"], "mock");
    assert_eq!(config["engine"]["timeout_scale"], 1.0, "no fast clock");
    let retry: RetryPolicy =
        serde_json::from_value(config["engine"]["retry"].clone()).expect("retry policy");
    assert_eq!(retry, RetryPolicy::default(), "the real retry delays");
    for (a, real) in &attempts {
        assert!(*real > 3.0, "{}: an agent's timeout is minutes", a.task);
        assert_eq!(
            (a.event_timeout, a.request_timeout),
            (*real, *real),
            "{} attempt {}: the agent's real timeout, in the event and the request",
            a.task,
            a.attempt
        );
    }
}

#[test]
fn the_simulated_demo_records_the_fast_timeout_it_enforces() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Seed 11's faults include timeouts (of two tasks, each then retried with a longer
    // timeout), so the log shows the timeout that cut a call.
    let (status, err) = run_plexus(
        dir.path(),
        &[
            "--db",
            "d.db",
            "demo",
            "--chunk-ms",
            "2",
            "--seed",
            "11",
            "--headless",
        ],
    );
    // The demo ends awaiting review: its validator stops for a person (E007).
    assert_eq!(status.code(), Some(6), "{err}");
    let (config, attempts) = read_demo(&dir.path().join("d.db"), "awaiting_review");
    assert_eq!(config["provider"], "simulated");
    assert_eq!(config["engine"]["timeout_scale"], 0.005);
    let retry: RetryPolicy =
        serde_json::from_value(config["engine"]["retry"].clone()).expect("retry policy");
    assert_eq!(retry, RetryPolicy::default().scaled(20));
    let growth = RetryPolicy::default().timeout_growth;
    for (a, real) in &attempts {
        let want = ms(real * growth.powi(a.grown) * 0.005);
        assert!(want < 10.0, "{}: a fast timeout", a.task);
        assert_eq!(
            (a.event_timeout, a.request_timeout),
            (want, want),
            "{} attempt {}: the scaled timeout, in the event and the request",
            a.task,
            a.attempt
        );
        // A call that timed out was cut at the recorded timeout, not the agent's.
        if let Some((m, elapsed_ms)) = &a.timed_out {
            let said = format!("no complete answer within {:.1}s", a.event_timeout);
            assert!(m.starts_with(&said), "{m} (recorded {})", a.event_timeout);
            let enforced_ms = (a.event_timeout * 1000.0) as u64;
            assert!(
                (enforced_ms..enforced_ms + 60_000).contains(elapsed_ms),
                "{} attempt {} timed out after {elapsed_ms} ms, recorded {} s",
                a.task,
                a.attempt,
                a.event_timeout
            );
        }
    }
    let timed_out = attempts
        .iter()
        .filter(|(a, _)| a.timed_out.is_some())
        .count();
    assert!(
        timed_out >= 1,
        "seed 11 no longer times out: pick a seed that does"
    );
    assert!(
        attempts.iter().any(|(a, _)| a.grown > 0),
        "a timed-out task was retried with a longer timeout"
    );
}
