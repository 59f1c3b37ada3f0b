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
