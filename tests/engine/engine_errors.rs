//! Error codes E001–E008 end to end on the engine: handling, retry counts and delays
//! (milliseconds), adjustments of the retried request, E006 blocking, cancel, and the
//! durability of delivered events.

use crate::common;

use std::collections::HashMap;

use common::*;
use plexus::base::protocol::ErrorCode;
use plexus::data::provider::Fault;
use plexus::model::event::{EngineEvent, RunStatus, TaskStatus};
use plexus::run::engine::Control;

fn scripted(task: &str, faults: &[Fault]) -> plexus::data::provider::SimConfig {
    let mut s = quick_sim();
    s.script = HashMap::from([(task.to_string(), faults.to_vec())]);
    s
}

fn retries(r: &Ran) -> Vec<(ErrorCode, u64, u32)> {
    r.of(|e| match e {
        EngineEvent::RetryScheduled(x) => Some(x),
        _ => None,
    })
    .into_iter()
    .map(|(_, x)| (x.error_code, x.delay_ms, x.next_attempt))
    .collect()
}

fn started(r: &Ran) -> Vec<&plexus::model::event::InvocationStarted> {
    r.of(|e| match e {
        EngineEvent::InvocationStarted(x) => Some(x),
        _ => None,
    })
    .into_iter()
    .map(|(_, x)| x)
    .collect()
}

/// Milliseconds between each InvocationFinished and the next InvocationStarted.
fn gaps(r: &Ran) -> Vec<i64> {
    let mut out = Vec::new();
    let mut last_end = None;
    for e in &r.events {
        match e.event.as_ref() {
            Ok(EngineEvent::InvocationFinished(_)) => last_end = Some(e.ts),
            Ok(EngineEvent::InvocationStarted(_)) => {
                if let Some(t) = last_end.take() {
                    out.push(e.ts - t);
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn e001_source_not_found_retries_three_times_at_the_seed_schedule() {
    let f = Fault::SourceNotFound;
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[f, f, f, f, f]),
        test_config(),
    )
    .await;
    assert_eq!(r.invocations_of("A"), 4, "1 try + 3 retries");
    assert_eq!(
        retries(&r),
        vec![
            (ErrorCode::E001, 5, 2),
            (ErrorCode::E001, 15, 3),
            (ErrorCode::E001, 30, 4)
        ]
    );
    let g = gaps(&r);
    assert!(
        g.len() == 3 && g[0] >= 5 && g[1] >= 15 && g[2] >= 30,
        "waited {g:?}"
    );
    assert_eq!(r.status_of("A"), "failed");
    assert_eq!(r.outcome.status, RunStatus::Failed);
}

#[tokio::test]
async fn e001_recovers_when_the_source_comes_back() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::SourceNotFound, Fault::None]),
        test_config(),
    )
    .await;
    assert_eq!(r.invocations_of("A"), 2);
    assert_eq!(r.status_of("A"), "success");
    assert_eq!(r.outcome.status, RunStatus::Succeeded);
}

#[tokio::test]
async fn transient_errors_back_off_exponentially_then_give_up() {
    let t = Fault::Transient;
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[t, t, t, t, t]),
        test_config(),
    )
    .await;
    assert_eq!(r.invocations_of("A"), 4, "1 try + 3 transient retries");
    let d: Vec<u64> = retries(&r)
        .into_iter()
        .map(|(c, d, _)| {
            assert_eq!(c, ErrorCode::E001);
            d
        })
        .collect();
    assert_eq!(d, vec![2, 4, 8]);
    assert_eq!(r.status_of("A"), "failed");
}

#[tokio::test]
async fn e002_parse_error_is_retried_with_the_error_in_the_prompt() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::MalformedJson, Fault::None]),
        test_config(),
    )
    .await;
    assert_eq!(retries(&r), vec![(ErrorCode::E002, 3, 2)]);
    let invs = r.store.invocations(&r.run_id).expect("invocations");
    assert_eq!(invs.len(), 2);
    assert_eq!(invs[0].error_codes.as_deref(), Some("E002"));
    assert_eq!(invs[0].status.as_deref(), Some("failed"));
    let first = r
        .store
        .invocation_request(&invs[0].invocation_id)
        .expect("req")
        .expect("stored");
    let second = r
        .store
        .invocation_request(&invs[1].invocation_id)
        .expect("req")
        .expect("stored");
    let i1 = first["user_prompt"]["instruction"]
        .as_str()
        .expect("instruction");
    let i2 = second["user_prompt"]["instruction"]
        .as_str()
        .expect("instruction");
    assert!(!i1.contains("previous answer was rejected"));
    assert!(i2.contains("previous answer was rejected"), "{i2}");
    assert!(second["system_prompt"]
        .as_str()
        .expect("system prompt restored")
        .contains("Scholar_Internalizer"));
    assert_eq!(r.status_of("A"), "success");
}

#[tokio::test]
async fn e003_validation_error_lowers_the_threshold_one_grade() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::InvalidShape, Fault::None]),
        test_config(),
    )
    .await;
    assert_eq!(retries(&r), vec![(ErrorCode::E003, 3, 2)]);
    let s = started(&r);
    assert_eq!(
        (
            s[0].quality_threshold.as_str(),
            s[1].quality_threshold.as_str()
        ),
        ("B", "C")
    );
    let resp = r
        .store
        .invocation_response(&r.store.invocations(&r.run_id).expect("i")[0].invocation_id)
        .expect("r")
        .expect("stored");
    assert_eq!(resp["errors"][0]["error_code"], "E003");
    assert_eq!(resp["errors"][0]["field"], "output.atoms");
}

#[tokio::test]
async fn e004_timeout_keeps_what_streamed_and_retries_with_a_longer_timeout() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::Timeout, Fault::None]),
        EngineConfig {
            chunk_flush_max: 1,
            ..test_config()
        },
    )
    .await;
    assert_eq!(retries(&r), vec![(ErrorCode::E004, 4, 2)]);
    let s = started(&r);
    // The timeout enforced is recorded: the agent's 600 s (then ×1.5) on the tests'
    // fast clock (×0.0002).
    assert_eq!(s[0].constraints.timeout_seconds, 0.12);
    assert_eq!(s[1].constraints.timeout_seconds, 0.18);
    let invs = r.store.invocations(&r.run_id).expect("invocations");
    assert_eq!(invs[0].status.as_deref(), Some("timeout"));
    // the chunks that arrived before the stall are in the log
    let first_inv = invs[0].invocation_id.clone();
    let chunks = r
        .events
        .iter()
        .filter(|e| {
            e.invocation_id.as_deref() == Some(first_inv.as_str())
                && matches!(e.event, Ok(EngineEvent::Chunk(_)))
        })
        .count();
    assert!(chunks >= 10, "{chunks} chunks kept");
    assert_eq!(r.status_of("A"), "success");
}

#[tokio::test]
async fn e005_quality_below_threshold_adjusts_temperature_and_max_tokens() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::LowGrade, Fault::None]),
        test_config(),
    )
    .await;
    assert_eq!(retries(&r), vec![(ErrorCode::E005, 3, 2)]);
    let s = started(&r);
    assert_eq!(
        (s[0].constraints.max_tokens, s[0].constraints.temperature),
        (12000, 0.25)
    );
    assert_eq!(
        (s[1].constraints.max_tokens, s[1].constraints.temperature),
        (15000, 0.15)
    );
    assert_eq!(r.status_of("A"), "success");
}

#[tokio::test]
async fn e005_exhausted_leaves_the_task_partial() {
    let l = Fault::LowGrade;
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[l, l, l, l]),
        test_config(),
    )
    .await;
    assert_eq!(r.invocations_of("A"), 3, "1 try + 2 retries");
    assert_eq!(r.status_of("A"), "partial");
    assert_eq!(r.outcome.status, RunStatus::Partial);
}

#[tokio::test]
async fn e006_blocks_everything_downstream_unless_the_fallback_skips() {
    let extra = r#",
      {"task_id":"B","agent":"Code_Architect","instruction":"Use A.","depends_on":["A"]},
      {"task_id":"C","agent":"Scenario_Validator","instruction":"Use B.","depends_on":["B"]},
      {"task_id":"D","agent":"Strategic_Critic","instruction":"Use A if any.","depends_on":["A"],
       "fallback_config":{"strategy":"skip"}}"#;
    let f = Fault::SystemError;
    let r = run_plan(&one_task_plan(extra), scripted("A", &[f]), test_config()).await;
    assert_eq!(r.status_of("A"), "failed");
    assert_eq!(r.status_of("B"), "blocked");
    assert_eq!(r.status_of("C"), "blocked");
    assert_eq!(r.status_of("D"), "success");
    assert_eq!(
        r.invocations_of("B") + r.invocations_of("C"),
        0,
        "blocked tasks are never invoked"
    );
    let blocked = r.of(|e| match e {
        EngineEvent::TaskBlocked(x) => Some(x),
        _ => None,
    });
    let names: Vec<(String, String)> = blocked
        .iter()
        .map(|(t, b)| (t.clone().unwrap_or_default(), b.upstream.clone()))
        .collect();
    assert_eq!(
        names,
        vec![("B".into(), "A".into()), ("C".into(), "B".into())]
    );
    assert!(blocked.iter().all(|(_, b)| b.error_code == ErrorCode::E006));
    assert_eq!(r.outcome.tasks.get(&TaskStatus::Blocked), Some(&2));
}

#[tokio::test]
async fn e007_hallucination_fails_without_retry() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::Hallucination, Fault::None]),
        test_config(),
    )
    .await;
    assert_eq!(r.invocations_of("A"), 1);
    assert!(retries(&r).is_empty());
    let inv = &r.store.invocations(&r.run_id).expect("invocations")[0];
    assert!(inv.error_codes.as_deref().unwrap_or("").contains("E007"));
    assert_eq!(r.status_of("A"), "failed");
}

#[tokio::test]
async fn e008_system_error_fails_without_retry() {
    let r = run_plan(
        &one_task_plan(""),
        scripted("A", &[Fault::SystemError, Fault::None]),
        test_config(),
    )
    .await;
    assert_eq!(r.invocations_of("A"), 1);
    assert!(retries(&r).is_empty());
    assert_eq!(r.status_of("A"), "failed");
}

#[tokio::test]
async fn every_delivered_event_is_in_the_database_in_dense_order() {
    let config = EngineConfig {
        chunk_flush_max: 1,
        ..test_config()
    };
    let r = run_plan(&one_task_plan(""), quick_sim(), config).await;
    assert_eq!(r.delivered.len(), r.events.len());
    for (i, (d, e)) in r.delivered.iter().zip(&r.events).enumerate() {
        assert_eq!(d.seq, i as u64 + 1);
        assert_eq!(d.seq, e.seq);
        assert_eq!(Ok(&d.event), e.event.as_ref());
    }
    let chunks = chunk_texts(&r);
    assert!(
        chunks.len() >= 20,
        "one event per streamed chunk, at least 20, got {}",
        chunks.len()
    );
}

fn chunk_texts(r: &Ran) -> Vec<String> {
    r.events
        .iter()
        .filter_map(|e| match &e.event {
            Ok(EngineEvent::Chunk(c)) => Some(c.text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn fast_streams_are_coalesced_without_losing_text() {
    let each = run_plan(
        &one_task_plan(""),
        quick_sim(),
        EngineConfig {
            chunk_flush_max: 1,
            ..test_config()
        },
    )
    .await;
    let grouped = run_plan(
        &one_task_plan(""),
        quick_sim(),
        EngineConfig {
            chunk_flush_max: 4,
            chunk_flush_ms: 60_000,
            ..test_config()
        },
    )
    .await;
    let (a, b) = (chunk_texts(&each), chunk_texts(&grouped));
    assert_eq!(a.concat(), b.concat(), "the same text is logged");
    assert_eq!(
        b.len(),
        a.len().div_ceil(4),
        "{} chunks in groups of at most 4",
        a.len()
    );
    for (i, group) in b.iter().enumerate() {
        let end = (i * 4 + 4).min(a.len());
        assert_eq!(
            group,
            &a[i * 4..end].concat(),
            "event {i} holds chunks {}..{end}",
            i * 4
        );
    }
}

#[tokio::test]
async fn cancel_stops_in_flight_work_and_records_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("c.db");
    let plan = std::sync::Arc::new(
        plexus::model::plan::parse_plan(
            &one_task_plan(
                r#",{"task_id":"B","agent":"Code_Architect","instruction":"x","depends_on":["A"]}"#,
            ),
            "t",
        )
        .expect("plan"),
    );
    let (writer, thread) = plexus::data::store::spawn_writer(&db, None).expect("writer");
    writer
        .send(plexus::data::store::WriteOp::CreateRun(Box::new(
            plexus::data::store::RunRow {
                run_id: "R-c".into(),
                plan_id: "P".into(),
                plan_source: "t".into(),
                plan_json: plan.json.clone(),
                provider: "simulated".into(),
                config_json: "{}".into(),
                created_at: "2026-01-01T00:00:00Z".into(),
                task_count: 2,
                tasks: vec![
                    ("A".into(), "Scholar_Internalizer".into()),
                    ("B".into(), "Code_Architect".into()),
                ],
            },
        )))
        .expect("create");
    let mut sim = quick_sim();
    sim.chunk_ms = 50; // slow stream so the cancel lands mid-invocation
    let h = plexus::run::engine::start_run(plexus::run::engine::RunSpec {
        db: None,
        run_id: "R-c".into(),
        plan,
        provider: std::sync::Arc::new(plexus::data::provider::SimulatedProvider::new(sim)),
        config: EngineConfig {
            timeout_scale: 1.0,
            ..test_config()
        },
        writer: writer.clone(),
        known_assets: Default::default(),
        resume: None,
    });
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    h.control
        .send(Control::Cancel("test says stop".into()))
        .expect("send");
    let out = h.join.await.expect("join").expect("run");
    drop(writer);
    thread.join().expect("thread");
    assert_eq!(out.status, RunStatus::Cancelled);
    let store = plexus::data::store::Store::open(&db).expect("store");
    let tasks = store.tasks("R-c").expect("tasks");
    assert!(tasks.iter().all(|t| t.status == "cancelled"), "{tasks:?}");
    let ev = store.events("R-c", 1, u64::MAX).expect("events");
    assert!(ev.iter().any(
        |e| matches!(&e.event, Ok(EngineEvent::CancelRequested(c)) if c.reason == "test says stop")
    ));
    assert_eq!(
        store.invocations("R-c").expect("inv")[0].status.as_deref(),
        Some("cancelled")
    );
}

use plexus::run::engine::EngineConfig;

/// Chunk events per call of a run of `tasks` tasks side by side, at `concurrency`.
async fn chunk_events_per_call(tasks: usize, concurrency: usize) -> (f64, Vec<String>) {
    let plan = plexus::dev::gen_plan::generate(plexus::dev::gen_plan::GenSpec {
        tasks,
        width: tasks,
        fan_in: 1,
        max_atoms: 1,
    })
    .to_string();
    let sim = plexus::data::provider::SimConfig {
        first_chunk_ms: 30,
        chunk_ms: 2,
        ..quick_sim()
    };
    let r = run_plan(
        &plan,
        sim,
        EngineConfig {
            concurrency,
            chunk_flush_max: 1,
            chunk_flush_ms: 60_000,
            // No call may time out on a busy machine: the texts are compared.
            timeout_scale: 100.0,
            ..test_config()
        },
    )
    .await;
    let calls = r
        .events
        .iter()
        .filter(|e| matches!(e.event, Ok(EngineEvent::InvocationStarted(_))))
        .count();
    // Each task's whole text, in task order.
    let mut text: std::collections::BTreeMap<String, String> = Default::default();
    for e in &r.events {
        if let Ok(EngineEvent::Chunk(c)) = &e.event {
            text.entry(e.task_id.clone().unwrap_or_default())
                .or_default()
                .push_str(&c.text);
        }
    }
    let chunks = r
        .events
        .iter()
        .filter(|e| matches!(e.event, Ok(EngineEvent::Chunk(_))))
        .count();
    (
        chunks as f64 / calls.max(1) as f64,
        text.into_values().collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_heavy_load_streams_are_logged_in_fewer_larger_pieces_with_the_same_text() {
    let (light, light_text) = chunk_events_per_call(256, 4).await;
    let (heavy, heavy_text) = chunk_events_per_call(256, 256).await;
    assert_eq!(light_text, heavy_text, "the same text is logged");
    eprintln!("chunk events per call: {light} at 4 streams, {heavy} at 256");
    assert!(light >= 5.0, "one event per chunk at a light load: {light}");
    assert!(
        heavy < light * 0.6,
        "256 streams at once log fewer pieces: {heavy} vs {light} per call"
    );
}

#[tokio::test]
async fn a_retry_met_by_the_spent_budget_ends_a_held_open_run_budget_reached() {
    let price = plexus::base::cost::Price {
        input: 1.0,
        output: 1.0,
        cached_input: None,
    };
    // Held open (as the TUI holds a run), the run must end rather than wait for a
    // command once its only task's retry meets the spent budget.
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        run_plan(
            &one_task_plan(""),
            scripted("A", &[Fault::MalformedJson, Fault::None]),
            EngineConfig {
                hold_open: true,
                price: Some(price),
                max_cost_usd: Some(1e-9),
                ..test_config()
            },
        ),
    )
    .await
    .expect("the run ends instead of waiting");
    assert_eq!(r.outcome.status, RunStatus::BudgetReached);
    assert_eq!(r.invocations_of("A"), 1, "the retry never started");
    assert_eq!(r.status_of("A"), "pending");
    let kinds: Vec<&str> = r
        .events
        .iter()
        .filter_map(|e| e.event.as_ref().ok().map(EngineEvent::kind))
        .collect();
    let reached = kinds.iter().position(|k| *k == "budget_reached");
    let finished = kinds.iter().rposition(|k| *k == "run_finished");
    assert!(reached.is_some() && reached < finished, "{kinds:?}");
    let fin = r
        .of(|e| match e {
            EngineEvent::RunFinished(f) => Some(f),
            _ => None,
        })
        .pop()
        .expect("run_finished");
    assert_eq!(fin.1.status, RunStatus::BudgetReached);
    assert_eq!(
        r.store.run(&r.run_id).expect("run").status,
        "budget_reached"
    );
}
