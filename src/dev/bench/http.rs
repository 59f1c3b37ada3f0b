//! `plexus bench http`: a generated plan of independent tasks run through the HTTP
//! provider against `plexus dev mock-server` in a child process, which streams every answer
//! over `stream_ms`, with `calls` in flight. Measures plexus alone: wall time, CPU time
//! (the server's is its own process's) and peak memory, in total and per call (memory per
//! call in flight: the peak above the memory held before the calls started). Also
//! `plexus dev mock-server`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::engine::{create_run, peak_rss_mib, rss_mib, run_to_end};
use crate::cli::args::HttpBenchOpts;
use crate::data::provider::{HttpProvider, Provider, ProviderKind, ProviderProfile, SimConfig};
use crate::data::store::spawn_writer;
use crate::dev::gen_plan::{generate, GenSpec};
use crate::model::plan::parse_plan;
use crate::run::engine::EngineConfig;

/// Figures of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HttpBenchReport {
    /// Tasks run.
    pub tasks: usize,
    /// Calls in flight.
    pub calls: usize,
    /// API spoken.
    pub api: String,
    /// Time each answer streamed, ms.
    pub stream_ms: u64,
    /// Wall time, s.
    pub seconds: f64,
    /// The ideal: tasks / calls × stream time, s.
    pub ideal_seconds: f64,
    /// CPU time of plexus (user + system), s.
    pub cpu_seconds: f64,
    /// cpu_seconds / seconds.
    pub cores_used: f64,
    /// Peak resident memory, MiB.
    pub peak_rss_mib: f64,
    /// Resident memory just before the calls started, MiB.
    pub baseline_rss_mib: f64,
    /// CPU time of plexus per call, ms (cpu_seconds / tasks).
    pub cpu_ms_per_call: f64,
    /// Memory per call in flight, KiB: (peak − baseline RSS) / calls in flight.
    pub kib_per_call_in_flight: f64,
    /// CPU time of the mock server process, s (not counted above).
    pub server_cpu_seconds: f64,
    /// Events logged.
    pub events: u64,
    /// Transactions the store writer committed.
    pub batches: u64,
    /// Run status.
    pub status: String,
    /// Tasks that succeeded.
    pub succeeded: usize,
}

/// CPU time of a process so far, s (Linux `/proc/PID/stat`; 0 elsewhere).
fn cpu_seconds_of(pid: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the parenthesised command name: utime is the 12th, stime the 13th.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn cpu_seconds() -> f64 {
    cpu_seconds_of("self")
}

/// Kills the child server when dropped (its stdout kept open until then).
struct ChildServer(Child, Option<BufReader<std::process::ChildStdout>>);

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_server(o: &HttpBenchOpts) -> Result<(ChildServer, String)> {
    let exe = std::env::current_exe().wrap_err("cannot find the plexus binary")?;
    let mut child = Command::new(exe)
        .args([
            "dev",
            "mock-server",
            "--port",
            "0",
            "--stream-ms",
            &o.stream_ms.to_string(),
            "--chunks",
            &o.chunks.to_string(),
            "--threads",
            "2",
        ])
        .env_remove("PLEXUS_MOCK_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .wrap_err("cannot start the mock server")?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| eyre!("no stdout from the mock server"))?;
    let mut server = ChildServer(child, None);
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    server.1 = Some(reader);
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .ok_or_else(|| eyre!("the mock server did not say where it listens: {line:?}"))?
        .to_string();
    Ok((server, url))
}

/// Runs the benchmark.
pub async fn run_http_bench(o: &HttpBenchOpts) -> Result<HttpBenchReport> {
    crate::base::open_files::raise_open_files();
    let kind = match o.api.as_str() {
        "openai" => ProviderKind::Openai,
        "anthropic" => ProviderKind::Anthropic,
        other => return Err(eyre!("--api must be openai or anthropic, not {other:?}")),
    };
    std::fs::create_dir_all(&o.dir)?;
    let db = o.dir.join("bench-http.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let (server, url) = spawn_server(o)?;
    let mut profile = ProviderProfile::simulated();
    profile.name = "bench".into();
    profile.kind = kind;
    profile.base_url = if kind == ProviderKind::Openai {
        format!("{url}/v1")
    } else {
        url
    };
    profile.model = "mock".into();
    profile.concurrency = o.calls;
    let provider: Arc<dyn Provider> =
        Arc::new(HttpProvider::new(profile).map_err(|e| eyre!("{e}"))?);
    // Independent tasks: the generated layers with their edges removed.
    let mut plan_json = generate(GenSpec {
        tasks: o.tasks,
        width: o.calls,
        fan_in: 1,
        max_atoms: 1,
    });
    if let Some(tasks) = plan_json["tasks"].as_array_mut() {
        for t in tasks {
            t["depends_on"] = serde_json::json!([]);
        }
    }
    let plan = Arc::new(parse_plan(&plan_json.to_string(), "generated").map_err(|e| eyre!("{e}"))?);
    // The generated JSON tree is not needed once parsed: held through the run, it was
    // about 60 MiB of the memory measured before the calls at 20,000 tasks.
    drop(plan_json);
    let engine = EngineConfig {
        concurrency: o.calls,
        ..EngineConfig::default()
    };
    let (writer, thread) = spawn_writer(&db, None)?;
    let run_id = "R-bench-http".to_string();
    create_run(
        &writer,
        &run_id,
        &plan,
        &provider.name(),
        &engine,
        &SimConfig::default(),
        "bench",
    )?;
    let stats = writer.stats().clone();
    let baseline_rss = rss_mib();
    let cpu0 = cpu_seconds();
    let timed = run_to_end(writer, thread, run_id, plan, provider, engine).await?;
    let (outcome, seconds) = (timed.outcome, timed.total_seconds);
    let cpu = cpu_seconds() - cpu0;
    let peak = peak_rss_mib();
    let server_cpu = cpu_seconds_of(&server.0.id().to_string());
    drop(server);
    let succeeded = crate::data::store::Store::open(&db)?
        .tasks("R-bench-http")?
        .iter()
        .filter(|t| t.status == "success")
        .count();
    Ok(HttpBenchReport {
        tasks: o.tasks,
        calls: o.calls,
        api: o.api.clone(),
        stream_ms: o.stream_ms,
        seconds,
        ideal_seconds: (o.tasks as f64 / o.calls as f64).ceil() * o.stream_ms as f64 / 1000.0,
        cpu_seconds: cpu,
        cores_used: cpu / seconds.max(1e-9),
        peak_rss_mib: peak,
        baseline_rss_mib: baseline_rss,
        cpu_ms_per_call: cpu * 1000.0 / o.tasks.max(1) as f64,
        kib_per_call_in_flight: (peak - baseline_rss).max(0.0) * 1024.0
            / o.calls.min(o.tasks).max(1) as f64,
        server_cpu_seconds: server_cpu,
        events: stats.events.load(std::sync::atomic::Ordering::Relaxed),
        batches: stats.batches.load(std::sync::atomic::Ordering::Relaxed),
        status: outcome.status.as_str().to_string(),
        succeeded,
    })
}

/// Prints a report as the README shows it.
pub fn print_http_report(r: &HttpBenchReport) {
    crate::outln!("api                   {}", r.api);
    crate::outln!(
        "tasks                 {} ({} succeeded)",
        r.tasks,
        r.succeeded
    );
    crate::outln!("calls in flight       {}", r.calls);
    crate::outln!("stream per answer     {} ms", r.stream_ms);
    crate::outln!("run status            {}", r.status);
    crate::outln!(
        "wall time             {:.2} s (ideal {:.1} s)",
        r.seconds,
        r.ideal_seconds
    );
    crate::outln!(
        "CPU (plexus)          {:.2} s = {:.2} cores on average",
        r.cpu_seconds,
        r.cores_used
    );
    crate::outln!("CPU per call          {:.3} ms", r.cpu_ms_per_call);
    crate::outln!(
        "peak memory (RSS)     {:.1} MiB ({:.1} MiB before the calls)",
        r.peak_rss_mib,
        r.baseline_rss_mib
    );
    crate::outln!(
        "memory per call       {:.1} KiB in flight",
        r.kib_per_call_in_flight
    );
    crate::outln!(
        "CPU (mock server)     {:.2} s (its own process)",
        r.server_cpu_seconds
    );
    crate::outln!(
        "events logged         {} ({} transactions)",
        r.events,
        r.batches
    );
}
