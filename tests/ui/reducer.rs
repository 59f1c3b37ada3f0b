//! The reducer: folding a recorded run reproduces the engine's own totals; a live fold
//! equals a fold of the log; memory for streamed text stays within its budget.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use common::{quick_sim, run_plan, test_config};
use plexus::data::provider::FaultRates;
use plexus::model::event::{Chunk, EngineEvent, Envelope, RunStatus, TaskFinished, TaskStatus};
use plexus::model::state::{reduce, status_slot, RunState};
use plexus::tui::loader::fold_run;

fn fixture() -> Vec<Envelope> {
    include_str!("../../fixtures/runs/demo.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture line"))
        .collect()
}

fn fold(events: &[Envelope]) -> RunState {
    let mut st = RunState::new();
    for e in events {
        reduce(&mut st, e);
    }
    st
}

#[test]
fn folding_the_demo_log_matches_the_engines_report() {
    let events = fixture();
    let st = fold(&events);
    let Some(EngineEvent::RunFinished(f)) = events.last().map(|e| &e.event) else {
        panic!("the fixture ends with run_finished");
    };
    assert_eq!(st.status, Some(f.status));
    for (status, n) in &f.tasks {
        assert_eq!(st.count(*status), *n, "{status:?}");
    }
    assert_eq!(st.quality.grades, f.grades);
    assert_eq!(st.quality.atoms(), f.atoms);
    assert_eq!(st.events, events.len() as u64);
    assert_eq!(st.last_seq, events.len() as u64);
    // Per agent: invocations and prompt tokens equal the invocation_started events.
    let mut inv: HashMap<String, (u32, u64)> = HashMap::new();
    for e in &events {
        if let EngineEvent::InvocationStarted(s) = &e.event {
            let a = inv
                .entry(e.agent.as_deref().unwrap_or("").to_string())
                .or_default();
            a.0 += 1;
            a.1 += s.prompt_tokens;
        }
    }
    for a in &st.agents {
        let (n, tokens) = inv.get(&*a.name).copied().unwrap_or_default();
        assert_eq!(a.invocations, n, "{}", a.name);
        assert_eq!(a.tokens_in, tokens, "{}", a.name);
        assert_eq!(a.in_flight, 0);
    }
    // Each task's output has one attempt marker per invocation and all streamed text.
    for t in &st.tasks {
        let lines: Vec<&str> = (0..t.output.len()).map(|i| t.output.line(i)).collect();
        let markers = lines
            .iter()
            .filter(|l| l.starts_with("── attempt "))
            .count();
        assert_eq!(markers as u32, t.attempts, "task {}", t.id);
        assert!(t.status.is_final());
    }
    let streamed: usize = events
        .iter()
        .filter_map(|e| match &e.event {
            EngineEvent::Chunk(c) if e.task_id.as_deref() == Some(&*st.tasks[0].id) => {
                Some(c.text.len())
            }
            _ => None,
        })
        .sum();
    let held: usize = (0..st.tasks[0].output.len())
        .map(|i| st.tasks[0].output.line(i))
        .filter(|l| !l.starts_with("──") && !l.starts_with('↻') && !l.starts_with('⚠'))
        .map(|l| l.len() + 1)
        .sum();
    assert!(held + 8 >= streamed, "held {held} of {streamed} bytes");
    // Layers follow the dependencies: every task sits below all of its upstream tasks.
    for t in &st.tasks {
        for &d in &t.deps {
            assert!(st.tasks[d as usize].layer < t.layer);
        }
    }
}

#[test]
fn a_fold_holds_each_task_id_and_atom_type_once() {
    let st = fold(&fixture());
    // The index and the task's view share one string per id.
    for t in &st.tasks {
        let (key, _) = st.task_index.get_key_value(&*t.id).expect("indexed");
        assert!(Arc::ptr_eq(key, &t.id), "task {}", t.id);
    }
    // Atoms of one type share its name.
    let atoms: Vec<_> = st.atoms.iter().collect();
    let mut pairs = 0;
    for w in atoms.windows(2) {
        if w[0].atom_type == w[1].atom_type {
            assert!(Arc::ptr_eq(&w[0].atom_type, &w[1].atom_type), "{}", w[1].id);
            pairs += 1;
        }
    }
    assert!(pairs > 0, "the fixture grades several atoms of one type");
}

#[test]
fn status_counts_always_sum_to_the_task_count() {
    let events = fixture();
    let mut st = RunState::new();
    for e in &events {
        reduce(&mut st, e);
        let sum: u32 = st.status_counts.iter().sum();
        assert_eq!(sum as usize, st.tasks.len(), "after seq {}", e.seq);
        for t in &st.tasks {
            assert!(st.status_counts[status_slot(t.status)] > 0);
        }
    }
}

#[tokio::test]
async fn a_live_fold_equals_a_fold_of_the_stored_log() {
    let mut sim = quick_sim();
    sim.faults = FaultRates::demo();
    sim.seed = 11;
    let r = run_plan(
        include_str!("../../fixtures/plans/avp_diffusion_planner.json"),
        sim,
        test_config(),
    )
    .await;
    let live = fold(
        &r.delivered
            .iter()
            .map(|e| (**e).clone())
            .collect::<Vec<_>>(),
    );
    let logged = fold_run(&r.store, &r.run_id, None, None).expect("fold the log");
    assert_eq!(live.events, logged.events);
    assert_eq!(live.status, logged.status);
    assert_eq!(live.status_counts, logged.status_counts);
    assert_eq!(live.quality, logged.quality);
    assert_eq!(live.agents, logged.agents);
    assert_eq!(live.atoms, logged.atoms);
    assert_eq!(live.layers, logged.layers);
    for (a, b) in live.tasks.iter().zip(&logged.tasks) {
        assert_eq!(a.status, b.status);
        assert_eq!(a.attempts, b.attempts);
        assert_eq!(a.notes, b.notes);
        assert_eq!(a.output, b.output, "task {}", a.id);
    }
    // One task's text alone, as the UI loads it back after eviction.
    let only = fold_run(&r.store, &r.run_id, Some(1), None).expect("fold one task");
    assert_eq!(only.tasks[1].output, live.tasks[1].output);
    assert!(only.tasks[0].output.is_empty());
}

#[test]
fn streamed_text_stays_within_the_budget() {
    let mut events = fixture();
    // Keep the run_started and the tasks; then stream a lot into every task, finishing
    // each before the next.
    events.truncate(1);
    let EngineEvent::RunStarted(rs) = &events[0].event else {
        panic!("first event")
    };
    let ids: Vec<String> = rs.tasks.iter().map(|t| t.task_id.clone()).collect();
    let mut st = fold(&events);
    st.output_budget = 256 << 10;
    let line = format!("{}\n", "x".repeat(199));
    let mut seq = 1;
    // Folds one event for task `id` at the next seq.
    let mut feed = |st: &mut RunState, id: &str, event: EngineEvent| {
        seq += 1;
        let env = Envelope {
            run_id: Arc::from("R"),
            seq,
            ts: seq as i64,
            task_id: Some(Arc::from(id)),
            invocation_id: None,
            agent: None,
            event,
        };
        reduce(st, &env);
    };
    for id in &ids {
        for _ in 0..2_000 {
            feed(
                &mut st,
                id,
                EngineEvent::Chunk(Chunk { text: line.clone() }),
            );
        }
        feed(
            &mut st,
            id,
            EngineEvent::TaskFinished(TaskFinished {
                status: TaskStatus::Success,
                attempts: 1,
                atoms: 0,
                error_code: None,
                error_message: None,
            }),
        );
        // 400 KB streamed per task: at most the budget plus the task still streaming.
        assert!(
            st.output_bytes <= st.output_budget + 2 * 410_000,
            "{}",
            st.output_bytes
        );
    }
    let spilled = st.tasks.iter().filter(|t| t.spilled).count();
    assert!(spilled >= ids.len() - 1, "finished tasks' text was evicted");
    assert!(st.output_bytes <= st.output_budget);
    assert_eq!(st.status, Some(RunStatus::Running));
}

/// A call in flight at a crash, closed by the resume: the Run screen's fold shows it as
/// lost in its task's output (a line saying so), as the task's last outcome, and counts
/// the output tokens that reached the log on its agent; the task goes back to pending.
#[test]
fn a_call_lost_in_a_crash_is_shown_as_such_and_its_tokens_counted() {
    use plexus::model::event::{CrashDetected, InvocationLost};
    let events = fixture();
    // The demo's log up to the first invocation that started, and a bit of its stream.
    let start = events
        .iter()
        .position(|e| matches!(e.event, EngineEvent::InvocationStarted(_)))
        .expect("an invocation starts");
    let cut = events[start..]
        .iter()
        .position(|e| matches!(e.event, EngineEvent::InvocationFinished(_)))
        .expect("and ends")
        + start;
    let mut log: Vec<Envelope> = events[..cut].to_vec();
    let started = &events[start];
    let task = started.task_id.clone().expect("a task");
    let mut st = fold(&log);
    let i = *st.task_index.get(&task).expect("the task");
    let agent = st.tasks[i].agent;
    let before = st.agents[agent].tokens_out;
    let next = log.len() as u64 + 1;
    let crash = Envelope {
        run_id: started.run_id.clone(),
        seq: next,
        ts: started.ts + 5_000,
        task_id: None,
        invocation_id: None,
        agent: None,
        event: EngineEvent::CrashDetected(CrashDetected {
            last_seq: next - 1,
            last_ts: started.ts + 100,
            interrupted_tasks: vec![task.to_string()],
        }),
    };
    let lost = Envelope {
        seq: next + 1,
        task_id: Some(task.clone()),
        invocation_id: started.invocation_id.clone(),
        agent: started.agent.clone(),
        event: EngineEvent::InvocationLost(InvocationLost {
            attempt: 1,
            prompt_tokens: 321,
            output_tokens: 42,
            chunks: 3,
            started_ts: started.ts,
            last_ts: started.ts + 100,
            reason: "lost in a crash: the process running this call stopped before it ended; 42 output token(s) reached the log".into(),
            cost_usd: None,
        }),
        ..crash.clone()
    };
    log.push(crash.clone());
    log.push(lost.clone());
    reduce(&mut st, &crash);
    reduce(&mut st, &lost);
    let t = &st.tasks[i];
    assert_eq!(t.status, TaskStatus::Pending, "the task runs again");
    let text: Vec<&str> = (0..t.output.len()).map(|k| t.output.line(k)).collect();
    assert!(
        text.iter()
            .any(|l| l.contains("attempt 1 lost in a crash") && l.contains("42 output token(s)")),
        "{text:?}"
    );
    let last = t.last.as_ref().expect("a last outcome");
    assert_eq!(last.status, None);
    assert!(last
        .error_message()
        .is_some_and(|m| m.contains("lost in a crash")));
    assert_eq!(st.agents[agent].tokens_out, before + 42);
    // Replay folds the same log to the same state.
    assert_eq!(fold(&log), st);
}
