//! `plexus bench react`: the tool-using loop's own cost and the conversation manager's.
//!
//! The loop: the same generated plan run twice on the simulated provider with zero
//! latency, once as plain tasks and once with every task using five tools (so each
//! makes six model calls: five tool steps and its answer); the difference in wall time,
//! divided by the tool steps, is what one step costs beyond the model (the request
//! with its turns, the tool run, the events, the conversation count). Medians of
//! `--runs` interleaved pairs. The conversation: counting and compressing a generated
//! conversation of `--conversation-tokens` tokens.

use std::path::Path;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};
use serde::Serialize;
use serde_json::{json, Value};

use super::engine::{create_run, run_to_end};
use crate::base::conversation::{bench_conversation, BenchFigures};
use crate::cli::args::ReactBenchOpts;
use crate::data::provider::{SimConfig, SimulatedProvider};
use crate::data::store::spawn_writer;
use crate::model::plan::parse_plan;
use crate::run::engine::EngineConfig;

/// What was measured.
#[derive(Debug, Clone, Serialize)]
pub struct ReactBenchReport {
    /// Tasks per run.
    pub tasks: usize,
    /// Tool steps per tool-using run.
    pub tool_steps: u64,
    /// Median seconds of the plain run.
    pub plain_seconds: f64,
    /// Median seconds of the tool-using run.
    pub tools_seconds: f64,
    /// Median cost of one step beyond the model, ms.
    pub ms_per_step: f64,
    /// Every pair's figure (ms per step), in order.
    pub pairs_ms_per_step: Vec<f64>,
    /// The conversation manager's figures.
    pub conversation: BenchFigures,
}

const TOOLS: [&str; 5] = [
    "get_now",
    "calculate_date",
    "file_search",
    "file_reader",
    "atom_query",
];

fn plan(tasks: usize, tools: bool) -> Value {
    let tasks: Vec<Value> = (0..tasks)
        .map(|i| {
            json!({"task_id": format!("T{i:05}"), "agent": "Researcher",
                "instruction": "Look it up, then answer.",
                "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}})
        })
        .collect();
    let agent = if tools {
        json!({"tools": TOOLS})
    } else {
        json!({})
    };
    json!({"plan_id": "BENCH_REACT", "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": agent}, "tasks": tasks})
}

/// One run of the plan; returns its seconds and the tool steps it made.
async fn run_once(dir: &Path, tasks: usize, tools: bool, k: usize) -> Result<(f64, u64)> {
    let text = plan(tasks, tools).to_string();
    let plan = Arc::new(parse_plan(&text, "bench react plan")?);
    let db = dir.join(format!("react-{k}-{tools}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let sim = SimConfig {
        chunk_ms: 0,
        first_chunk_ms: 0,
        ..SimConfig::default()
    };
    let engine = EngineConfig {
        concurrency: 64,
        workspace: dir.join("workspace"),
        ..EngineConfig::default()
    };
    let (writer, thread) = spawn_writer(&db, None)?;
    let run_id = format!("R-bench-react-{k}-{tools}");
    create_run(
        &writer,
        &run_id,
        &plan,
        "simulated",
        &engine,
        &sim,
        "simulated",
    )?;
    let timed = run_to_end(
        writer,
        thread,
        run_id,
        plan,
        Arc::new(SimulatedProvider::new(sim)),
        engine,
    )
    .await?;
    if timed.outcome.status.as_str() != "succeeded" {
        return Err(eyre!(
            "the benchmark run ended {}",
            timed.outcome.status.as_str()
        ));
    }
    let steps = if tools {
        (tasks * TOOLS.len()) as u64
    } else {
        0
    };
    Ok((timed.run_seconds, steps))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Runs the benchmark.
pub async fn run_react_bench(o: &ReactBenchOpts) -> Result<ReactBenchReport> {
    let ws = o.dir.join("workspace");
    std::fs::create_dir_all(ws.join("notes"))
        .map_err(|e| eyre!("cannot create {}: {e}", ws.display()))?;
    std::fs::write(ws.join("notes/a.md"), "# A note\n\nDiffusion planners.\n")?;
    let (mut plain, mut tools, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
    let mut steps = 0;
    // A pair first, not counted: the first run pays for start-up (tokenizer tables,
    // the runtime's threads), which would bias the first pair.
    crate::errln!("warming up…");
    run_once(&o.dir, o.tasks.min(20), false, usize::MAX).await?;
    run_once(&o.dir, o.tasks.min(20), true, usize::MAX).await?;
    for k in 0..o.runs {
        crate::errln!("pair {} of {}…", k + 1, o.runs);
        let (p, _) = run_once(&o.dir, o.tasks, false, k).await?;
        let (t, s) = run_once(&o.dir, o.tasks, true, k).await?;
        steps = s;
        plain.push(p);
        tools.push(t);
        pairs.push((t - p) * 1000.0 / s.max(1) as f64);
    }
    crate::errln!("conversation of {} tokens…", o.conversation_tokens);
    let conversation = bench_conversation(o.conversation_tokens, o.runs.max(3));
    Ok(ReactBenchReport {
        tasks: o.tasks,
        tool_steps: steps,
        plain_seconds: median(plain),
        tools_seconds: median(tools),
        ms_per_step: median(pairs.clone()),
        pairs_ms_per_step: pairs,
        conversation,
    })
}

/// Prints the report.
pub fn print_react_report(r: &ReactBenchReport) {
    crate::outln!("tasks                  {}", r.tasks);
    crate::outln!("tool steps per run     {}", r.tool_steps);
    crate::outln!("plain run (median)     {:.3} s", r.plain_seconds);
    crate::outln!("tool-using run         {:.3} s", r.tools_seconds);
    crate::outln!(
        "loop cost per step     {:.3} ms (median of pairs: {})",
        r.ms_per_step,
        r.pairs_ms_per_step
            .iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    crate::outln!("{}", r.conversation);
}
