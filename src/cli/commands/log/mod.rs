//! `plexus log RUN`: a run's event log as JSON lines (one envelope per line, oldest
//! first), filtered by kind, task and time, and followed while another process is still
//! writing it. The database is opened read-only (nothing is created) and the log is
//! read a page (an id range) at a time, never whole.

pub mod since;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use color_eyre::eyre::{eyre, Result};

use crate::data::store::{EventRow, RunSummary, Store};
use crate::model::event::{EngineEvent, Envelope, RunStatus};
use since::Since;

/// Events read per query.
const PAGE: u64 = 4096;

/// How long `follow` waits between two looks at the database.
pub const FOLLOW_POLL: Duration = Duration::from_millis(150);

/// Most task ids an unknown `--task` error lists.
const LISTED_TASKS: usize = 20;

pub use crate::cli::args::LogFilter;

/// A filter checked against one run.
struct Selection {
    kinds: Option<BTreeSet<&'static str>>,
    task: Option<String>,
    since: Option<Since>,
}

impl Selection {
    /// Checks `filter` against the run: unknown kinds, tasks and times are errors.
    fn new(store: &Store, run: &RunSummary, filter: &LogFilter) -> Result<Selection> {
        let kinds = kinds(&filter.kinds)?;
        if let Some(task) = &filter.task {
            let tasks = store.tasks(&run.run_id)?;
            if !tasks.iter().any(|t| &t.task_id == task) {
                let mut listed: Vec<&str> = tasks
                    .iter()
                    .take(LISTED_TASKS)
                    .map(|t| t.task_id.as_str())
                    .collect();
                if tasks.len() > LISTED_TASKS {
                    listed.push("…");
                }
                return Err(eyre!(
                    "--task: run {} has no task `{task}`; its tasks are: {}",
                    run.run_id,
                    listed.join(", ")
                ));
            }
        }
        let since = match &filter.since {
            None => None,
            Some(text) => Some(since::parse(text, || run_start(store, run))?),
        };
        Ok(Selection {
            kinds,
            task: filter.task.clone(),
            since,
        })
    }

    /// Whether an event of this kind is printed.
    fn keeps_kind(&self, kind: &str) -> bool {
        self.kinds.as_ref().is_none_or(|k| k.contains(kind))
    }

    /// Whether the event's task and time are kept (whatever its kind).
    fn keeps_place(&self, e: &EventRow) -> bool {
        self.task
            .as_ref()
            .is_none_or(|t| e.task_id.as_deref() == Some(t.as_str()))
            && self.since.is_none_or(|s| s.keeps(e.seq, e.ts))
    }
}

/// The kinds asked for (`None`: all), each element split on commas.
fn kinds(asked: &[String]) -> Result<Option<BTreeSet<&'static str>>> {
    if asked.is_empty() {
        return Ok(None);
    }
    let mut out = BTreeSet::new();
    for name in asked.iter().flat_map(|a| a.split(',')).map(str::trim) {
        if name.is_empty() {
            continue;
        }
        match EngineEvent::KINDS.iter().find(|k| **k == name) {
            Some(k) => {
                out.insert(*k);
            }
            None => {
                return Err(eyre!(
                    "--kind: unknown event kind `{name}`; the kinds are: {}",
                    EngineEvent::KINDS.join(", ")
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(eyre!(
            "--kind: no kind given; the kinds are: {}",
            EngineEvent::KINDS.join(", ")
        ));
    }
    Ok(Some(out))
}

/// When the run started, in milliseconds since the epoch: its first event's time, or
/// (before it has one) the time its row was created.
fn run_start(store: &Store, run: &RunSummary) -> Result<i64> {
    if let Some(first) = store.events(&run.run_id, 1, 1)?.first() {
        return Ok(first.ts);
    }
    chrono::DateTime::parse_from_rfc3339(&run.created_at)
        .map(|t| t.timestamp_millis())
        .map_err(|e| {
            eyre!(
                "run {} has no events and its start `{}` is not a time: {e}",
                run.run_id,
                run.created_at
            )
        })
}

/// Whether a live process is still writing the run (its status is running or paused
/// and the process holding its lease is alive).
fn written_live(store: &Store, run_id: &str) -> Result<bool> {
    let status = store.run_status(run_id)?;
    let open = matches!(
        RunStatus::parse(&status),
        Some(RunStatus::Running | RunStatus::Paused)
    );
    Ok(open && store.run_owner_alive(run_id)?)
}

/// Prints the events of `run` (an id, a unique prefix or `latest`) in the database at
/// `db` that `filter` keeps, as JSON lines on standard output. A closed standard output
/// ends the process quietly.
pub fn print_log_filtered(db: &Path, run: &str, filter: &LogFilter) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write_log(db, run, filter, &mut out).map_err(crate::base::out::closed_pipe_ends)
}

/// Prints a run's event log as JSON lines (one envelope per line), oldest first; see
/// [`print_log_filtered`] for a filtered or followed log.
pub fn print_log(store: &Store, id: &str) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write_store_log(store, id, &LogFilter::default(), &mut out)
        .map_err(crate::base::out::closed_pipe_ends)
}

/// [`print_log_filtered`] writing to `out` (flushed after each page and each look at
/// the database while following).
pub fn write_log(db: &Path, run: &str, filter: &LogFilter, out: &mut dyn Write) -> Result<()> {
    let store = Store::open(db)?;
    write_store_log(&store, run, filter, out)
}

/// [`write_log`] on an open store.
pub fn write_store_log(
    store: &Store,
    run: &str,
    filter: &LogFilter,
    out: &mut dyn Write,
) -> Result<()> {
    let summary = store.run(run)?;
    let sel = Selection::new(store, &summary, filter)?;
    let run_id: Arc<str> = Arc::from(summary.run_id.as_str());
    let mut next = sel.since.map_or(1, Since::first_seq);
    loop {
        // Looked at before reading: whatever was committed before the run ended is
        // read below, and then the loop stops.
        let live = filter.follow && written_live(store, &run_id)?;
        let (last, _) = store.last_event(&run_id)?;
        while next <= last {
            let to = last.min(next.saturating_add(PAGE - 1));
            for e in store.events(&run_id, next, to)? {
                write_event(&run_id, e, &sel, out)?;
            }
            out.flush()?;
            next = to + 1;
        }
        out.flush()?;
        if !live {
            return Ok(());
        }
        std::thread::sleep(FOLLOW_POLL);
    }
}

/// Writes one event as a JSON line when the selection keeps it.
fn write_event(run_id: &Arc<str>, e: EventRow, sel: &Selection, out: &mut dyn Write) -> Result<()> {
    if !sel.keeps_place(&e) {
        return Ok(());
    }
    let event = match e.event {
        Ok(ev) if sel.keeps_kind(ev.kind()) => ev,
        Ok(_) => return Ok(()),
        Err(err) => {
            crate::errln!("event {} skipped: {err}", e.seq);
            return Ok(());
        }
    };
    let env = Envelope {
        run_id: run_id.clone(),
        seq: e.seq,
        ts: e.ts,
        task_id: e.task_id.map(Into::into),
        invocation_id: e.invocation_id.map(Into::into),
        agent: e.agent.map(Into::into),
        event,
    };
    serde_json::to_writer(&mut *out, &env)?;
    out.write_all(b"\n")?;
    Ok(())
}
