//! Shared helpers of the integration tests: run a plan on the simulated provider into a
//! temporary database and read back what happened.

#![allow(dead_code)]

pub mod bin;

use std::path::PathBuf;
use std::sync::Arc;

use plexus::engine::retry::{Backoff, CodeRetry, RetryPolicy};
use plexus::engine::{start_run, EngineConfig, RunOutcome, RunSpec};
use plexus::event::{EngineEvent, Envelope};
use plexus::plan::parse_plan;
use plexus::provider::{SimConfig, SimulatedProvider};
use plexus::store::{spawn_writer, EventRow, RunRow, Store, WriteOp};

/// Millisecond retry delays for tests.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        e001: CodeRetry {
            max_retries: 3,
            delays_ms: vec![5, 15, 30],
        },
        e002: CodeRetry {
            max_retries: 2,
            delays_ms: vec![3],
        },
        e003: CodeRetry {
            max_retries: 2,
            delays_ms: vec![3],
        },
        e004: CodeRetry {
            max_retries: 2,
            delays_ms: vec![4],
        },
        e005: CodeRetry {
            max_retries: 2,
            delays_ms: vec![3],
        },
        transient: Backoff {
            max_retries: 3,
            base_ms: 2,
            factor: 2.0,
            max_ms: 100,
            jitter: 0.0,
        },
        ..RetryPolicy::default()
    }
}

/// Engine config with fast retries.
pub fn test_config() -> EngineConfig {
    EngineConfig {
        retry: fast_retry(),
        timeout_scale: 0.0002,
        ..EngineConfig::default()
    }
}

/// Simulated provider with no latency.
pub fn quick_sim() -> SimConfig {
    SimConfig {
        seed: 3,
        first_chunk_ms: 0,
        chunk_ms: 0,
        min_chunks: 20,
        ..SimConfig::default()
    }
}

/// A finished test run.
pub struct Ran {
    pub outcome: RunOutcome,
    pub store: Store,
    pub run_id: String,
    pub events: Vec<EventRow>,
    pub delivered: Vec<Arc<Envelope>>,
    pub _dir: tempfile::TempDir,
    pub db: PathBuf,
}

impl Ran {
    /// Decoded events of a kind, with their task id.
    pub fn of<'a, T>(
        &'a self,
        pick: impl Fn(&'a EngineEvent) -> Option<&'a T> + 'a,
    ) -> Vec<(Option<String>, &'a T)> {
        self.events
            .iter()
            .filter_map(|e| {
                e.event
                    .as_ref()
                    .ok()
                    .and_then(&pick)
                    .map(|t| (e.task_id.clone(), t))
            })
            .collect()
    }

    /// Invocations made per task.
    pub fn invocations_of(&self, task: &str) -> i64 {
        self.store
            .invocation_counts(&self.run_id)
            .expect("counts")
            .into_iter()
            .find(|(t, _)| t == task)
            .map(|(_, n)| n)
            .unwrap_or(0)
    }

    /// A task's stored status.
    pub fn status_of(&self, task: &str) -> String {
        self.store
            .tasks(&self.run_id)
            .expect("tasks")
            .into_iter()
            .find(|t| t.task_id == task)
            .map(|t| t.status)
            .unwrap_or_default()
    }
}

/// Runs plan JSON to the end on the simulated provider.
pub async fn run_plan(plan_json: &str, sim: SimConfig, config: EngineConfig) -> Ran {
    run_plan_with(plan_json, Arc::new(SimulatedProvider::new(sim)), config).await
}

/// Runs plan JSON to the end on `provider`.
pub async fn run_plan_with(
    plan_json: &str,
    provider: Arc<dyn plexus::provider::Provider>,
    config: EngineConfig,
) -> Ran {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let plan = Arc::new(parse_plan(plan_json, "test plan").expect("valid plan"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (writer, thread) = spawn_writer(&db, Some(tx)).expect("writer");
    let run_id = "R-test".to_string();
    writer
        .send(WriteOp::CreateRun(Box::new(RunRow::for_plan(
            &run_id,
            &plan,
            "simulated",
            "{}".into(),
        ))))
        .expect("create run");
    let known = ["MATH_VAD_ATTENTION_01".to_string()].into_iter().collect();
    let handle = start_run(RunSpec {
        db: Some(db.clone()),
        run_id: run_id.clone(),
        plan,
        provider,
        config,
        writer: writer.clone(),
        known_assets: known,
        resume: None,
    });
    let outcome = handle.join.await.expect("join").expect("run");
    drop(writer);
    thread.join().expect("writer thread");
    let mut delivered = Vec::new();
    while let Ok(batch) = rx.try_recv() {
        delivered.extend(batch);
    }
    let store = Store::open(&db).expect("store");
    let events = store.events(&run_id, 1, u64::MAX).expect("events");
    Ran {
        outcome,
        store,
        run_id,
        events,
        delivered,
        _dir: dir,
        db,
    }
}

/// A one-task plan (plus optional extra tasks JSON) for agent Scholar.
pub fn one_task_plan(extra_tasks: &str) -> String {
    format!(
        r#"{{"plan_id":"P","execution_mode":"Deep_Internalization","tasks":[
        {{"task_id":"A","agent":"Scholar_Internalizer","instruction":"Analyse the denoising formula.",
          "output_requirements":{{"required_fields":["content.mathematical_expression","provenance.paper_location"],"quality_threshold":"B","max_atoms":3}}}}
        {extra_tasks}]}}"#
    )
}
