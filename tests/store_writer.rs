//! The store writer: events written in multi-row groups come back exactly, in order,
//! and a flush barrier returns only after they are committed.

use std::sync::Arc;

use plexus::event::{Chunk, EngineEvent, Envelope, TaskFinished, TaskStatus};
use plexus::store::{spawn_writer, Store, WriteOp};

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
    // 70 events each, alternating runs, so multi-row groups mix both.
    for seq in 1..=70u64 {
        for run in &runs {
            let env = Envelope {
                run_id: run.clone(),
                seq,
                ts: seq as i64,
                task_id: None,
                invocation_id: None,
                agent: None,
                event: EngineEvent::Chunk(Chunk {
                    text: format!("{run} {seq}"),
                }),
            };
            writer.send(WriteOp::Event(Arc::new(env))).expect("send");
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
