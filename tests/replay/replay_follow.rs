//! A run written by one process and followed by another: the follower (the replay
//! player at the live edge, read-only) sees the events as they are committed, and its
//! final state equals the state of the whole log the writer left.

use crate::common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::ChildGuard;
use plexus::data::replay::log::replay_state;
use plexus::data::replay::player::Player;
use plexus::data::store::Store;
use plexus::dev::gen_plan::{generate, GenSpec};
use plexus::tui::app::transport::Transport;
use plexus::tui::loader::fold_run;
use plexus::tui::replay_feed::{ReplayFeed, StartAt};

#[test]
fn a_follower_sees_a_run_grow_and_ends_with_the_writers_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("f.db");
    let plan = dir.path().join("plan.json");
    let spec = GenSpec {
        tasks: 12,
        width: 3,
        fan_in: 1,
        max_atoms: 1,
    };
    std::fs::write(&plan, generate(spec).to_string()).expect("plan");
    let writer = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir.path())
        .args(["--db", "f.db", "run", "--headless", "--concurrency", "2"])
        .arg(&plan)
        .args(["--chunk-ms", "20", "--first-chunk-ms", "10"])
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("writer");
    let mut writer = ChildGuard(writer);
    // Wait for the run to exist, then follow it from its edge.
    let end = Instant::now() + Duration::from_secs(60);
    let run_id = loop {
        assert!(Instant::now() < end, "the run never started");
        if let Ok(store) = Store::open(&db) {
            if let Ok(r) = store.run("latest") {
                break r.run_id;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (tx, rx) = mpsc::channel();
    let player = Player::spawn(db.clone(), run_id.clone(), move |m| tx.send(m).is_ok());
    let mut feed = ReplayFeed::new(player, 1, StartAt::End);
    let mut t = Transport::new(run_id.clone(), feed.marks());
    let mut state = replay_state(&run_id);
    let mut positions_while_live = Vec::new();
    let mut was_live = false;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "the follower never caught up");
        if let Ok(msg) = rx.recv_timeout(Duration::from_millis(20)) {
            feed.on_msg(msg, &mut state, &mut t);
        }
        feed.tick(Instant::now(), &mut state, &mut t);
        if t.live {
            was_live = true;
            assert!(t.follow || t.seeking.is_some(), "at the live edge");
            positions_while_live.push(t.position);
        }
        let done = writer.0.try_wait().expect("writer").is_some();
        if done && !t.live && t.seeking.is_none() && t.position == t.total && t.total > 0 {
            break;
        }
    }
    assert!(was_live, "the run was followed while it was written");
    positions_while_live.dedup();
    assert!(
        positions_while_live.len() > 5,
        "events arrived as they were committed: {positions_while_live:?}"
    );
    let store = Store::open(&db).expect("store");
    let (last, _) = store.last_event(&run_id).expect("last");
    assert_eq!(t.position, last);
    let whole = fold_run(&store, &run_id, None, None).expect("fold");
    assert_eq!(state, whole, "the follower's state is the writer's");
    assert_eq!(
        state.status.map(|s| s.as_str()),
        Some("succeeded"),
        "the follower saw the end"
    );
}
