//! Replay of a logged run: the state after every event, replayed from the log, equals
//! the state the live run had at that event; seeks anywhere in a long log (from the
//! snapshots) give the same state as folding from the start.

use crate::common;

use std::sync::Arc;

use common::{quick_sim, run_plan, test_config};
use plexus::data::provider::{FaultRates, SimConfig};
use plexus::data::replay::log::{replay_state, ReplayLog, SNAPSHOT_EVERY};
use plexus::dev::gen_plan::{generate, GenSpec};
use plexus::model::state::{reduce, RunState};
use plexus::run::engine::EngineConfig;

const DEMO_PLAN: &str = include_str!("../../fixtures/plans/avp_diffusion_planner.json");

/// The states a live run went through: `states[n]` is the state after event `n`.
fn live_states(run_id: &str, delivered: &[Arc<plexus::model::event::Envelope>]) -> Vec<RunState> {
    let mut st = replay_state(run_id);
    let mut states = vec![st.clone()];
    for env in delivered {
        reduce(&mut st, env);
        states.push(st.clone());
    }
    states
}

#[tokio::test]
async fn a_demo_run_with_faults_replays_to_the_live_state_after_every_event() {
    let sim = SimConfig {
        faults: FaultRates::demo(),
        seed: 2,
        ..quick_sim()
    };
    let r = run_plan(
        DEMO_PLAN,
        sim,
        EngineConfig {
            seed: 2,
            ..test_config()
        },
    )
    .await;
    let live = live_states(&r.run_id, &r.delivered);
    let retries = r
        .delivered
        .iter()
        .filter(|e| {
            matches!(
                e.event,
                plexus::model::event::EngineEvent::RetryScheduled(_)
            )
        })
        .count();
    assert!(retries > 0, "the run had faults to replay");
    let mut log = ReplayLog::open(&r.db, "latest").expect("open");
    assert_eq!(log.total() as usize, r.delivered.len());
    // Event by event, as playing forward does.
    let mut st = log.seek(0).expect("start");
    assert_eq!(st, live[0]);
    let events = log.events(1, log.total()).expect("events");
    for (n, env) in events.iter().enumerate() {
        reduce(&mut st, env);
        assert_eq!(st, live[n + 1], "after event {}", n + 1);
    }
    // Seeking, in both directions and in no order.
    let total = log.total();
    let mut order: Vec<u64> = (0..=total).rev().collect();
    order.extend((0..=total).step_by(7));
    for &n in &order {
        assert_eq!(log.seek(n).expect("seek"), live[n as usize], "seek to {n}");
    }
    // The same with a snapshot every 5 events: a snapshot keeps no finished task's
    // text, which is read back from the log as it was at that event.
    let mut log = ReplayLog::open(&r.db, "latest")
        .expect("open")
        .with_snapshots_every(5);
    log.index_all().expect("index");
    assert!(log.snapshots() > 3, "{} snapshots", log.snapshots());
    for &n in &order {
        let got = log.seek(n).expect("seek");
        let want = &live[n as usize];
        assert_eq!(spilled(&got), spilled(want), "seek to {n}");
        for (i, t) in got.tasks.iter().enumerate() {
            let text = if t.spilled {
                log.task_output(i, n).expect("text")
            } else {
                t.output.clone()
            };
            assert_eq!(text, want.tasks[i].output, "task {} at {n}", t.id);
        }
    }
}

/// A state with its finished tasks' text set aside (as a snapshot keeps it).
fn spilled(s: &RunState) -> RunState {
    let mut s = s.clone();
    s.spill_finished();
    s
}

#[tokio::test]
async fn seeks_in_a_log_longer_than_a_snapshot_interval_equal_folding_from_the_start() {
    let plan = generate(GenSpec {
        tasks: 2400,
        width: 80,
        fan_in: 2,
        max_atoms: 1,
    })
    .to_string();
    // Calls get seconds, not the usual tenth of one: on a busy machine a call that timed
    // out would block its dependents and leave the log too short for this test.
    let config = EngineConfig {
        timeout_scale: 0.01,
        ..test_config()
    };
    let r = run_plan(&plan, quick_sim(), config).await;
    let total = r.delivered.len() as u64;
    assert!(total > 2 * SNAPSHOT_EVERY, "{total} events");
    let mut log = ReplayLog::open(&r.db, &r.run_id).expect("open");
    log.index_all().expect("index");
    assert!(log.snapshots() >= 3);
    // A snapshot keeps no finished task's text (it is read back when shown): compare
    // the states with finished tasks' text set aside on both sides.
    let strip = spilled;
    let mut rng = fastrand::Rng::with_seed(5);
    let mut targets: Vec<u64> = (0..40).map(|_| rng.u64(0..=total)).collect();
    targets.sort_unstable();
    // The live state at each target, folded as the run went; the seeks in random order.
    let mut live = replay_state(&r.run_id);
    let mut folded = 0usize;
    let mut expected = Vec::new();
    for &n in &targets {
        while folded < n as usize {
            reduce(&mut live, &r.delivered[folded]);
            folded += 1;
        }
        expected.push((n, live.clone()));
    }
    rng.shuffle(&mut expected);
    for (n, want) in &expected {
        let got = log.seek(*n).expect("seek");
        assert_eq!(strip(&got), strip(want), "seek to {n}");
        // Running tasks' text is all there.
        for (t, w) in got.tasks.iter().zip(&want.tasks) {
            if !t.spilled {
                assert_eq!(t.output, w.output, "task {} at {n}", t.id);
            }
        }
    }
}
