//! The context budget covers the whole prompt: the instruction, the existing assets and
//! the dependencies enter the priority trimming and its report like data inputs; a
//! prompt that cannot fit its agent fails the task before any provider call.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{quick_sim, run_plan, run_plan_with, test_config, Ran};
use plexus::base::protocol::{AgentRequest, ErrorCode};
use plexus::cli::launch::progress::Progress;
use plexus::data::provider::{ChunkSink, Provider, ProviderFuture, SimulatedProvider};
use plexus::model::event::{ContextPlanned, EngineEvent, TaskFinished};
use serde_json::{json, Value};

/// The simulated provider, counting the calls it is asked for.
struct Counting {
    inner: SimulatedProvider,
    calls: Arc<AtomicUsize>,
}

impl Provider for Counting {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn is_simulated(&self) -> bool {
        true
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.invoke(request, attempt, sink)
    }
}

fn planned(r: &Ran, task: &str) -> Vec<ContextPlanned> {
    r.of(|e| match e {
        EngineEvent::ContextPlanned(c) => Some(c),
        _ => None,
    })
    .into_iter()
    .filter(|(t, _)| t.as_deref() == Some(task))
    .map(|(_, c)| c.clone())
    .collect()
}

fn finished<'a>(r: &'a Ran, task: &str) -> &'a TaskFinished {
    r.of(|e| match e {
        EngineEvent::TaskFinished(f) => Some(f),
        _ => None,
    })
    .into_iter()
    .find(|(t, _)| t.as_deref() == Some(task))
    .map(|(_, f)| f)
    .expect("the task finished")
}

/// An instruction of a few megabytes (about 1.6 M tokens): far over a 100K-token agent.
#[tokio::test]
async fn a_huge_instruction_fails_the_task_before_any_call() {
    let sentence = "Derive the reverse-time denoising update step by step and check each term. ";
    let instruction = sentence.repeat(8 * 1024 * 1024 / sentence.len());
    assert!(instruction.len() > 8_000_000);
    let plan = json!({"plan_id": "P", "execution_mode": "Deep_Internalization", "tasks": [
        {"task_id": "A", "agent": "Scholar_Internalizer", "instruction": instruction,
         "output_requirements": {"required_fields": ["content.mathematical_expression"], "max_atoms": 2}},
        {"task_id": "B", "agent": "Scholar_Internalizer", "instruction": "Analyse the denoising formula.",
         "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "C", "max_atoms": 2}}
    ]})
    .to_string();
    let calls = Arc::new(AtomicUsize::new(0));
    let provider = Arc::new(Counting {
        inner: SimulatedProvider::new(quick_sim()),
        calls: calls.clone(),
    });
    let r = run_plan_with(&plan, provider, test_config()).await;

    // Only B reached the provider.
    assert_eq!(calls.load(Ordering::SeqCst), r.invocations_of("B") as usize);
    assert_eq!(r.invocations_of("A"), 0, "no invocation for A");
    let started_a = r
        .of(|e| match e {
            EngineEvent::InvocationStarted(s) => Some(s),
            _ => None,
        })
        .into_iter()
        .filter(|(t, _)| t.as_deref() == Some("A"))
        .count();
    assert_eq!(started_a, 0, "no invocation_started for A");
    assert_eq!(r.status_of("A"), "failed");
    assert_eq!(r.status_of("B"), "success");

    // The failure names the task, the agent, the tokens and the limit.
    let f = finished(&r, "A");
    assert_eq!(f.error_code, Some(ErrorCode::E008));
    assert_eq!(f.attempts, 0);
    // Read from the event's JSON, as the log stores it.
    let why = serde_json::to_value(f).expect("serialises")["error_message"]
        .as_str()
        .expect("a message")
        .to_string();
    assert!(why.contains("task `A`"), "{why}");
    assert!(why.contains("Scholar_Internalizer"), "{why}");
    assert!(why.contains("input limit of 100,000 tokens"), "{why}");
    let tokens: u64 = why
        .split(" tokens after trimming")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .map(|n| n.replace(',', ""))
        .and_then(|n| n.parse().ok())
        .expect("a token count");
    assert!(tokens > 1_000_000, "{why}");
    let t = r.store.tasks(&r.run_id).expect("tasks");
    let a = t.iter().find(|t| t.task_id == "A").expect("A");
    assert_eq!(a.error_code.as_deref(), Some(ErrorCode::E008.as_str()));

    // The report was logged: the instruction is critical and kept whole, the prompt is
    // over the limit.
    let c = planned(&r, "A");
    assert_eq!(c.len(), 1);
    let report = &c[0].report;
    let ins = &report.total_input_data["task_instructions"];
    assert_eq!(ins.priority, 1);
    assert!(ins.tokens > 1_000_000, "{}", ins.tokens);
    assert!(!report.resolution.within_limit);

    // The headless progress line says why.
    let mut p = Progress::default();
    let lines: Vec<String> = r.delivered.iter().filter_map(|e| p.fold(e)).collect();
    let line = lines
        .iter()
        .find(|l| l.contains("A: failed"))
        .expect("a progress line for A");
    assert!(line.contains("[E008]"), "{line}");
    assert!(line.contains("input limit of 100,000 tokens"), "{line}");
}

/// A fan-in plan: `n` upstream tasks of one atom each feeding `S`, whose agent takes at
/// most `limit` input tokens.
fn fan_in(n: usize, limit: u64, s_refs: Value) -> String {
    let mut tasks: Vec<Value> = (0..n)
        .map(|i| {
            json!({"task_id": format!("U{i:04}"), "agent": "Scholar_Internalizer",
                   "instruction": "Analyse the denoising formula.",
                   "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "D", "max_atoms": 1}})
        })
        .collect();
    let deps: Vec<String> = (0..n).map(|i| format!("U{i:04}")).collect();
    tasks.push(json!({"task_id": "S", "agent": "Knowledge_Vault", "instruction": "Integrate the upstream atoms.",
        "depends_on": deps, "data_references": s_refs, "fallback_config": {"strategy": "skip"},
        "output_requirements": {"quality_threshold": "D", "max_atoms": 2}}));
    json!({"plan_id": "F", "execution_mode": "Deep_Internalization",
           "agents": {"Knowledge_Vault": {"max_input_tokens": limit}}, "tasks": tasks})
    .to_string()
}

#[tokio::test]
async fn a_wide_fan_in_is_trimmed_to_the_agent_limit() {
    let (n, limit) = (2_000, 18_000);
    let r = run_plan(&fan_in(n, limit, json!([])), quick_sim(), test_config()).await;
    assert_eq!(r.invocations_of("S"), 1, "S was invoked");
    let (req, prompt_tokens) = r.request_of("S");
    assert!(
        prompt_tokens as u64 <= limit,
        "the prompt is {prompt_tokens} tokens, over {limit}"
    );

    // The report lists the lists and what was done to them.
    let cm = &req["context_management"]["context_management"];
    assert_eq!(
        cm["resolution"]["strategy"], "priority_based_trimming",
        "{cm}"
    );
    assert_eq!(cm["resolution"]["within_limit"], true, "{cm}");
    assert!(cm["total_tokens"].as_u64().unwrap_or(0) > limit, "{cm}");
    assert_eq!(cm["total_input_data"]["existing_assets"]["priority"], 2);
    assert_eq!(cm["total_input_data"]["dependencies"]["priority"], 3);
    assert_eq!(cm["total_input_data"]["task_instructions"]["priority"], 1);
    let actions: Vec<(String, String)> = cm["resolution"]["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|a| {
            (
                a["data"].as_str().unwrap_or("").to_string(),
                a["action"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(
        actions.contains(&("dependencies".into(), "omit".into())),
        "{actions:?} {cm}"
    );
    assert!(
        actions.contains(&("existing_assets".into(), "truncate".into())),
        "{actions:?} {cm}"
    );

    // The prompt carries the head of the asset list and says what was left out.
    let ctx = &req["user_prompt"]["context"];
    assert!(ctx.get("dependencies").is_none(), "dependencies omitted");
    let sent = ctx["existing_assets"].as_array().map_or(0, Vec::len);
    let trimmed = &ctx["context_trimmed"];
    assert_eq!(trimmed["existing_assets"]["sent"], sent, "{trimmed}");
    let total = trimmed["existing_assets"]["total"].as_u64().unwrap_or(0) as usize;
    assert!(sent > 0 && sent < total, "{sent} of {total}");
    assert_eq!(trimmed["dependencies"]["sent"], 0, "{trimmed}");
    assert_eq!(trimmed["dependencies"]["total"], n, "{trimmed}");

    // The event carries the same plan, the lists among the inputs.
    let c = planned(&r, "S");
    assert_eq!(c.len(), 1);
    let names: Vec<(&str, &str)> = c[0]
        .inputs
        .iter()
        .map(|i| (i.name.as_str(), i.action.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![("existing_assets", "truncate"), ("dependencies", "omit")]
    );
}

#[tokio::test]
async fn a_small_task_is_planned_as_before() {
    let refs = json!([{"ref_type": "task_output", "task_id": "U0000", "path": "$.atoms"}]);
    let r = run_plan(&fan_in(3, 100_000, refs), quick_sim(), test_config()).await;
    assert!(r.invocations_of("S") >= 1);
    // Tasks without data references and far below their limit are not planned.
    for i in 0..3 {
        assert!(planned(&r, &format!("U{i:04}")).is_empty());
    }
    let c = planned(&r, "S");
    assert_eq!(c.len(), 1);
    let report = &c[0].report;
    assert_eq!(report.resolution.strategy, "none");
    assert!(report.resolution.actions.is_empty(), "{report:?}");
    assert!(report.resolution.within_limit);
    // The lists are items of the report, kept whole.
    for name in ["existing_assets", "dependencies", "task_instructions"] {
        assert!(
            report.total_input_data.contains_key(name),
            "{name}: {report:?}"
        );
    }
    let actions: Vec<&str> = c[0].inputs.iter().map(|i| i.action.as_str()).collect();
    assert_eq!(actions, vec!["keep", "keep", "keep"]);
    let (req, _) = r.request_of("S");
    let ctx = &req["user_prompt"]["context"];
    assert_eq!(ctx["dependencies"].as_array().map_or(0, Vec::len), 3);
    let upstream_atoms: usize = (0..3)
        .map(|i| {
            r.store
                .tasks(&r.run_id)
                .expect("tasks")
                .into_iter()
                .find(|t| t.task_id == format!("U{i:04}"))
                .map_or(0, |t| t.atoms as usize)
        })
        .sum();
    assert_eq!(
        ctx["existing_assets"].as_array().map_or(0, Vec::len),
        upstream_atoms
    );
    assert!(ctx.get("context_trimmed").is_none());
    assert_eq!(ctx["inputs"][0]["transfer_mode"], "full");
}

/// The prompt as it would be sent has the last word: batches of 30K tokens cannot go to
/// an agent that takes 20K, though the planned context (a reference to the input) fits.
#[tokio::test]
async fn a_prompt_that_grows_past_the_limit_after_planning_is_not_sent() {
    let w = tempfile::tempdir().expect("tempdir");
    let line = "The reverse diffusion process removes a little noise at each step, conditioned on the scene and the route.\n";
    std::fs::write(w.path().join("big.txt"), line.repeat(3_500)).expect("big");
    let plan = json!({"plan_id": "P", "execution_mode": "Deep_Internalization",
        "agents": {"Scholar_Internalizer": {"max_input_tokens": 20_000}},
        "tasks": [{"task_id": "A", "agent": "Scholar_Internalizer", "instruction": "Use the notes.",
            "data_references": [{"ref_type": "file", "path": "big.txt"}],
            "transfer_config": {"batch_config": {"enabled": true, "batch_size_tokens": 30_000, "overlap_tokens": 0,
                "max_batches": 2, "aggregation_strategy": "merge", "batch_priority": "chronological"}},
            "output_requirements": {"required_fields": ["content.mathematical_expression"], "quality_threshold": "C", "max_atoms": 2}}]})
    .to_string();
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    let r = run_plan(&plan, quick_sim(), cfg).await;
    let c = planned(&r, "A");
    assert!(c[0].inputs[0].batched, "{:?}", c[0].inputs);
    assert!(c[0].report.resolution.within_limit);
    assert_eq!(r.invocations_of("A"), 0);
    assert_eq!(r.status_of("A"), "failed");
    let f = finished(&r, "A");
    assert_eq!(f.error_code, Some(ErrorCode::E008));
    let why = serde_json::to_value(f).expect("serialises")["error_message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(why.contains("input limit of 20,000 tokens"), "{why}");
    assert!(why.contains("user prompt"), "{why}");
}

/// A plan's transfer settings act on what is sent: `max_tokens` caps the summary of a
/// file (it stayed at 1,991 tokens under `max_tokens: 300`) and `summary_strategy:
/// truncate` keeps the file's start; the request says which strategy made it.
#[tokio::test]
async fn a_plan_s_transfer_settings_shape_the_summary_sent() {
    let w = tempfile::tempdir().expect("tempdir");
    let text: String = (0..300)
        .map(|i| format!("Note {i} says the guidance weight at step {i} was tuned by hand. "))
        .collect();
    std::fs::write(w.path().join("notes.txt"), &text).expect("notes");
    let plan = json!({"plan_id": "P", "execution_mode": "Deep_Internalization",
        "tasks": [{"task_id": "A", "agent": "Scholar_Internalizer", "instruction": "Use the notes.",
            "data_references": [{"ref_type": "file", "path": "notes.txt"}],
            "transfer_config": {"mode": "summary", "max_tokens": 300, "summary_strategy": "truncate"},
            "output_requirements": {"quality_threshold": "C", "max_atoms": 2}}]})
    .to_string();
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    let r = run_plan(&plan, quick_sim(), cfg).await;
    let (req, _) = r.request_of("A");
    let input = &req["user_prompt"]["context"]["inputs"][0];
    assert_eq!(input["transfer_mode"], "summary", "{input}");
    assert_eq!(input["summary_config"]["max_length"], 300, "{input}");
    assert_eq!(input["summary_config"]["strategy"], "truncate", "{input}");
    let sent = input["data"].as_str().unwrap_or_default();
    assert!(
        sent.contains("Note 0 says") && !sent.contains("Note 299 says"),
        "{sent}"
    );
    let tokens = plexus::base::tokens::TokenCounter::default().count(sent);
    assert!(tokens <= 330, "{tokens} tokens sent under a cap of 300");
}
