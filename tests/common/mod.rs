//! Shared helpers of the integration tests: run a plan on the simulated provider into a
//! temporary database and read back what happened.

#![allow(dead_code)]

pub mod bin;
#[cfg(unix)]
pub mod pty;
pub mod raw_http;
pub mod rerun;
pub mod screen;
pub mod snapshots;
pub mod wire;

use std::path::PathBuf;
use std::sync::Arc;

use plexus::data::provider::{SimConfig, SimulatedProvider};
use plexus::data::store::{spawn_writer, EventRow, RunRow, Store, WriteOp};
use plexus::model::event::{EngineEvent, Envelope};
use plexus::model::plan::parse_plan;
use plexus::run::engine::retry::{Backoff, CodeRetry, RetryPolicy};
use plexus::run::engine::{start_run, EngineConfig, RunOutcome, RunSpec};

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

    /// The stored request of `task`'s first invocation, and its prompt tokens.
    pub fn request_of(&self, task: &str) -> (serde_json::Value, i64) {
        let inv = self
            .store
            .invocations(&self.run_id)
            .expect("invocations")
            .into_iter()
            .find(|i| i.task_id == task)
            .expect("an invocation");
        let req = self
            .store
            .invocation_request(&inv.invocation_id)
            .expect("query")
            .expect("request");
        (req, inv.prompt_tokens)
    }

    /// The first input of the stored request of `task`'s first invocation.
    pub fn first_input(&self, task: &str) -> serde_json::Value {
        self.request_of(task).0["user_prompt"]["context"]["inputs"][0].clone()
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
    provider: Arc<dyn plexus::data::provider::Provider>,
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

/// A child process, killed and reaped when dropped (a failed assertion, a timeout).
pub struct ChildGuard(pub std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary in `dir` (no stdin or stdout; stderr to `stderr_file`), without
/// the environment's database and provider.
pub fn spawn_plexus(dir: &std::path::Path, args: &[&str], stderr_file: &str) -> ChildGuard {
    let err = std::fs::File::create(dir.join(stderr_file)).expect("stderr file");
    ChildGuard(
        std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
            .current_dir(dir)
            .args(args)
            .env_remove("PLEXUS_DB")
            .env_remove("PLEXUS_PROVIDER")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(err)
            .spawn()
            .expect("spawn plexus"),
    )
}

/// Runs the binary in `dir` to its end (at most 5 minutes); returns its exit status
/// and standard error.
pub fn run_plexus(dir: &std::path::Path, args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let name = format!("stderr-{}.txt", RUNS.fetch_add(1, Ordering::Relaxed));
    let mut child = spawn_plexus(dir, args, &name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.0.try_wait().expect("wait") {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "plexus {args:?} did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (
        status,
        std::fs::read_to_string(dir.join(name)).unwrap_or_default(),
    )
}

/// A plexus.toml in `dir` with an OpenAI-compatible profile `mock` at `url`.
pub fn mock_profile(dir: &std::path::Path, url: &str) {
    std::fs::write(
        dir.join("plexus.toml"),
        format!("[providers.mock]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n"),
    )
    .expect("plexus.toml");
}

/// Every `.rs` file under the crate's `src/`, as (path from the crate root with `/`,
/// text), sorted by path.
pub fn src_files() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut dirs = vec![root.join("src")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("src").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under the root");
                let text = std::fs::read_to_string(&p).expect("source");
                out.push((rel.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    out.sort();
    out
}
