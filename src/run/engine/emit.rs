//! The emitter: assigns dense per-run sequence numbers and queues events and row writes
//! to the store writer in one order.

use std::sync::{Arc, Mutex};

use crate::data::store::{StoreError, WriteOp, Writer};
use crate::model::event::{EngineEvent, Envelope};

/// Shared by the coordinator and every worker of a run.
pub struct Emitter {
    run_id: Arc<str>,
    next_seq: Mutex<u64>,
    writer: Writer,
}

/// Where an event happened.
#[derive(Clone, Default)]
pub struct Scope {
    /// Task.
    pub task_id: Option<Arc<str>>,
    /// Invocation.
    pub invocation_id: Option<Arc<str>>,
    /// Agent.
    pub agent: Option<Arc<str>>,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Emitter {
    /// An emitter whose first event gets `first_seq`.
    pub fn new(run_id: Arc<str>, first_seq: u64, writer: Writer) -> Emitter {
        Emitter {
            run_id,
            next_seq: Mutex::new(first_seq),
            writer,
        }
    }

    /// The run.
    pub fn run_id(&self) -> &Arc<str> {
        &self.run_id
    }

    /// The writer.
    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    /// Appends an event to the log.
    pub fn emit(&self, scope: &Scope, event: EngineEvent) -> Result<(), StoreError> {
        let mut seq = self
            .next_seq
            .lock()
            .map_err(|_| StoreError::WriterGone("emitter poisoned".into()))?;
        let env = Envelope {
            run_id: self.run_id.clone(),
            seq: *seq,
            ts: now_ms(),
            task_id: scope.task_id.clone(),
            invocation_id: scope.invocation_id.clone(),
            agent: scope.agent.clone(),
            event,
        };
        self.writer.send(WriteOp::Event(Arc::new(env)))?;
        *seq += 1;
        Ok(())
    }

    /// Appends an event whose write carries rows of its own: `op` is given the envelope
    /// and returns the one operation that stores both (so they commit together).
    pub fn emit_with(
        &self,
        scope: &Scope,
        event: EngineEvent,
        op: impl FnOnce(Arc<Envelope>) -> WriteOp,
    ) -> Result<Arc<Envelope>, StoreError> {
        let mut seq = self
            .next_seq
            .lock()
            .map_err(|_| StoreError::WriterGone("emitter poisoned".into()))?;
        let env = Arc::new(Envelope {
            run_id: self.run_id.clone(),
            seq: *seq,
            ts: now_ms(),
            task_id: scope.task_id.clone(),
            invocation_id: scope.invocation_id.clone(),
            agent: scope.agent.clone(),
            event,
        });
        self.writer.send(op(env.clone()))?;
        *seq += 1;
        Ok(env)
    }

    /// Queues a row write, ordered with the events.
    pub fn write(&self, op: WriteOp) -> Result<(), StoreError> {
        let _seq = self
            .next_seq
            .lock()
            .map_err(|_| StoreError::WriterGone("emitter poisoned".into()))?;
        self.writer.send(op)
    }
}
