//! The store writer: events written in multi-row groups come back exactly, in order,
//! and a flush barrier returns only after they are committed.

use std::sync::Arc;

use plexus::data::store::{spawn_writer, Store, WriteOp};
use plexus::model::event::{Chunk, EngineEvent, Envelope, TaskFinished, TaskStatus};

#[test]
fn a_batch_of_events_reads_back_field_for_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("w.db");
    let (writer, thread) = spawn_writer(&db, None).expect("writer");
    let run: Arc<str> = Arc::from("R-w");
    let mut sent = Vec::new();
    for seq in 1..=75u64 {
        let event = if seq % 10 == 0 {
            EngineEvent::TaskFinished(TaskFinished {
                status: TaskStatus::Success,
                attempts: 1,
                atoms: 2,
                error_code: None,
                error_message: None,
            })
        } else {
            EngineEvent::Chunk(Chunk {
                text: format!("chunk {seq}: \"quoted\" 去噪 \u{1b}[31m\n"),
            })
        };
        let env = Envelope {
            run_id: run.clone(),
            seq,
            ts: 1_700_000_000_000 + seq as i64,
            task_id: (seq % 3 != 0).then(|| Arc::from(format!("T{seq}").as_str())),
            invocation_id: (seq % 2 == 0).then(|| Arc::from("INV_20260203_143052_SCHOLAR_001")),
            agent: Some(Arc::from("Scholar_Internalizer")),
            event,
        };
        sent.push(env.clone());
        writer.send(WriteOp::Event(Arc::new(env))).expect("send");
    }
    writer.flush().expect("flush");
    let store = Store::open(&db).expect("store");
    let back = store.events("R-w", 1, u64::MAX).expect("events");
    assert_eq!(back.len(), 75);
    for (s, b) in sent.iter().zip(&back) {
        assert_eq!(b.seq, s.seq);
        assert_eq!(b.ts, s.ts);
        assert_eq!(b.task_id.as_deref(), s.task_id.as_deref());
        assert_eq!(b.invocation_id.as_deref(), s.invocation_id.as_deref());
        assert_eq!(b.agent.as_deref(), s.agent.as_deref());
        assert_eq!(b.event.as_ref(), Ok(&s.event));
    }
    drop(writer);
    thread.join().expect("writer thread");
}

#[test]
fn interleaved_runs_read_back_each_its_own_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("w.db");
    let (writer, thread) = spawn_writer(&db, None).expect("writer");
    let runs: [Arc<str>; 2] = [Arc::from("R-a"), Arc::from("R-b")];
    // 70 events each, alternating runs: no group of 32 is of one run, so every row goes
    // in on its own (the multi-row statement's shared run id is tested below).
    for seq in 1..=70u64 {
        for run in &runs {
            writer.send(chunk_of(run, seq, seq as i64)).expect("send");
        }
    }
    writer.flush().expect("flush");
    let store = Store::open(&db).expect("store");
    for run in &runs {
        let back = store.events(run, 1, u64::MAX).expect("events");
        assert_eq!(back.len(), 70);
        for (k, b) in back.iter().enumerate() {
            assert_eq!(b.seq, k as u64 + 1);
            let want = EngineEvent::Chunk(Chunk {
                text: format!("{run} {}", k + 1),
            });
            assert_eq!(b.event.as_ref(), Ok(&want));
        }
        assert_eq!(store.events(run, 30, 32).expect("range").len(), 3);
        assert_eq!(store.last_event(run).expect("last"), (70, 70));
    }
    assert!(store
        .events("R-none", 1, u64::MAX)
        .expect("none")
        .is_empty());
    drop(writer);
    thread.join().expect("writer thread");
}

#[test]
fn runs_in_blocks_get_event_ids_of_their_own_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("w.db");
    let (writer, thread) = spawn_writer(&db, None).expect("writer");
    let runs: [Arc<str>; 3] = [Arc::from("R-x"), Arc::from("R-y"), Arc::from("R-z")];
    let mut next = [0u64; 3];
    // Blocks of 33 to 39 events of one run, so that multi-row groups of one run follow
    // groups of another within a batch.
    for block in 0..60usize {
        let r = block % 3;
        for _ in 0..33 + block % 7 {
            next[r] += 1;
            writer.send(chunk_of(&runs[r], next[r], 0)).expect("send");
        }
    }
    writer.flush().expect("flush");
    drop(writer);
    thread.join().expect("writer thread");
    let conn = rusqlite::Connection::open(&db).expect("open");
    let wrong: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM execution_logs e JOIN log_runs l ON l.run_id = e.run_id
             WHERE e.event_id >> 32 != l.run_no OR (e.event_id & 4294967295) != e.seq
                OR e.payload != json_object('text', e.run_id || ' ' || e.seq)",
            [],
            |r| r.get(0),
        )
        .expect("check");
    let total: i64 = conn
        .query_row("SELECT COUNT(*) FROM execution_logs", [], |r| r.get(0))
        .expect("count");
    assert_eq!(wrong, 0);
    assert_eq!(total as u64, next.iter().sum::<u64>());
}

/// A chunk event of `run` whose text is the run id and the sequence number.
fn chunk_of(run: &Arc<str>, seq: u64, ts: i64) -> WriteOp {
    WriteOp::Event(Arc::new(Envelope {
        run_id: run.clone(),
        seq,
        ts,
        task_id: None,
        invocation_id: None,
        agent: None,
        event: EngineEvent::Chunk(Chunk {
            text: format!("{run} {seq}"),
        }),
    }))
}

fn chunk(run: &Arc<str>, seq: u64) -> WriteOp {
    WriteOp::Event(Arc::new(Envelope {
        run_id: run.clone(),
        seq,
        ts: 1_700_000_000_000,
        task_id: None,
        invocation_id: None,
        agent: None,
        event: EngineEvent::Chunk(Chunk { text: "x".into() }),
    }))
}

#[test]
fn a_writer_whose_lease_was_taken_over_writes_nothing_more_and_says_who_has_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("l.db");
    let lease = plexus::data::store::lease::HeldLease::acquire(&db, "R-l").expect("lease");
    let (writer, thread) =
        plexus::data::store::writer::spawn_writer_holding(&db, None, lease.lease().cloned())
            .expect("writer");
    drop(lease.handed_over());
    let run: Arc<str> = Arc::from("R-l");
    writer.send(chunk(&run, 1)).expect("send");
    writer.flush().expect("the owner writes");
    // Another process takes the run over (as it would after this one stopped for 30 s).
    rusqlite::Connection::open(&db)
        .expect("open")
        .execute(
            "UPDATE run_leases SET token = token + 1, pid = 4242, host = 'elsewhere' WHERE run_id = 'R-l'",
            [],
        )
        .expect("take over");
    let _ = writer.send(chunk(&run, 2));
    let err = writer.flush().expect_err("the writer stops").to_string();
    assert!(
        err.contains("was taken over by pid 4242 on host elsewhere") && err.contains("l.db"),
        "{err}"
    );
    drop(writer);
    thread.join().expect("writer thread");
    let store = Store::open(&db).expect("store");
    assert_eq!(
        store.last_event("R-l").expect("last").0,
        1,
        "event 2 was not written"
    );
    // The lease it lost is not its to give back: the new owner keeps it.
    let pid: i64 = rusqlite::Connection::open(&db)
        .expect("open")
        .query_row("SELECT pid FROM run_leases WHERE run_id = 'R-l'", [], |r| {
            r.get(0)
        })
        .expect("lease row");
    assert_eq!(pid, 4242);
}

/// The write-ahead log stays bounded while a writer commits without pause and a
/// follower reads the new events beside it: past the restart threshold (here 64 frames,
/// 1 MiB) the writer completes a checkpoint after its commit and the log starts over.
/// Without it the log grows with everything written (40 MiB here).
#[test]
fn the_wal_stays_bounded_while_a_writer_commits_without_pause_beside_a_follower() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("wal.db");
    let wal = dir.path().join("wal.db-wal");
    let (writer, thread) = spawn_writer(&db, None).expect("writer");
    writer
        .stats()
        .wal_restart_frames
        .store(64, Ordering::Relaxed);
    let run: Arc<str> = Arc::from("R-wal");
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (done, peak, wal) = (done.clone(), peak.clone(), wal.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Ok(m) = std::fs::metadata(&wal) {
                    peak.fetch_max(m.len(), Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
    };
    let follower = {
        let (done, db, run) = (done.clone(), db.clone(), run.clone());
        std::thread::spawn(move || {
            let mut next = 1u64;
            loop {
                let finished = done.load(Ordering::Relaxed);
                if let Ok(store) = Store::open(&db) {
                    while let Ok(page) = store.events(&run, next, next + 999) {
                        if page.is_empty() {
                            break;
                        }
                        next += page.len() as u64;
                    }
                }
                if finished {
                    return next - 1;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let text = "x".repeat(1000);
    let events = 40_000u64;
    for seq in 1..=events {
        writer
            .send(WriteOp::Event(Arc::new(Envelope {
                run_id: run.clone(),
                seq,
                ts: 1_700_000_000_000,
                task_id: None,
                invocation_id: None,
                agent: None,
                event: EngineEvent::Chunk(Chunk { text: text.clone() }),
            })))
            .expect("send");
        if seq % 50 == 0 {
            // About the pace of a busy run: a small batch per commit, one after the other.
            writer.flush().expect("flush");
        }
    }
    writer.flush().expect("flush");
    let checkpoints = writer.stats().wal_checkpoints.load(Ordering::Relaxed);
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let read = follower.join().expect("follower");
    drop(writer);
    thread.join().expect("writer thread");
    assert_eq!(read, events, "the follower read every event");
    let peak_mib = peak.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0);
    eprintln!("largest WAL {peak_mib:.2} MiB, {checkpoints} checkpoints by the writer");
    assert!(
        peak_mib < 5.0,
        "the log reached {peak_mib:.1} MiB with a 1 MiB restart threshold ({checkpoints} checkpoints)"
    );
    assert!(checkpoints > 0, "the writer never completed a checkpoint");
}

/// A writer whose write fails tells every sender waiting on it why, every time: a flush
/// queued behind the failing write (let go while the writer unwinds) gets the cause, not
/// a bare "stopped".
#[test]
fn a_failed_write_gives_its_cause_to_every_sender_waiting_behind_it() {
    use plexus::data::store::InvocationRecord;
    let record = || {
        WriteOp::Invocation(Box::new(InvocationRecord {
            invocation_id: Arc::from("INV_20260203_143052_SCHOLAR_001"),
            run_id: Arc::from("R-dup"),
            task_id: Arc::from("T"),
            agent: Arc::from("Scholar_Internalizer"),
            attempt: 1,
            started_at: "2026-02-03T14:30:52Z".into(),
            prompt_tokens: 1,
            request_json: "{}".into(),
            system_prompt: ("h".into(), Arc::from("p")),
            status: "success",
            execution_time_ms: 1,
            output_tokens: 1,
            error_codes: String::new(),
            response_json: "{}".into(),
            provider_usage: None,
            cost_usd: None,
        }))
    };
    for round in 0..20 {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("f.db");
        let (writer, thread) = spawn_writer(&db, None).expect("writer");
        // The runs row the invocation refers to.
        {
            let conn = plexus::data::store::open_connection(&db).expect("open");
            conn.execute(
                "INSERT INTO runs (run_id, plan_id, plan_source, plan_json, provider, config_json, status, created_at, task_count) VALUES ('R-dup', 'P', 'f', '{}', 'simulated', '{}', 'running', 't', 1)",
                [],
            )
            .expect("run row");
        }
        writer.send(record()).expect("send");
        writer.flush().expect("the first one is stored");
        // The same invocation again, with a flush and more writes queued behind it.
        writer.send(record()).expect("send");
        let waiting = writer.flush();
        let later = writer.send(chunk(&Arc::from("R-dup"), 1));
        let err = waiting
            .expect_err("the duplicate fails the writer")
            .to_string();
        assert!(
            err.contains("UNIQUE constraint failed") && err.contains("f.db"),
            "round {round}: {err}"
        );
        if let Err(e) = later {
            assert!(
                e.to_string().contains("UNIQUE constraint failed"),
                "round {round}: {e}"
            );
        }
        let again = writer.flush().expect_err("the writer is gone").to_string();
        assert!(
            again.contains("UNIQUE constraint failed"),
            "round {round}: {again}"
        );
        drop(writer);
        thread.join().expect("writer thread");
    }
}

#[test]
fn events_that_keep_coming_are_committed_together_at_most_once_per_commit_gap() {
    use plexus::data::store::writer::COMMIT_GAP;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("g.db");
    let (writer, thread) = spawn_writer(&db, None).expect("writer");
    let run: Arc<str> = Arc::from("R-gap");
    // A first commit, so the next ones have one to keep their distance from.
    writer.send(chunk(&run, 1)).expect("send");
    writer.flush().expect("flush");
    let first_batches = writer.stats().batches.load(Ordering::Relaxed);
    let started = Instant::now();
    let sent = 200u64;
    for seq in 2..2 + sent {
        writer.send(chunk(&run, seq)).expect("send");
        std::thread::sleep(Duration::from_micros(300));
    }
    let sending = started.elapsed();
    writer.flush().expect("flush");
    let batches = writer.stats().batches.load(Ordering::Relaxed) - first_batches;
    // Commits are at least a gap apart while events come; the flush at the end may add
    // one right after the last.
    let most = (sending.as_micros() / COMMIT_GAP.as_micros()) as u64 + 2;
    assert!(
        batches <= most,
        "{batches} commits for {sent} events sent over {sending:?}; at most {most} expected"
    );
    assert!(batches < sent, "events were grouped");
    let store = Store::open(&db).expect("store");
    assert_eq!(
        store.events("R-gap", 1, u64::MAX).expect("events").len() as u64,
        sent + 1,
        "every event committed"
    );
    drop(writer);
    thread.join().expect("writer thread");
}
