//! Retries survive a resume: a task interrupted while it waits for a retry picks up on
//! resume where it stopped — the attempt numbers continue, the retry budget (per error
//! code, and the transient backoff's own) is what was left, and the adjustments made so
//! far (lowered threshold, grown timeout, more tokens and a lower temperature, the error
//! told to the model) still apply. A person's retry (a task reset) starts afresh.
//!
//! Most runs go through the real launch path in-process (`launch::start`,
//! `launch::prepare_resume`, the run config stored with the run), on the simulated
//! provider with a scripted fault per attempt. The first process waits ten minutes
//! before the retry it is interrupted at (so the interrupt always lands in that wait);
//! the resumed process retries within milliseconds. One kills the real binary
//! (`kill -9`) mid-call against a mock server and resumes it with `plexus resume`.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use plexus::base::protocol::ErrorCode;
use plexus::cli::launch::{prepare_resume, start, Globals, RunConfig, Started};
use plexus::data::provider::{Fault, SimConfig};
use plexus::data::store::Store;
use plexus::dev::mock_server::{MockConfig, MockFault, MockServer};
use plexus::model::event::{EngineEvent, Envelope, InvocationStarted, RetryScheduled, RunStatus};
use plexus::model::plan::parse_plan;
use plexus::run::engine::retry::RetryPolicy;
use plexus::run::engine::{Control, EngineConfig};

/// The wait of the retry a first process is interrupted in.
const SLOW_MS: u64 = 600_000;

fn globals(db: &Path) -> Globals {
    Globals {
        db: db.to_path_buf(),
        seed: None,
        concurrency: None,
        max_cost: None,
        headless: true,
        provider: None,
        config: None,
        loaded: None,
        otlp: None,
    }
}

/// Task A fails as `script` says, one fault per attempt (attempt 1 first).
fn run_config(engine: EngineConfig, script: &[Fault]) -> RunConfig {
    RunConfig {
        engine,
        simulated: SimConfig {
            script: HashMap::from([("A".to_string(), script.to_vec())]),
            ..common::quick_sim()
        },
        provider: "simulated".into(),
        replay: None,
    }
}

/// The tests' engine config with `retry` as its policy.
fn engine(retry: RetryPolicy) -> EngineConfig {
    EngineConfig {
        retry,
        ..common::test_config()
    }
}

/// Reads delivered events until one satisfies `hit`.
async fn wait_for(s: &mut Started, what: &str, hit: impl Fn(&Envelope) -> bool) {
    loop {
        let batch = tokio::time::timeout(Duration::from_secs(120), s.events.recv())
            .await
            .unwrap_or_else(|_| panic!("no {what} within 120 s"))
            .expect("the event channel stays open");
        if batch.iter().any(|e| hit(e)) {
            return;
        }
    }
}

/// Whether `e` is task A's retry leading to attempt `next`.
fn retry_to(e: &Envelope, next: u32) -> bool {
    e.task_id.as_deref() == Some("A")
        && matches!(&e.event, EngineEvent::RetryScheduled(r) if r.next_attempt == next)
}

/// Starts a run of `plan_json` and interrupts it once task A has scheduled the retry
/// leading to attempt `next`. Returns the run id.
async fn run_until_retry(db: &Path, plan_json: &str, config: RunConfig, next: u32) -> String {
    let plan = parse_plan(plan_json, "test plan").expect("valid plan");
    let mut s = start(&globals(db), plan, config, None, false).expect("start");
    wait_for(&mut s, &format!("retry to attempt {next}"), |e| {
        retry_to(e, next)
    })
    .await;
    interrupt(s).await
}

/// Interrupts a started run; it must end interrupted (resumable). Returns the run id.
async fn interrupt(s: Started) -> String {
    s.handle
        .control
        .send(Control::Interrupt)
        .expect("send interrupt");
    let run_id = s.run_id.clone();
    let status = s.finish().await.expect("the run stops");
    assert_eq!(status, RunStatus::Interrupted);
    run_id
}

/// Resumes the run as `plexus resume` does, with `retry` as the policy (the same
/// budgets, fast delays), to its end.
async fn resume(db: &Path, run_id: &str, retry: RetryPolicy) -> RunStatus {
    let (plan, mut config, resuming) = prepare_resume(db, run_id).expect("prepare resume");
    config.engine.retry = retry;
    config.engine.hold_open = false;
    let s = start(&globals(db), plan, config, Some(resuming), false).expect("resume");
    s.finish().await.expect("the resumed run ends")
}

/// What the log says about task A.
struct TaskLog {
    /// invocation_started events: (invocation id, event).
    started: Vec<(String, InvocationStarted)>,
    /// retry_scheduled events.
    retries: Vec<RetryScheduled>,
    /// invocation_finished error messages, in order.
    errors: Vec<Option<String>>,
    /// Invocation rows of A.
    invocations: i64,
    /// The tasks row: status and attempts.
    status: String,
    attempts: i64,
    store: Store,
}

impl TaskLog {
    fn read(db: &Path, run_id: &str) -> TaskLog {
        let store = Store::open(db).expect("store");
        let mut started = Vec::new();
        let mut retries = Vec::new();
        let mut errors = Vec::new();
        for e in store.events(run_id, 1, u64::MAX).expect("events") {
            if e.task_id.as_deref() != Some("A") {
                continue;
            }
            match e.event.expect("every event decodes") {
                EngineEvent::InvocationStarted(s) => {
                    started.push((e.invocation_id.clone().expect("invocation id"), s))
                }
                EngineEvent::RetryScheduled(r) => retries.push(r),
                EngineEvent::InvocationFinished(f) => errors.push(f.error_message),
                _ => {}
            }
        }
        let invocations = store
            .invocation_counts(run_id)
            .expect("counts")
            .into_iter()
            .find(|(t, _)| t == "A")
            .map_or(0, |(_, n)| n);
        let row = store
            .tasks(run_id)
            .expect("tasks")
            .into_iter()
            .find(|t| t.task_id == "A")
            .expect("task A");
        TaskLog {
            started,
            retries,
            errors,
            invocations,
            status: row.status,
            attempts: row.attempts,
            store,
        }
    }

    fn attempts_started(&self) -> Vec<u32> {
        self.started.iter().map(|(_, s)| s.attempt).collect()
    }

    /// The invocation_started event of attempt `n`.
    fn attempt(&self, n: u32) -> &InvocationStarted {
        &self
            .started
            .iter()
            .find(|(_, s)| s.attempt == n)
            .unwrap_or_else(|| panic!("no attempt {n}"))
            .1
    }

    /// The stored request of attempt `n`.
    fn request(&self, n: u32) -> serde_json::Value {
        let (id, _) = self
            .started
            .iter()
            .find(|(_, s)| s.attempt == n)
            .unwrap_or_else(|| panic!("no attempt {n}"));
        self.store
            .invocation_request(id)
            .expect("request")
            .expect("stored request")
    }

    fn adjustments(&self) -> Vec<&str> {
        self.retries.iter().map(|r| r.adjustment.as_str()).collect()
    }
}

/// `delays_ms` for a code: `fast` retries of 1 ms, then a slow one.
fn fast_then_slow(fast: usize) -> Vec<u64> {
    let mut d = vec![1; fast];
    d.push(SLOW_MS);
    d
}

#[tokio::test]
async fn e002_budget_attempt_numbers_and_feedback_carry_over_a_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    // 5 retries allowed; the first process is interrupted after 3 attempts, waiting to
    // make the 4th.
    let mut slow = common::fast_retry();
    slow.e002.max_retries = 5;
    slow.e002.delays_ms = fast_then_slow(2);
    let mut fast = slow.clone();
    fast.e002.delays_ms = vec![1];
    let script = [Fault::MalformedJson; 12];
    let run = run_until_retry(
        &db,
        &common::one_task_plan(""),
        run_config(engine(slow), &script),
        4,
    )
    .await;
    let before = TaskLog::read(&db, &run);
    assert_eq!(before.attempts_started(), vec![1, 2, 3]);
    assert_eq!(before.invocations, 3);

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Failed);
    let after = TaskLog::read(&db, &run);
    assert_eq!(
        after.invocations, 6,
        "1 try + 5 retries over both processes, not 3 + 6"
    );
    assert_eq!(
        after.attempts_started(),
        vec![1, 2, 3, 4, 5, 6],
        "the resumed process continues at attempt 4"
    );
    assert_eq!((after.status.as_str(), after.attempts), ("failed", 6));
    let want: Vec<String> = (1..=5)
        .map(|n| format!("parse error added to the prompt: retry {n} of 5"))
        .collect();
    assert_eq!(after.adjustments(), want);
    // Attempt 4 (the first of the resumed process) tells the model attempt 3's error.
    let told = after.errors[2]
        .clone()
        .expect("attempt 3 failed with a message");
    let instruction = after.request(4)["user_prompt"]["instruction"]
        .as_str()
        .expect("instruction")
        .to_string();
    assert!(
        instruction.contains(&format!("Your previous answer was rejected: {told}.")),
        "attempt 4's prompt lacks attempt 3's parse error {told:?}: {instruction}"
    );
    assert_eq!(
        after.retries[2].feedback.as_deref(),
        Some(told.as_str()),
        "the retry records the feedback it gives"
    );
}

#[tokio::test]
async fn e003_lowered_threshold_carries_over_a_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let mut slow = common::fast_retry();
    slow.e003.max_retries = 3;
    slow.e003.delays_ms = fast_then_slow(1);
    let mut fast = slow.clone();
    fast.e003.delays_ms = vec![1];
    let script = [Fault::InvalidShape; 8];
    let run = run_until_retry(
        &db,
        &common::one_task_plan(""),
        run_config(engine(slow), &script),
        3,
    )
    .await;
    let before = TaskLog::read(&db, &run);
    let thresholds: Vec<&str> = before
        .started
        .iter()
        .map(|(_, s)| s.quality_threshold.as_str())
        .collect();
    assert_eq!(thresholds, vec!["B", "C"]);

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Failed);
    let after = TaskLog::read(&db, &run);
    assert_eq!(after.invocations, 4, "1 try + 3 retries");
    assert_eq!(after.attempts_started(), vec![1, 2, 3, 4]);
    assert_eq!(
        after.attempt(3).quality_threshold,
        "D",
        "lowered twice before the resume: B → C → D, not back to B"
    );
    let prompt = after.request(3)["user_prompt"].clone();
    assert_eq!(prompt["output_requirements"]["quality_threshold"], "D");
    let told = after.errors[1].clone().expect("attempt 2's error");
    assert!(
        prompt["instruction"]
            .as_str()
            .is_some_and(|i| i.contains(&told)),
        "attempt 3 is told attempt 2's validation error {told:?}: {prompt}"
    );
}

#[tokio::test]
async fn e004_grown_timeout_carries_over_a_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let mut slow = common::fast_retry();
    slow.e004.max_retries = 3;
    slow.e004.delays_ms = fast_then_slow(1);
    let mut fast = slow.clone();
    fast.e004.delays_ms = vec![1];
    let script = [Fault::Timeout; 8];
    let run = run_until_retry(
        &db,
        &common::one_task_plan(""),
        run_config(engine(slow), &script),
        3,
    )
    .await;

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Failed);
    let after = TaskLog::read(&db, &run);
    assert_eq!(after.invocations, 4, "1 try + 3 retries");
    assert_eq!(after.status, "timeout");
    // The agent's 600 s on the tests' clock (×0.0002) = 0.12 s, ×1.5 per E004 retry.
    let timeouts: Vec<f64> = (1..=4)
        .map(|n| after.attempt(n).constraints.timeout_seconds)
        .collect();
    assert_eq!(
        timeouts,
        vec![0.12, 0.18, 0.27, 0.405],
        "attempt 3 keeps the timeout grown twice before the resume"
    );
    assert_eq!(
        after.request(3)["constraints"]["timeout_seconds"],
        0.27,
        "the request says so too"
    );
}

#[tokio::test]
async fn e005_raised_max_tokens_and_lowered_temperature_carry_over_a_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let mut slow = common::fast_retry();
    slow.e005.max_retries = 2;
    slow.e005.delays_ms = vec![SLOW_MS];
    let mut fast = slow.clone();
    fast.e005.delays_ms = vec![1];
    let script = [Fault::LowGrade; 6];
    let run = run_until_retry(
        &db,
        &common::one_task_plan(""),
        run_config(engine(slow), &script),
        2,
    )
    .await;

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Partial);
    let after = TaskLog::read(&db, &run);
    assert_eq!(after.invocations, 3, "1 try + 2 retries");
    let sent: Vec<(u32, f64)> = (1..=3)
        .map(|n| {
            let c = after.attempt(n).constraints;
            (c.max_tokens, c.temperature)
        })
        .collect();
    // ×1.25 tokens and −0.1 temperature per retry (the floor is 0.1).
    assert_eq!(
        sent,
        vec![(12000, 0.25), (15000, 0.15), (18750, 0.1)],
        "the resumed attempt 2 keeps the first retry's adjustment"
    );
    assert_eq!(after.request(2)["constraints"]["max_tokens"], 15000);
}

#[tokio::test]
async fn transient_and_per_code_budgets_carry_over_a_resume_separately() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    // Transient errors and parse errors alternate; each has 2 retries of its own.
    let mut slow = common::fast_retry();
    slow.e002.max_retries = 2;
    slow.e002.delays_ms = vec![SLOW_MS];
    slow.transient.max_retries = 2;
    slow.transient.base_ms = 1;
    slow.transient.factor = 10.0;
    slow.transient.jitter = 0.0;
    let mut fast = slow.clone();
    fast.e002.delays_ms = vec![1];
    let (t, m) = (Fault::Transient, Fault::MalformedJson);
    let script = [t, m, t, m, t, m, t, m];
    // Attempt 1: transient (backoff retry 1); attempt 2: parse error (retry 1), and the
    // first process stops in that wait.
    let run = run_until_retry(
        &db,
        &common::one_task_plan(""),
        run_config(engine(slow), &script),
        3,
    )
    .await;

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Failed);
    let after = TaskLog::read(&db, &run);
    // Attempt 3: transient retry 2 of 2; attempt 4: parse retry 2 of 2; attempt 5:
    // transient with no retry left.
    assert_eq!(after.invocations, 5, "2 + 2 retries over both processes");
    assert_eq!(after.attempts_started(), vec![1, 2, 3, 4, 5]);
    assert_eq!(
        after.adjustments(),
        vec![
            "transient error: backoff retry 1 of 2",
            "parse error added to the prompt: retry 1 of 2",
            "transient error: backoff retry 2 of 2",
            "parse error added to the prompt: retry 2 of 2",
        ]
    );
    let transient: Vec<(bool, u64)> = after
        .retries
        .iter()
        .map(|r| (r.transient, r.delay_ms))
        .collect();
    // The resumed backoff is at its second step (1 ms × 10), not back at its first.
    assert_eq!(
        transient,
        vec![(true, 1), (false, SLOW_MS), (true, 10), (false, 1)]
    );
    let codes: Vec<ErrorCode> = after.retries.iter().map(|r| r.error_code).collect();
    let (e1, e2) = (ErrorCode::E001, ErrorCode::E002);
    assert_eq!(
        codes,
        vec![e1, e2, e1, e2],
        "transient errors are reported as E001"
    );
}

#[tokio::test]
async fn a_person_s_retry_starts_the_task_afresh_and_a_resume_keeps_it_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    // Parse errors use up A's E002 budget (2 retries) and A fails. A person retries it:
    // a validation error lowers the threshold once, and the process stops in that
    // retry's wait. On resume the threshold stays lowered once, and the E002 budget used
    // before the person's retry is not held against it.
    let mut slow = common::fast_retry();
    slow.e002.max_retries = 2;
    slow.e002.delays_ms = vec![1];
    slow.e003.max_retries = 2;
    slow.e003.delays_ms = vec![SLOW_MS];
    let mut fast = slow.clone();
    fast.e003.delays_ms = vec![1];
    let (m, i) = (Fault::MalformedJson, Fault::InvalidShape);
    let script = [m, m, m, i, m, m, Fault::None];
    let mut config = run_config(engine(slow), &script);
    config.engine.hold_open = true;
    let plan = parse_plan(&common::one_task_plan(""), "test plan").expect("plan");
    let mut s = start(&globals(&db), plan, config, None, false).expect("start");
    wait_for(&mut s, "the run's first end", |e| {
        matches!(e.event, EngineEvent::RunFinished(_))
    })
    .await;
    s.handle
        .control
        .send(Control::Retry("A".into()))
        .expect("send retry");
    wait_for(&mut s, "the retry to attempt 5", |e| retry_to(e, 5)).await;
    let run = interrupt(s).await;
    let before = TaskLog::read(&db, &run);
    assert_eq!(before.attempts_started(), vec![1, 2, 3, 4]);
    assert_eq!(
        before.retries.len(),
        3,
        "2 parse retries, then 1 after the reset"
    );

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Succeeded);
    let after = TaskLog::read(&db, &run);
    assert_eq!(after.attempts_started(), vec![1, 2, 3, 4, 5, 6, 7]);
    assert_eq!((after.status.as_str(), after.attempts), ("success", 7));
    let thresholds: Vec<&str> = after
        .started
        .iter()
        .map(|(_, s)| s.quality_threshold.as_str())
        .collect();
    assert_eq!(
        thresholds,
        vec!["B", "B", "B", "B", "C", "C", "C"],
        "lowered once after the reset, and still so after the resume"
    );
    assert_eq!(
        after.adjustments()[3..],
        [
            "parse error added to the prompt: retry 1 of 2",
            "parse error added to the prompt: retry 2 of 2",
        ],
        "the parse errors before the person's retry do not count"
    );
}

#[tokio::test]
async fn each_batch_of_a_batched_task_resumes_with_its_own_retries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    // An input over 50k tokens: task A runs one invocation (with its own retries) per
    // batch. Batch 1 fails once with a parse error, then succeeds; batch 2 fails once
    // with a validation error (threshold lowered to C), and the process stops in that
    // retry's wait.
    let line = "The reverse diffusion process removes a little noise at each step, conditioned on the scene and the route.\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat(3_500)).expect("big input");
    let plan = serde_json::json!({"plan_id": "P", "execution_mode": "Deep_Internalization", "tasks": [
        {"task_id": "A", "agent": "Scholar_Internalizer", "instruction": "Use the reference.",
         "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "B", "max_atoms": 2},
         "data_references": [{"ref_type": "file", "path": "big.txt"}]}]})
    .to_string();
    let mut slow = common::fast_retry();
    slow.e002.delays_ms = vec![1];
    slow.e003.delays_ms = vec![SLOW_MS];
    let mut fast = slow.clone();
    fast.e003.delays_ms = vec![1];
    let mut config = run_config(
        engine(slow),
        &[Fault::MalformedJson, Fault::None, Fault::InvalidShape],
    );
    config.engine.workspace = dir.path().to_path_buf();
    let run = run_until_retry(&db, &plan, config, 4).await;

    assert_eq!(resume(&db, &run, fast).await, RunStatus::Succeeded);
    let after = TaskLog::read(&db, &run);
    let batch_of = |n: u32| {
        after.request(n)["user_prompt"]["context"]["inputs"]
            .as_array()
            .and_then(|inputs| inputs.iter().find_map(|i| i["batch"]["index"].as_u64()))
            .unwrap_or_else(|| panic!("attempt {n} has no batch"))
    };
    let last = after.started.last().expect("attempts").1.attempt;
    let batches = batch_of(last) as usize;
    assert!(batches >= 3, "{batches} batches");
    let sent: Vec<(u32, u64, &str)> = after
        .started
        .iter()
        .map(|(_, s)| (s.attempt, batch_of(s.attempt), s.quality_threshold.as_str()))
        .collect();
    // The resumed process does not ask again for batch 1, whose success the log holds;
    // batch 2 goes on with the retry it had scheduled (its lowered threshold), the
    // others start afresh.
    let mut want = vec![(1, 1, "B"), (2, 1, "B"), (3, 2, "B"), (4, 2, "C")];
    want.extend((3..=batches as u64).map(|b| (b as u32 + 2, b, "B")));
    assert_eq!(sent, want);
    let told = |n: u32| {
        after.request(n)["user_prompt"]["instruction"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let validation_error = after.errors[2].clone().expect("attempt 3's error");
    assert!(
        told(4).contains(&validation_error),
        "batch 2 is told its own error: {}",
        told(4)
    );
    assert!(
        !told(5).contains("was rejected"),
        "batch 3 starts afresh: {}",
        told(5)
    );
}

#[test]
fn a_task_killed_in_its_retries_resumes_with_the_budget_it_had_left() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Every call is refused with 429 except the 4th, which stalls: the process is killed
    // during it, after 3 attempts and 3 of the 5 transient retries.
    let too_many = MockFault::Status {
        code: 429,
        retry_after: None,
    };
    let mut script = vec![too_many.clone(); 3];
    script.push(MockFault::Stall);
    script.extend(vec![too_many; 20]);
    let server = MockServer::start(
        MockConfig {
            stream_ms: 5,
            script: HashMap::from([("A".to_string(), script)]),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    common::mock_profile(dir.path(), &server.url());
    std::fs::write(dir.path().join("plan.json"), common::one_task_plan("")).expect("plan");
    let db = dir.path().join("k.db");
    let args = ["--db", "k.db", "--config", "plexus.toml"];
    let run_args = [
        "run",
        "--headless",
        "plan.json",
        "--retry-delay-div",
        "100",
        "--provider",
        "mock",
    ];
    let mut child =
        common::spawn_plexus(dir.path(), &[&args[..], &run_args[..]].concat(), "run.txt");
    let deadline = Instant::now() + Duration::from_secs(120);
    let run = loop {
        assert!(
            child.0.try_wait().expect("wait").is_none(),
            "the run ended before the stalled call"
        );
        assert!(Instant::now() < deadline, "the 4th call never came");
        std::thread::sleep(Duration::from_millis(20));
        if server.requests() < 4 {
            continue;
        }
        let Some(run) = Store::open(&db)
            .and_then(|s| s.list_runs())
            .ok()
            .and_then(|r| r.first().map(|r| r.run_id.clone()))
        else {
            continue;
        };
        // The 4th call reached the server; its start must be in the log too (the
        // writer commits a moment after the request goes out) for the resume to find it.
        let log = TaskLog::read(&db, &run);
        if log.retries.len() == 3 && log.started.len() == 4 {
            break run;
        }
    };
    child.0.kill().expect("kill -9");
    child.0.wait().expect("reap");
    let before = TaskLog::read(&db, &run);
    assert_eq!(before.invocations, 3, "attempt 4 was in flight");

    let (status, err) = common::run_plexus(
        dir.path(),
        &[&args[..], &["resume", &run, "--headless"]].concat(),
    );
    assert!(!status.success(), "every call is refused: {err}");
    assert!(err.contains("crash detected"), "{err}");
    let after = TaskLog::read(&db, &run);
    assert_eq!(
        after.invocations, 7,
        "1 try + 5 transient retries over both processes, and the call lost in the crash, not 3 + 6"
    );
    assert_eq!((after.status.as_str(), after.attempts), ("failed", 7));
    let rows: Vec<(i64, String)> = after
        .store
        .invocations(&run)
        .expect("invocations")
        .iter()
        .map(|i| (i.attempt, i.status.clone().unwrap_or_default()))
        .collect();
    let attempts: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        attempts,
        vec![1, 2, 3, 4, 5, 6, 7],
        "attempt 4 was lost in the crash (closed on resume); the resume makes 5, 6 and 7"
    );
    assert_eq!(rows[3].1, "lost", "{rows:?}");
    assert_eq!(
        server.requests(),
        7,
        "the killed call, and 3 after the resume"
    );
    let want: Vec<String> = (1..=5)
        .map(|n| format!("transient error: backoff retry {n} of 5"))
        .collect();
    assert_eq!(after.adjustments(), want);
    // The backoff goes on growing where it was: 10 ms × 2^(n−1) ± 20% (÷100).
    for (n, r) in after.retries.iter().enumerate() {
        let raw = 10.0 * 2f64.powi(n as i32);
        let d = r.delay_ms as f64;
        assert!(
            (raw * 0.8 - 0.5..=raw * 1.2 + 0.5).contains(&d),
            "retry {}: {d} ms, not {raw} ± 20%",
            n + 1
        );
    }
}

/// A retry's backoff that was still pending when the run stopped is still waited on
/// resume (counted from when it was set): the resumed process, keeping the run's retry
/// policy, starts the retried attempt no sooner than the delay the log recorded.
#[tokio::test]
async fn a_backoff_pending_when_the_run_stopped_is_still_waited_on_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let mut policy = common::fast_retry();
    policy.e002.max_retries = 2;
    policy.e002.delays_ms = vec![1_500];
    let script = [Fault::MalformedJson; 1];
    let run = run_until_retry(
        &db,
        &common::one_task_plan(""),
        run_config(engine(policy), &script),
        2,
    )
    .await;
    // Resumed at once, with the retry policy the run recorded.
    let (plan, mut config, resuming) = prepare_resume(&db, &run).expect("prepare resume");
    config.engine.hold_open = false;
    let s = start(&globals(&db), plan, config, Some(resuming), false).expect("resume");
    assert_eq!(s.finish().await.expect("ends"), RunStatus::Succeeded);
    let store = Store::open(&db).expect("store");
    let mut retry_ts = None;
    let mut second_ts = None;
    for e in store.events(&run, 1, u64::MAX).expect("events") {
        match e.event.expect("decodes") {
            EngineEvent::RetryScheduled(r) if r.next_attempt == 2 => retry_ts = Some(e.ts),
            EngineEvent::InvocationStarted(s) if s.attempt == 2 => second_ts = Some(e.ts),
            _ => {}
        }
    }
    let (retry_ts, second_ts) = (retry_ts.expect("the retry"), second_ts.expect("attempt 2"));
    assert!(
        second_ts - retry_ts >= 1_490,
        "attempt 2 started {} ms after its retry was set, before the 1500 ms backoff",
        second_ts - retry_ts
    );
}
