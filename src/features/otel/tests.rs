//! The span model on the recorded demo log: one tree, the same spans however the events
//! arrive, and the price lookup filling `plexus.cost.usd`.

use opentelemetry_proto::tonic::trace::v1::Span;

use super::attrs::attr_str;
use super::build::{spans_of, BuildOptions, SpanBuilder};
use crate::model::event::Envelope;

fn demo() -> Vec<Envelope> {
    include_str!("../../../fixtures/runs/demo.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an envelope"))
        .collect()
}

fn kind(s: &Span) -> String {
    attr_str(s, "openinference.span.kind")
}

#[test]
fn the_demo_log_is_one_tree_of_run_tasks_and_calls() {
    let events = demo();
    let run = events[0].run_id.to_string();
    let spans = spans_of(&run, &events, BuildOptions::default());
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1);
    assert_eq!(kind(roots[0]), "CHAIN");
    assert_eq!(
        spans.last().map(|s| &s.span_id),
        Some(&roots[0].span_id),
        "the run ends last"
    );
    assert_eq!(spans.iter().filter(|s| kind(s) == "AGENT").count(), 5);
    assert_eq!(spans.iter().filter(|s| kind(s) == "LLM").count(), 10);
    assert!(spans
        .iter()
        .all(|s| attr_str(s, "plexus.cost.usd").is_empty()));
}

#[test]
fn spans_do_not_depend_on_how_the_events_arrive() {
    let events = demo();
    let run = events[0].run_id.to_string();
    let whole = spans_of(&run, &events, BuildOptions::default());
    let mut b = SpanBuilder::new(&run, BuildOptions::default());
    let mut live = Vec::new();
    for batch in events.chunks(7) {
        for env in batch {
            b.feed(env, &mut live);
        }
    }
    b.finish(&mut live);
    assert_eq!(live, whole);
}

#[test]
fn a_price_lookup_fills_the_cost_of_each_call() {
    let events = demo();
    let run = events[0].run_id.to_string();
    let opts = BuildOptions {
        content: None,
        cost: Some(Box::new(|u| {
            Some((u.input_tokens + u.output_tokens) as f64 / 1_000_000.0)
        })),
    };
    let spans = spans_of(&run, &events, opts);
    for s in spans.iter().filter(|s| kind(s) == "LLM") {
        let usd = s
            .attributes
            .iter()
            .find(|a| a.key == "plexus.cost.usd")
            .and_then(|a| a.value.as_ref());
        assert!(usd.is_some(), "{}", s.name);
    }
}

#[test]
fn the_cost_recorded_with_each_call_is_the_one_its_span_carries() {
    let mut events = demo();
    let run = events[0].run_id.to_string();
    let mut recorded = 0;
    for (k, env) in events.iter_mut().enumerate() {
        if let crate::model::event::EngineEvent::InvocationFinished(f) = &mut env.event {
            f.cost_usd = Some(0.001 * (k + 1) as f64);
            recorded += 1;
        }
    }
    // A lookup that would say otherwise is not asked: the recorded cost is the bill.
    let opts = BuildOptions {
        content: None,
        cost: Some(Box::new(|_| Some(99.0))),
    };
    let spans = spans_of(&run, &events, opts);
    let costs: Vec<f64> = spans
        .iter()
        .filter(|s| kind(s) == "LLM")
        .filter_map(|s| {
            s.attributes
                .iter()
                .find(|a| a.key == "plexus.cost.usd")
                .and_then(|a| a.value.as_ref())
                .and_then(|v| match v.value {
                    Some(
                        opentelemetry_proto::tonic::common::v1::any_value::Value::DoubleValue(d),
                    ) => Some(d),
                    _ => None,
                })
        })
        .collect();
    assert_eq!(costs.len(), recorded);
    assert!(costs.iter().all(|c| *c < 1.0), "{costs:?}");
}

#[test]
fn a_resumed_run_is_one_workflow_span_carrying_the_crash_and_the_resume() {
    use crate::model::event::{CrashDetected, EngineEvent, RunResumed, RunStatus};
    let events = demo();
    let run = events[0].run_id.to_string();
    // The first process stopped half-way; the second logged the crash and the resume,
    // then the rest.
    let half = events.len() / 2;
    let mut log: Vec<Envelope> = events[..half].to_vec();
    let last = &events[half - 1];
    let note = |seq: u64, event: EngineEvent| Envelope {
        run_id: last.run_id.clone(),
        seq,
        ts: last.ts + 1,
        task_id: None,
        invocation_id: None,
        agent: None,
        event,
    };
    log.push(note(
        last.seq + 1,
        EngineEvent::CrashDetected(CrashDetected {
            last_seq: last.seq,
            last_ts: last.ts,
            interrupted_tasks: Vec::new(),
        }),
    ));
    log.push(note(
        last.seq + 2,
        EngineEvent::RunResumed(RunResumed {
            previous_status: RunStatus::Running,
            finished_tasks: 2,
            remaining_tasks: 3,
        }),
    ));
    for e in &events[half..] {
        let mut e = e.clone();
        e.seq += 2;
        log.push(e);
    }
    let spans = spans_of(&run, &log, BuildOptions::default());
    let workflows: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("invoke_workflow"))
        .collect();
    assert_eq!(workflows.len(), 1, "one workflow span for the whole run");
    let names: Vec<&str> = workflows[0]
        .events
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert!(
        names.contains(&"plexus.crash_detected") && names.contains(&"plexus.run_resumed"),
        "{names:?}"
    );
}
