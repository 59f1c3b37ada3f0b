//! The snapshot keeper of a running process: folds the events the writer commits into
//! a state without any streamed text, stores a snapshot of it when the process's part
//! of the run ends (however it ends), and passes the events on to whoever consumes them
//! (the screen or the headless printer). A later `browse`, `replay` or `show` then
//! opens the run by reading the snapshot instead of folding the whole log.
//!
//! Only the end is stored: a snapshot of a 100,000-task run is about 27 MiB, and
//! encoding and writing it while the run goes held about 90 MiB more for a moment each
//! time. A run killed before its end has no snapshot of its last part; its reader (or
//! its resume) folds the log from the last one stored.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::data::replay::stored::open_at;
use crate::data::store::snapshots::put_snapshot;
use crate::data::store::Store;
use crate::model::event::Envelope;
use crate::model::state::snapshot::measure;
use crate::model::state::{reduce, RunState};

/// Committed batches of events.
type Batches = Vec<Arc<Envelope>>;

/// Starts the keeper of `run` on a thread of its own: batches from `input` are folded
/// and sent on to `output`. It ends when `input` closes, after storing the last state.
pub fn spawn_keeper(
    db: PathBuf,
    run: String,
    input: UnboundedReceiver<Batches>,
    output: UnboundedSender<Batches>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("plexus-snapshots".into())
        .spawn(move || Keeper::start(db, run).serve(input, output))
}

struct Keeper {
    db: PathBuf,
    run: Arc<str>,
    state: RunState,
    /// The last event a stored snapshot includes.
    stored: u64,
}

impl Keeper {
    /// The state the run has so far (a resumed run's, from its snapshots and log).
    fn start(db: PathBuf, run: String) -> Keeper {
        let run: Arc<str> = Arc::from(run.as_str());
        let mut state = crate::data::replay::log::replay_state(&run);
        let mut stored = 0;
        if let Ok(store) = Store::open(&db) {
            if let Ok((last, _)) = store.last_event(&run) {
                if last > 0 {
                    match open_at(&store, &run, last) {
                        Ok(o) => {
                            stored = o.snapshot.unwrap_or(0);
                            state = o.state;
                            crate::model::state::snapshot::normal_form(&mut state);
                        }
                        Err(e) => tracing::warn!("snapshots of {run}: cannot read its log: {e}"),
                    }
                }
            }
        }
        // No text at all: it is in the log, and a snapshot leaves it out.
        state.output_only = Some(usize::MAX);
        Keeper {
            db,
            run,
            state,
            stored,
        }
    }

    fn serve(mut self, mut input: UnboundedReceiver<Batches>, output: UnboundedSender<Batches>) {
        let mut output = Some(output);
        while let Some(batch) = input.blocking_recv() {
            for env in &batch {
                self.fold(env);
            }
            // The run's opening (its announcement of every task) is folded: what it
            // built and dropped on the way has been given back.
            crate::base::allocator::opened();
            if let Some(out) = &output {
                if out.send(batch).is_err() {
                    // The consumer went away; the run may still be winding down.
                    output = None;
                }
            }
        }
        if self.state.last_seq > self.stored {
            self.store();
        }
    }

    /// Folds one committed event (one already folded is skipped; a gap, events another
    /// process wrote, is read from the log first).
    fn fold(&mut self, env: &Envelope) {
        let last = self.state.last_seq;
        if env.seq <= last && self.state.events > 0 {
            return;
        }
        if env.seq > last + 1 {
            if let Ok(store) = Store::open(&self.db) {
                let r = crate::data::replay::feed::fold_range(
                    &store,
                    &self.run,
                    &mut self.state,
                    last + 1,
                    env.seq - 1,
                );
                if let Err(e) = r {
                    tracing::warn!(
                        "snapshots of {}: cannot read events {}..{}: {e}",
                        self.run,
                        last + 1,
                        env.seq - 1
                    );
                }
            }
        }
        reduce(&mut self.state, env);
    }

    fn store(&mut self) {
        let seq = self.state.last_seq;
        // Measured, then written straight into its row: a run's final snapshot is tens
        // of MB, and a buffer of it would add that to the run's peak memory.
        let r = measure(&self.state)
            .map_err(|e| e.to_string())
            .and_then(|m| {
                put_snapshot(&self.db, &self.run, seq, m.len(), |out| {
                    m.write_to(out).map_err(|e| e.to_string())
                })
                .map_err(|e| e.to_string())
            });
        match r {
            Ok(()) => self.stored = seq,
            Err(e) => tracing::warn!(
                "snapshots of {}: cannot store the state after event {seq}: {e}",
                self.run
            ),
        }
    }
}
