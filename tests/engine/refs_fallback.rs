//! Reference failures through the engine: each REF_* code with its default strategy
//! (seed 000 §3.2) and each fallback_config strategy, logged as `reference_failed`; and
//! resolved inputs planned into the context (`context_planned`).

use crate::common;

use common::{quick_sim, run_plan, test_config, Ran};
use plexus::base::protocol::refs::{RefErrorCode, ResolutionFailure};
use plexus::base::protocol::ErrorCode;
use plexus::model::event::EngineEvent;
use serde_json::{json, Value};

fn plan(refs: Value, fallback: Option<Value>, upstream: bool) -> String {
    let mut tasks = vec![];
    if upstream {
        tasks.push(json!({"task_id": "U", "agent": "Scholar_Internalizer", "instruction": "Analyse the denoising formula.",
            "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "C", "max_atoms": 3}}));
    }
    let mut t = json!({"task_id": "A", "agent": "Scholar_Internalizer", "instruction": "Use the references.",
        "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "C", "max_atoms": 2},
        "data_references": refs});
    if upstream {
        t["depends_on"] = json!(["U"]);
    }
    if let Some(f) = fallback {
        t["fallback_config"] = f;
    }
    tasks.push(t);
    json!({"plan_id": "P", "execution_mode": "Deep_Internalization", "tasks": tasks}).to_string()
}

async fn run(refs: Value, fallback: Option<Value>, upstream: bool, ws: &std::path::Path) -> Ran {
    let mut cfg = test_config();
    cfg.workspace = ws.to_path_buf();
    run_plan(&plan(refs, fallback, upstream), quick_sim(), cfg).await
}

fn failures(r: &Ran) -> Vec<(RefErrorCode, String)> {
    r.of(|e| match e {
        EngineEvent::ReferenceFailed(f) => Some(&f.failure),
        _ => None,
    })
    .into_iter()
    .map(|(_, f): (_, &ResolutionFailure)| (f.error_code, f.fallback_strategy.clone()))
    .collect()
}

fn planned(r: &Ran) -> Vec<String> {
    r.of(|e| match e {
        EngineEvent::ContextPlanned(c) => Some(c),
        _ => None,
    })
    .into_iter()
    .flat_map(|(_, c)| {
        c.inputs
            .iter()
            .map(|i| format!("{}:{:?}", i.name, i.mode))
            .collect::<Vec<_>>()
    })
    .collect()
}

fn ws() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        d.path().join("notes.md"),
        "# Notes\n## Abstract\nDiffusion denoises.\n",
    )
    .expect("md");
    std::fs::write(d.path().join("bad.json"), "{oops").expect("bad");
    d
}

#[tokio::test]
async fn not_found_is_skipped_by_default() {
    let w = ws();
    let r = run(
        json!([{"ref_type": "file", "path": "missing.md"}]),
        None,
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![(RefErrorCode::RefNotFound, "skip".into())]
    );
    assert_eq!(r.status_of("A"), "success");
    assert!(planned(&r).is_empty(), "nothing to plan");
}

#[tokio::test]
async fn use_default_passes_the_default_value() {
    let w = ws();
    let r = run(
        json!([{"ref_type": "file", "path": "missing.md"}]),
        Some(json!({"strategy": "use_default", "default_value": {"note": "no notes"}})),
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![(RefErrorCode::RefNotFound, "use_default".into())]
    );
    assert_eq!(planned(&r), vec!["file:missing.md:Full"]);
    let req = r
        .store
        .invocation_request(&first_invocation(&r))
        .expect("q")
        .expect("request");
    let inputs = &req["user_prompt"]["context"]["inputs"];
    assert_eq!(inputs[0]["data"]["note"], "no notes", "{inputs}");
    assert!(
        req["context_management"]["context_management"]["resolution"]["within_limit"]
            .as_bool()
            .unwrap_or(false)
    );
}

fn first_invocation(r: &Ran) -> String {
    r.store
        .invocations(&r.run_id)
        .expect("invocations")
        .into_iter()
        .next()
        .expect("one")
        .invocation_id
}

#[tokio::test]
async fn permission_denied_aborts_the_task() {
    let w = ws();
    let r = run(
        json!([{"ref_type": "file", "path": "../etc/passwd"}]),
        None,
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![(RefErrorCode::RefPermissionDenied, "abort".into())]
    );
    assert_eq!(r.status_of("A"), "failed");
    assert_eq!(
        r.invocations_of("A"),
        0,
        "no model call with a forbidden input"
    );
    let t = r.store.tasks(&r.run_id).expect("tasks");
    assert_eq!(t[0].error_code.as_deref(), Some(ErrorCode::E008.as_str()));
}

#[tokio::test]
async fn format_errors_abort_by_default_and_skip_when_configured() {
    let w = ws();
    let r = run(
        json!([{"ref_type": "file", "path": "bad.json"}]),
        None,
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![(RefErrorCode::RefFormatError, "abort".into())]
    );
    assert_eq!(r.status_of("A"), "failed");
    let r = run(
        json!([{"ref_type": "file", "path": "bad.json"}]),
        Some(json!({"strategy": "skip"})),
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![(RefErrorCode::RefFormatError, "skip".into())]
    );
    assert_eq!(r.status_of("A"), "success");
}

#[tokio::test]
async fn retry_then_the_final_failure_strategy() {
    let w = ws();
    let cfg = json!({"strategy": "retry", "retry_count": 2, "retry_delay_ms": 5, "on_final_failure": "abort"});
    let r = run(
        json!([{"ref_type": "file", "path": "missing.md"}]),
        Some(cfg),
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![
            (RefErrorCode::RefNotFound, "retry".into()),
            (RefErrorCode::RefNotFound, "retry".into()),
            (RefErrorCode::RefNotFound, "abort".into())
        ]
    );
    assert_eq!(r.status_of("A"), "failed");
    let cfg = json!({"strategy": "retry", "retry_count": 1, "retry_delay_ms": 1, "on_final_failure": "skip"});
    let r = run(
        json!([{"ref_type": "file", "path": "missing.md"}]),
        Some(cfg),
        false,
        w.path(),
    )
    .await;
    assert_eq!(
        failures(&r),
        vec![
            (RefErrorCode::RefNotFound, "retry".into()),
            (RefErrorCode::RefNotFound, "skip".into())
        ]
    );
    assert_eq!(r.status_of("A"), "success");
}

#[tokio::test]
async fn a_query_past_its_deadline_times_out_and_is_retried() {
    let w = ws();
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    cfg.ref_timeout_ms = 0;
    // By the time A runs, U has logged dozens of events: sorting them takes more than
    // the progress handler's first check, which finds the deadline passed.
    let p = plan(
        json!([{"ref_type": "db_query", "table": "execution_logs", "order_by": {"field": "payload", "direction": "desc"}, "limit": 1000}]),
        Some(
            json!({"strategy": "retry", "retry_count": 1, "retry_delay_ms": 1, "on_final_failure": "skip"}),
        ),
        true,
    );
    let r = run_plan(&p, quick_sim(), cfg).await;
    assert_eq!(
        failures(&r),
        vec![
            (RefErrorCode::RefTimeout, "retry".into()),
            (RefErrorCode::RefTimeout, "skip".into())
        ]
    );
    assert_eq!(r.status_of("A"), "success", "skipped, then ran without it");
}

#[tokio::test]
async fn invalid_filters_are_ignored_and_inputs_are_planned() {
    let w = ws();
    let refs = json!([
        {"ref_type": "task_output", "task_id": "U", "path": "$.atoms", "filter": {"field": "confidence", "operator": "gt", "value": {"x": 1}}},
        {"ref_type": "file", "path": "notes.md", "sections": ["abstract"]},
        {"ref_type": "db_query", "table": "knowledge_atoms", "limit": 5}
    ]);
    let r = run(refs, None, true, w.path()).await;
    assert_eq!(
        failures(&r),
        vec![(RefErrorCode::RefFilterError, "ignore_filter".into())]
    );
    assert_eq!(
        planned(&r),
        vec![
            "task_output:U:Full",
            "file:notes.md:Full",
            "db_query:knowledge_atoms:Full",
            // The context's own lists (A depends on U) are planned with the inputs.
            "existing_assets:Full",
            "dependencies:Full"
        ]
    );
    assert_eq!(r.status_of("A"), "success");
}

#[tokio::test]
async fn an_input_over_50k_tokens_runs_in_batches_and_is_aggregated() {
    let w = ws();
    let line = "The reverse diffusion process removes a little noise at each step, conditioned on the scene and the route.\n";
    std::fs::write(w.path().join("big.txt"), line.repeat(3_500)).expect("big");
    let r = run(
        json!([{"ref_type": "file", "path": "big.txt"}]),
        None,
        false,
        w.path(),
    )
    .await;
    let plans = r.of(|e| match e {
        EngineEvent::ContextPlanned(c) => Some(c),
        _ => None,
    });
    let input = &plans[0].1.inputs[0];
    assert!(input.tokens > 50_000, "{}", input.tokens);
    assert!(input.batched);
    let invs = r.store.invocations(&r.run_id).expect("invocations");
    assert!(invs.len() >= 3, "one invocation per batch: {}", invs.len());
    let mut seen = Vec::new();
    for inv in &invs {
        let req = r
            .store
            .invocation_request(&inv.invocation_id)
            .expect("q")
            .expect("request");
        let inputs = req["user_prompt"]["context"]["inputs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let b = inputs
            .iter()
            .find(|i| i.get("batch").is_some())
            .expect("a batch payload");
        seen.push(b["batch"]["index"].as_u64().unwrap_or(0));
        assert!(
            b["data"].as_str().map_or(0, str::len) < line.len() * 3_500,
            "a part, not the whole"
        );
        assert_eq!(b["transfer_mode"], "full");
    }
    let n = seen.len() as u64;
    assert_eq!(seen, (1..=n).collect::<Vec<_>>(), "batches in order");
    assert_eq!(r.status_of("A"), "success");
    let t = r.store.tasks(&r.run_id).expect("tasks");
    assert!(
        t[0].atoms >= 2,
        "atoms of every batch, merged: {}",
        t[0].atoms
    );
}

#[tokio::test]
async fn abstractive_summaries_come_from_the_provider() {
    let w = ws();
    let para = "Diffusion planners denoise trajectories step by step. The reverse process removes a little noise at each step.\nPedestrians step out between parked cars. Reaction time budgets of 150 ms are typical.\n";
    std::fs::write(w.path().join("mid.md"), para.repeat(120)).expect("mid");
    let p = json!({"plan_id": "P", "execution_mode": "Deep_Internalization", "tasks": [
        {"task_id": "A", "agent": "Strategic_Critic", "instruction": "Judge the notes.",
         "output_requirements": {"required_fields": [], "quality_threshold": "D", "max_atoms": 1},
         "data_references": [{"ref_type": "file", "path": "mid.md"}],
         "transfer_config": {"summary_strategy": "abstractive"}}]})
    .to_string();
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    let r = run_plan(&p, quick_sim(), cfg).await;
    let req = r
        .store
        .invocation_request(&first_invocation(&r))
        .expect("q")
        .expect("request");
    let input = &req["user_prompt"]["context"]["inputs"][0];
    assert_eq!(input["transfer_mode"], "summary", "{input}");
    assert_eq!(
        input["summary_config"]["strategy"], "abstractive",
        "{input}"
    );
    let summary = input["data"]["summary"].as_str().expect("summary text");
    assert!(
        summary.contains("Diffusion planners denoise trajectories"),
        "{summary}"
    );
    assert!(
        summary.len() < para.len() * 120 / 2,
        "shorter than the data"
    );
    let plans = r.of(|e| match e {
        EngineEvent::ContextPlanned(c) => Some(c),
        _ => None,
    });
    let plan = &plans[0].1.inputs[0];
    assert!(plan.tokens_after < plan.tokens, "{plan:?}");
}

/// A plan of `n` tasks in layers of `width`: the first half of a layer goes on from the
/// task in the same place of the layer before, the second half hangs off it as leaves
/// (tasks no other task reads), so half of all tasks are leaves, ending all along the run.
fn layered_leaves_plan(n: usize, width: usize) -> String {
    let half = width / 2;
    let tasks: Vec<Value> = (0..n)
        .map(|k| {
            let (layer, place) = (k / width, k % width);
            let mut t = json!({"task_id": format!("T{k:05}"), "agent": "Scholar_Internalizer",
                "instruction": "Analyse the denoising formula.",
                "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "C", "max_atoms": 1}});
            if layer > 0 {
                let up = (layer - 1) * width + place % half;
                t["depends_on"] = json!([format!("T{up:05}")]);
            }
            t
        })
        .collect();
    json!({"plan_id": "P", "execution_mode": "Quick_Assessment", "tasks": tasks}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_engine_holds_for_finished_tasks_is_flat_from_2000_to_9000_tasks() {
    let mut cfg = test_config();
    cfg.concurrency = 32;
    let mut sim = quick_sim();
    sim.min_chunks = 1;
    let r = run_plan(&layered_leaves_plan(10_000, 50), sim, cfg).await;
    assert_eq!(r.outcome.tasks.values().sum::<u32>(), 10_000);
    let held = |finished: u32| {
        r.outcome
            .retained
            .iter()
            .find(|k| k.finished == finished)
            .unwrap_or_else(|| panic!("no sample at {finished}: {:?}", r.outcome.retained))
            .outputs
    };
    // Only outputs a task still to run reads are held — about a layer's worth, however
    // many tasks have finished (keeping every leaf's output would hold half of them).
    let (at_2k, at_9k) = (held(2_000), held(9_000));
    assert!(
        at_2k <= 100 && at_9k <= 100,
        "held {at_2k} at 2000, {at_9k} at 9000"
    );
    assert!(at_9k <= at_2k + 50, "held {at_2k} at 2000, {at_9k} at 9000");
}

#[tokio::test]
async fn a_reference_two_levels_up_reads_the_output_after_the_middle_task_ended() {
    // U → M → A, and A reads U's output through a reference (U is upstream of A only
    // through M): M's end must not drop U's output before A has read it.
    let req = json!({"required_fields": ["content.mathematical_expression"], "quality_threshold": "C", "max_atoms": 2});
    let p = json!({"plan_id": "P", "execution_mode": "Deep_Internalization", "tasks": [
        {"task_id": "U", "agent": "Scholar_Internalizer", "instruction": "Analyse the denoising formula.", "output_requirements": req},
        {"task_id": "M", "agent": "Scholar_Internalizer", "instruction": "Analyse the noise schedule.", "output_requirements": req, "depends_on": ["U"]},
        {"task_id": "A", "agent": "Scholar_Internalizer", "instruction": "Use the references.", "output_requirements": req, "depends_on": ["M"],
         "data_references": [{"ref_type": "task_output", "task_id": "U", "path": "$.atoms"}]}
    ]})
    .to_string();
    let r = run_plan(&p, quick_sim(), test_config()).await;
    assert_eq!(failures(&r), vec![], "U's output was there for A");
    assert!(
        planned(&r).contains(&"task_output:U:Full".to_string()),
        "{:?}",
        planned(&r)
    );
    assert_eq!(r.status_of("A"), "success");
}
