//! Driving the real binary: a command with nothing from the outside environment, a child
//! that is killed when the test fails, a plan that keeps a run busy for a few seconds, and
//! what its database says while and after it runs.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plexus::data::store::Store;
use plexus::dev::gen_plan::{generate, GenSpec};
use plexus::model::event::EngineEvent;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_plexus");

/// Task statuses that are final.
pub const FINAL: [&str; 5] = ["success", "partial", "failed", "timeout", "blocked"];

/// `plexus` run in `dir` with an empty config and no `PLEXUS_*` setting from outside;
/// stdin is empty (so it is headless unless a test gives it a terminal).
pub fn plexus(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    clean_env(&mut c, dir);
    c
}

/// `sh -c SCRIPT ARGS…` in `dir` with the environment [`plexus`] gives.
pub fn sh(dir: &Path, script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    clean_env(&mut c, dir);
    c
}

fn clean_env(c: &mut Command, dir: &Path) {
    let config = dir.join("none.toml");
    if !config.exists() {
        std::fs::write(&config, "").expect("write the empty config");
    }
    c.current_dir(dir)
        .env("PLEXUS_CONFIG", &config)
        .stdin(Stdio::null());
    for v in [
        "PLEXUS_DB",
        "PLEXUS_PROVIDER",
        "PLEXUS_THEME",
        "PLEXUS_LOG",
        "PLEXUS_WORKER_THREADS",
        "PLEXUS_CRASH_TEST",
        "PLEXUS_CRASH_TEST_TASK",
        "PLEXUS_TEST_PAUSE",
        "PLEXUS_STATUS_EVERY",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        c.env_remove(v);
    }
}

/// What a finished command printed.
#[derive(Debug)]
pub struct Out {
    /// Exit code (None: killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `cmd` to its end.
pub fn output(cmd: &mut Command) -> Out {
    let o: Output = cmd.output().expect("run plexus");
    Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `plexus --db DB run PLAN` in `dir` at full speed (no pacing of the simulated stream),
/// headless, to its end.
pub fn run_fast(dir: &Path, db: &Path, plan: &str) -> Out {
    output(plexus(dir).arg("--db").arg(db).args([
        "run",
        plan,
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
        "--headless",
    ]))
}

/// A plan of `tasks` simulated tasks, two at a time after the first: at `--chunk-ms 60`
/// and `--concurrency 2` each layer takes about two seconds.
pub fn busy_plan(dir: &Path, tasks: usize) -> PathBuf {
    gen_plan(dir, tasks, 2)
}

/// A generated plan of `tasks` tasks in layers `width` wide, written to `plan.json`.
pub fn gen_plan(dir: &Path, tasks: usize, width: usize) -> PathBuf {
    let path = dir.join("plan.json");
    let spec = GenSpec {
        tasks,
        width,
        fan_in: 3,
        max_atoms: 2,
    };
    std::fs::write(&path, generate(spec).to_string()).expect("write the plan");
    path
}

/// A child process (its stderr in a file, its stdout in another beside it), killed if
/// the test ends while it runs.
pub struct Running {
    /// The process.
    pub child: Child,
    stderr: PathBuf,
    stdout: PathBuf,
}

impl Running {
    /// Starts `cmd` with stderr written to `stderr` and stdout to `stderr` + `.out`.
    pub fn spawn(cmd: &mut Command, stderr: PathBuf) -> Running {
        let file = File::create(&stderr).expect("create the stderr file");
        let stdout = stderr.with_extension("out");
        let out = File::create(&stdout).expect("create the stdout file");
        let child = cmd
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(file))
            .spawn()
            .expect("spawn plexus");
        Running {
            child,
            stderr,
            stdout,
        }
    }

    /// What it wrote on stdout so far.
    #[allow(dead_code)] // not every test binary that shares this module reads it
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    /// Its process id.
    pub fn pid(&self) -> nix::unistd::Pid {
        nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"))
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for its end, at most `limit`; fails with its stderr on timeout.
    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let end = Instant::now() + limit;
        loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return st;
            }
            assert!(
                Instant::now() < end,
                "plexus did not exit within {limit:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A run caught mid-way.
#[derive(Debug)]
pub struct MidRun {
    /// The run.
    pub run_id: String,
    /// Invocations started and not ended.
    pub in_flight: Vec<String>,
    /// Finished tasks and how many invocations each made.
    pub finished: BTreeMap<String, i64>,
}

/// The run in `db` as it stands: finished tasks, invocations in flight and how long ago
/// the oldest of those started (ms). None while there is no database or run yet.
pub fn snapshot(db: &Path) -> Option<(MidRun, i64)> {
    let store = Store::open(db).ok()?;
    let run_id = store.list_runs().ok()?.first()?.run_id.clone();
    let ended: Vec<String> = store
        .invocations(&run_id)
        .ok()?
        .into_iter()
        .map(|i| i.invocation_id)
        .collect();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let mut in_flight = Vec::new();
    let mut oldest = 0;
    for e in store.events(&run_id, 1, u64::MAX).ok()? {
        let started = matches!(e.event, Ok(EngineEvent::InvocationStarted(_)));
        if let (true, Some(inv)) = (started, e.invocation_id) {
            if !ended.contains(&inv) {
                oldest = oldest.max(now - e.ts);
                in_flight.push(inv);
            }
        }
    }
    let finished = finished_tasks(&store, &run_id);
    Some((
        MidRun {
            run_id,
            in_flight,
            finished,
        },
        oldest,
    ))
}

/// Finished tasks of `run_id` and their invocation counts.
pub fn finished_tasks(store: &Store, run_id: &str) -> BTreeMap<String, i64> {
    let counts: BTreeMap<String, i64> = store
        .invocation_counts(run_id)
        .expect("invocation counts")
        .into_iter()
        .collect();
    store
        .tasks(run_id)
        .expect("tasks")
        .into_iter()
        .filter(|t| FINAL.contains(&t.status.as_str()))
        .map(|t| {
            let n = counts.get(&t.task_id).copied().unwrap_or(0);
            (t.task_id, n)
        })
        .collect()
}

/// Waits until the run of `db` has `min_finished` finished tasks and invocations in
/// flight that started less than 800 ms ago (so they are still going when a signal
/// arrives right after), then returns it.
pub fn wait_mid_run(db: &Path, proc: &mut Running, min_finished: usize) -> MidRun {
    let end = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(
            proc.running(),
            "the run ended before the test could stop it; stderr:\n{}",
            proc.stderr()
        );
        if let Some((mid, oldest)) = snapshot(db) {
            if mid.finished.len() >= min_finished && !mid.in_flight.is_empty() && oldest < 800 {
                return mid;
            }
        }
        assert!(
            Instant::now() < end,
            "the run never reached {min_finished} finished tasks with invocations in flight; stderr:\n{}",
            proc.stderr()
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// The status of `run_id` as `plexus runs --json` lists it.
pub fn listed_status(dir: &Path, db: &Path, run_id: &str) -> String {
    let out = output(plexus(dir).arg("--db").arg(db).args(["runs", "--json"]));
    assert_eq!(out.code, Some(0), "plexus runs --json: {}", out.stderr);
    let runs: serde_json::Value = serde_json::from_str(&out.stdout).expect("runs --json");
    runs.as_array()
        .into_iter()
        .flatten()
        .find(|r| r["run_id"] == run_id)
        .and_then(|r| r["status"].as_str())
        .unwrap_or_else(|| panic!("run {run_id} is not listed: {}", out.stdout))
        .to_string()
}

/// The kinds of the events `plexus log RUN` prints.
pub fn logged_kinds(dir: &Path, db: &Path, run_id: &str) -> Vec<String> {
    let out = output(plexus(dir).arg("--db").arg(db).args(["log", run_id]));
    assert_eq!(out.code, Some(0), "plexus log: {}", out.stderr);
    out.stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["kind"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

/// Resumes `run_id` headless and checks it ran to an end with the exit code its outcome
/// calls for, without invoking a task that had finished before (`finished`). Returns the
/// final status.
pub fn resume_to_the_end(
    dir: &Path,
    db: &Path,
    run_id: &str,
    finished: &BTreeMap<String, i64>,
) -> String {
    let out = output(
        plexus(dir)
            .arg("--db")
            .arg(db)
            // The rest at full speed: what is checked is what the resume keeps.
            .args([
                "resume",
                run_id,
                "--headless",
                "--chunk-ms",
                "0",
                "--first-chunk-ms",
                "0",
            ]),
    );
    let store = Store::open(db).expect("open the database");
    let status = store.run(run_id).expect("the run").status;
    let want = match status.as_str() {
        "succeeded" | "partial" => 0,
        "failed" | "cancelled" => 3,
        other => panic!("the resumed run ended `{other}`; stderr:\n{}", out.stderr),
    };
    assert_eq!(
        out.code,
        Some(want),
        "resume exit code for a run that ended {status}; stderr:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("error:"), "{}", out.stderr);
    let after = finished_tasks(&store, run_id);
    for (task, n) in finished {
        assert_eq!(
            after.get(task),
            Some(n),
            "task {task} had finished before the stop and was invoked again"
        );
    }
    let tasks = store.tasks(run_id).expect("tasks");
    assert_eq!(after.len(), tasks.len(), "every task ended: {tasks:?}");
    assert_eq!(store.integrity_check().expect("integrity check"), "ok");
    status
}

/// Every file under `dir`, by path relative to it, with its bytes (a tree compared
/// byte for byte).
#[allow(dead_code)] // not every test binary that shares this module compares trees
pub fn tree_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("inside").display().to_string();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}
