//! The jitter of transient retries (HTTP 429/5xx: base × factor^(n−1) ± 20%). Against a
//! real API it comes from each process's own random source, so two processes retrying
//! the same task against one rate-limited server do not come back in lockstep; on the
//! simulated provider it comes from the seed, so a run repeats for its seed.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::{mock_profile, one_task_plan, quick_sim, run_plan, run_plexus, test_config};
use plexus::data::provider::Fault;
use plexus::data::store::Store;
use plexus::dev::mock_server::{MockConfig, MockFault, MockServer};
use plexus::model::event::EngineEvent;
use plexus::run::engine::retry::Backoff;
use plexus::run::engine::EngineConfig;

/// The delays of task A's retry_scheduled events in the database's only run.
fn delays(db: &Path) -> Vec<u64> {
    let store = Store::open(db).expect("store");
    let runs = store.list_runs().expect("runs");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "failed", "every call was refused");
    store
        .events(&runs[0].run_id, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .filter(|e| e.task_id.as_deref() == Some("A"))
        .filter_map(|e| match e.event {
            Ok(EngineEvent::RetryScheduled(r)) => {
                assert!(r.transient, "a 429 is retried by the transient backoff");
                Some(r.delay_ms)
            }
            _ => None,
        })
        .collect()
}

/// Whether `d` is `raw` ± 20% (rounded to the millisecond).
fn within_jitter(d: u64, raw: f64) -> bool {
    (raw * 0.8).round() as u64 <= d && d <= (raw * 1.2).round() as u64
}

#[test]
fn two_processes_rate_limited_by_one_server_retry_at_different_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let too_many = MockFault::Status {
        code: 429,
        retry_after: None,
    };
    let server = MockServer::start(
        MockConfig {
            stream_ms: 5,
            script: HashMap::from([("A".to_string(), vec![too_many; 100])]),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    mock_profile(dir.path(), &server.url());
    std::fs::write(dir.path().join("plan.json"), one_task_plan("")).expect("plan");
    let mut runs = Vec::new();
    for db in ["one.db", "two.db"] {
        let (status, err) = run_plexus(
            dir.path(),
            &[
                "--db",
                db,
                "--config",
                "plexus.toml",
                "run",
                "plan.json",
                "--retry-delay-div",
                "100",
                "--provider",
                "mock",
                "--headless",
            ],
        );
        assert!(!status.success(), "every call was refused: {err}");
        runs.push(delays(&dir.path().join(db)));
    }
    assert_eq!(server.requests(), 12, "1 call + 5 retries, twice");
    // The default backoff divided by 100: 10 ms × 2^(n−1) ± 20%.
    for d in &runs {
        assert_eq!(d.len(), 5, "five transient retries: {d:?}");
        for (n, &ms) in d.iter().enumerate() {
            let raw = 10.0 * 2f64.powi(n as i32);
            assert!(
                within_jitter(ms, raw),
                "retry {}: {ms} ms ≠ {raw} ± 20%",
                n + 1
            );
        }
    }
    assert_ne!(
        runs[0], runs[1],
        "two processes retrying the same task come back at different times"
    );
}

/// Runs task A with `transient` faults on every call, with jitter, on `seed`.
async fn simulated_delays(seed: u64) -> Vec<u64> {
    let mut sim = quick_sim();
    sim.script = HashMap::from([("A".to_string(), vec![Fault::Transient; 8])]);
    let mut config = EngineConfig {
        seed,
        ..test_config()
    };
    config.retry.transient = Backoff {
        max_retries: 4,
        base_ms: 20,
        factor: 2.0,
        max_ms: 1_000,
        jitter: 0.2,
    };
    let r = run_plan(&one_task_plan(""), sim, config).await;
    r.of(|e| match e {
        EngineEvent::RetryScheduled(x) => Some(x),
        _ => None,
    })
    .into_iter()
    .map(|(_, x)| x.delay_ms)
    .collect()
}

#[tokio::test]
async fn the_simulated_provider_s_jitter_repeats_for_a_seed() {
    let first = simulated_delays(11).await;
    assert_eq!(first.len(), 4);
    for (n, &ms) in first.iter().enumerate() {
        let raw = 20.0 * 2f64.powi(n as i32);
        assert!(
            within_jitter(ms, raw),
            "retry {}: {ms} ms ≠ {raw} ± 20%",
            n + 1
        );
    }
    assert_ne!(first, vec![20, 40, 80, 160], "the delays are jittered");
    assert_eq!(
        simulated_delays(11).await,
        first,
        "the same seed, the same delays"
    );
    assert_ne!(
        simulated_delays(12).await,
        first,
        "the jitter comes from the seed"
    );
}
