//! The scorer of a running eval, on a thread of its own: it follows the run's committed
//! events, and as each copy of the plan (a sample's epoch) has all its tasks finished,
//! reads what it produced, scores it, stores the attempt and its check results (with the
//! sample's verdict once its last epoch is scored) through a store writer of its own,
//! and hands the documents to the tree writer. After a crash it starts from what the
//! database holds: copies already scored are not scored again, copies finished but not
//! scored are scored first.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{eyre, Result};
use serde_json::Value;

use super::judging::JudgeSet;
use super::tree_writer::{TreeJob, TreeWriter};
use crate::data::store::{RowsWrite, Store, WriteOp, Writer};
use crate::features::eval::checks::ToolCall;
use crate::features::eval::finish::{copy_tasks, epoch_docs};
use crate::features::eval::observe::{observe, tool_calls, CopyTasks};
use crate::features::eval::read;
use crate::features::eval::record::{self, AttemptRow, EvalRow, SampleRow, SampleStatus as Status};
use crate::features::eval::score::{check_marks, sample_verdict, score_attempt};
use crate::features::eval::spec::Scoring;
use crate::features::eval::tree::{documents, EpochDoc};
use crate::model::event::{EngineEvent, Envelope, RunStatus, TaskStatus};

/// What the scorer is told.
pub enum Msg {
    /// What committed events of the run say about tasks.
    Facts(Vec<TaskFact>),
    /// The run ended with this status (the events are all sent).
    End(RunStatus),
}

/// What the scorer needs of an event (the rest, a stream's text above all, is dropped
/// before it reaches the scorer's queue, which stays small when scoring lags).
pub enum TaskFact {
    /// A task finished (not cancelled).
    Finished(String),
    /// A task in flight was reset by a resume.
    Reset(String),
    /// A task called a tool (in the event numbered `.2`).
    Tool(String, ToolCall, u64),
}

impl TaskFact {
    /// The fact an event tells, if the scorer needs it.
    pub fn of(env: &Envelope) -> Option<TaskFact> {
        let task = env.task_id.as_deref()?.to_string();
        match &env.event {
            // A task stopped for a person's review (E007) is not done: a decision and a
            // resume go on with it.
            EngineEvent::TaskFinished(f)
                if f.status != TaskStatus::Cancelled
                    && f.error_code != Some(crate::base::protocol::ErrorCode::E007) =>
            {
                Some(TaskFact::Finished(task))
            }
            EngineEvent::TaskReset(_) => Some(TaskFact::Reset(task)),
            EngineEvent::ToolCalled(t) => Some(TaskFact::Tool(
                task,
                ToolCall {
                    name: t.tool.clone(),
                    args: t.input.clone(),
                },
                env.seq,
            )),
            _ => None,
        }
    }
}

/// Copies' rows queued for the scorer's writer at most before scoring waits for them.
const WRITE_BACKLOG: usize = 256;

/// The page cache of the scorer's writer, KiB.
const SCORER_CACHE_KIB: i64 = 8 * 1024;

/// How the scoring ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scored {
    /// Copies scored in this process.
    pub copies: u64,
    /// Copies left unscored (the run stopped before they finished).
    pub left: u64,
    /// Whether the tree writer wrote every document it was given.
    pub tree_whole: bool,
}

/// One copy of the plan: a sample's epoch.
struct CopyState {
    /// The sample's index.
    sample: u32,
    epoch: u32,
    scored: bool,
}

/// A scorer for an eval (whose samples are `samples`) on the run its row names (given
/// by [`Scorer::on_run`] when the scorer is made before the run starts).
///
/// It holds little per sample (its id, its status, and a slot per task of its copies)
/// so that its memory stays small beside the run's: a sample's row, expected value and
/// input are read from the database when one of its copies is scored, and its scored
/// epochs are held only until its last one is.
pub struct Scorer {
    db: PathBuf,
    row: EvalRow,
    scoring: Scoring,
    run_id: String,
    /// Each sample's id and status, by position.
    ids: Vec<Box<str>>,
    status: Vec<Status>,
    /// Samples by status (pending, passed, failed, error).
    counts: [u64; 4],
    copies: Vec<CopyState>,
    /// Whether each task of each copy has finished (`plan_tasks` per copy).
    finished: Vec<bool>,
    /// A copy's task id to its slot in `finished`.
    by_task: rustc_hash::FxHashMap<Box<str>, u32>,
    /// The epochs scored of samples whose last epoch is not yet.
    partial: HashMap<u32, Vec<Option<EpochDoc>>>,
    tools: HashMap<String, Vec<ToolCall>>,
    tools_read_to: u64,
    scored_now: u64,
    started: Instant,
    last_progress: Instant,
    /// Samples done when the last progress line was printed (not printed twice).
    shown_done: Option<u64>,
    done_before: u64,
    progress: bool,
    stopped: Arc<AtomicBool>,
    judges: Option<Arc<JudgeSet>>,
}

impl Scorer {
    /// A scorer; `progress` prints a line on stderr every second; `judges` judge the
    /// eval's `judge` checks.
    pub fn new(
        db: PathBuf,
        row: EvalRow,
        samples: &[SampleRow],
        progress: bool,
        stopped: Arc<AtomicBool>,
        judges: Option<Arc<JudgeSet>>,
    ) -> Result<Scorer> {
        let scoring = read::scoring_of(&row)?;
        let mut s = Scorer {
            db,
            scoring,
            run_id: row.run_id.clone().unwrap_or_default(),
            ids: Vec::with_capacity(samples.len()),
            status: Vec::with_capacity(samples.len()),
            counts: [0; 4],
            copies: Vec::new(),
            finished: Vec::new(),
            by_task: Default::default(),
            partial: HashMap::new(),
            tools: HashMap::new(),
            tools_read_to: 0,
            scored_now: 0,
            started: Instant::now(),
            last_progress: Instant::now(),
            shown_done: None,
            done_before: 0,
            progress,
            stopped,
            judges,
            row,
        };
        let epochs = s.scoring.epochs.max(1);
        let per_copy = s.scoring.plan_tasks.len();
        for (i, sr) in samples.iter().enumerate() {
            let i = u32::try_from(i).map_err(|_| eyre!("too many samples"))?;
            let status = Status::parse(&sr.status);
            let runs_here = status == Status::Pending && sr.inherited_from.is_none();
            if runs_here {
                for epoch in 1..=epochs {
                    let tasks = copy_tasks(&s.scoring, &sr.sample_id, epoch);
                    let c = s.copies.len();
                    for (k, t) in tasks.tasks.into_iter().enumerate() {
                        let slot =
                            u32::try_from(c * per_copy + k).map_err(|_| eyre!("too many tasks"))?;
                        s.by_task.insert(t.into_boxed_str(), slot);
                    }
                    s.finished.extend(std::iter::repeat_n(false, per_copy));
                    s.copies.push(CopyState {
                        sample: i,
                        epoch,
                        scored: false,
                    });
                }
            } else {
                s.done_before += 1;
            }
            s.counts[status as usize] += 1;
            s.status.push(status);
            s.ids.push(sr.sample_id.as_str().into());
        }
        Ok(s)
    }

    /// The eval's row once its run has started (the run it names is the one scored).
    pub fn on_run(&mut self, row: EvalRow) {
        self.run_id = row.run_id.clone().unwrap_or_default();
        self.row = row;
    }

    /// Copy `c`'s tasks.
    fn tasks_of(&self, c: usize) -> CopyTasks {
        let copy = &self.copies[c];
        copy_tasks(&self.scoring, &self.ids[copy.sample as usize], copy.epoch)
    }

    /// The slots of copy `c` in `finished`.
    fn slots(&self, c: usize) -> std::ops::Range<usize> {
        let n = self.scoring.plan_tasks.len();
        c * n..(c + 1) * n
    }

    /// Scores until the run ends: `rx` brings its events, then its end.
    pub fn run(mut self, rx: Receiver<Msg>, resuming: bool, tree: TreeWriter) -> Result<Scored> {
        // A small page cache: the run's writer holds the large one.
        let (writer, writer_thread) =
            crate::data::store::spawn_writer_with_cache(&self.db, SCORER_CACHE_KIB)?;
        let store = Store::open(&self.db)?;
        if resuming {
            self.load(&store)?;
        }
        let ready: Vec<usize> = (0..self.copies.len())
            .filter(|&c| self.complete(c))
            .collect();
        for c in ready {
            self.score(c, &store, &writer, &tree)?;
        }
        let mut end = None;
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Facts(batch) => {
                    let mut ready = Vec::new();
                    for fact in batch {
                        self.fold(fact, &mut ready);
                    }
                    for c in ready {
                        if self.stopped.load(Ordering::SeqCst) {
                            break;
                        }
                        self.score(c, &store, &writer, &tree)?;
                    }
                    self.show_progress(false);
                }
                Msg::End(status) => {
                    end = Some(status);
                    break;
                }
            }
        }
        // A run that ended (not stopped) leaves no task to wait for: what has not
        // finished is scored as it is.
        if let Some(status) = end.filter(|_| !self.stopped.load(Ordering::SeqCst)) {
            if !matches!(
                status,
                RunStatus::Interrupted
                    | RunStatus::BudgetReached
                    | RunStatus::Running
                    | RunStatus::Paused
                    | RunStatus::AwaitingReview
            ) {
                let left: Vec<usize> = (0..self.copies.len())
                    .filter(|&c| !self.copies[c].scored)
                    .collect();
                for c in left {
                    if self.stopped.load(Ordering::SeqCst) {
                        break;
                    }
                    self.score(c, &store, &writer, &tree)?;
                }
            }
        }
        self.show_progress(true);
        writer.flush()?;
        drop(writer);
        let _ = writer_thread.join();
        let tree_whole = tree.finish();
        let left = self.copies.iter().filter(|c| !c.scored).count() as u64;
        Ok(Scored {
            copies: self.scored_now,
            left,
            tree_whole,
        })
    }

    /// What the database already holds for a resumed eval: tasks finished, copies
    /// scored, tool calls made.
    fn load(&mut self, store: &Store) -> Result<()> {
        for t in store.tasks(&self.run_id)? {
            let finished = matches!(
                t.status.as_str(),
                "success" | "partial" | "failed" | "timeout" | "blocked"
            ) && t.error_code.as_deref() != Some("E007");
            if let (true, Some(&slot)) = (finished, self.by_task.get(t.task_id.as_str())) {
                self.finished[slot as usize] = true;
            }
        }
        let (read_tools, read_to) = tool_calls(store, &self.run_id)?;
        self.tools_read_to = read_to;
        // The calls by run, as the documents read them; handed back after.
        let mut by_run = crate::features::eval::finish::ToolsByRun::new();
        by_run.insert(self.run_id.clone(), read_tools);
        let attempts = read::attempts(store.conn(), &self.row.eval_id, None)?;
        let mut checks: HashMap<String, Vec<read::StoredCheck>> = HashMap::new();
        for c in read::check_results(store.conn(), &self.row.eval_id)? {
            checks.entry(c.sample_id.clone()).or_default().push(c);
        }
        let index: HashMap<&str, usize> = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (&**id, i))
            .collect();
        let copy_of: HashMap<(u32, u32), usize> = self
            .copies
            .iter()
            .enumerate()
            .map(|(c, copy)| ((copy.sample, copy.epoch), c))
            .collect();
        let epochs = self.scoring.epochs.max(1) as usize;
        for a in &attempts {
            let Some(&i) = index
                .get(a.sample_id.as_str())
                .filter(|&&i| self.status[i] == Status::Pending)
            else {
                continue;
            };
            if let Some(&c) = copy_of.get(&(i as u32, a.epoch)) {
                self.copies[c].scored = true;
            }
            let Some(row) = read::sample(store.conn(), &self.row.eval_id, &a.sample_id)? else {
                continue;
            };
            let docs = epoch_docs(
                Some(store),
                &by_run,
                &self.scoring,
                &row,
                std::slice::from_ref(a),
                checks.get(&a.sample_id).map_or(&[], Vec::as_slice),
            )?;
            let slots = self
                .partial
                .entry(i as u32)
                .or_insert_with(|| vec![None; epochs]);
            if let (Some(doc), Some(slot)) = (
                docs.into_iter().next(),
                slots.get_mut((a.epoch as usize).wrapping_sub(1)),
            ) {
                *slot = Some(doc);
            }
        }
        self.tools = by_run.remove(&self.run_id).unwrap_or_default();
        Ok(())
    }

    fn complete(&self, c: usize) -> bool {
        !self.copies[c].scored && self.finished[self.slots(c)].iter().all(|f| *f)
    }

    /// Folds one fact; copies that became complete are pushed on `ready`.
    fn fold(&mut self, fact: TaskFact, ready: &mut Vec<usize>) {
        let per_copy = self.scoring.plan_tasks.len().max(1);
        match fact {
            TaskFact::Finished(task) => {
                if let Some(&slot) = self.by_task.get(task.as_str()) {
                    self.finished[slot as usize] = true;
                    let c = slot as usize / per_copy;
                    if self.complete(c) && !ready.contains(&c) {
                        ready.push(c);
                    }
                }
            }
            TaskFact::Reset(task) => {
                if let Some(&slot) = self.by_task.get(task.as_str()) {
                    self.finished[slot as usize] = false;
                }
            }
            // Calls the resume's reading of the log already has are not added twice.
            TaskFact::Tool(task, call, seq) if seq > self.tools_read_to => {
                self.tools.entry(task).or_default().push(call)
            }
            TaskFact::Tool(..) => {}
        }
    }

    /// Scores copy `c`, stores it (and the sample's verdict when it was its last epoch),
    /// and sends the sample's documents to the tree once it is whole.
    fn score(&mut self, c: usize, store: &Store, writer: &Writer, tree: &TreeWriter) -> Result<()> {
        let tasks = self.tasks_of(c);
        let (i, epoch) = (self.copies[c].sample as usize, self.copies[c].epoch);
        let calls: Vec<ToolCall> = tasks
            .tasks
            .iter()
            .flat_map(|t| self.tools.remove(t).unwrap_or_default())
            .collect();
        let mut obs = observe(store, &self.run_id, &tasks, calls)?;
        let mut row =
            read::sample(store.conn(), &self.row.eval_id, &self.ids[i])?.ok_or_else(|| {
                eyre!(
                    "sample {} of eval {} is not in the database",
                    self.ids[i],
                    self.row.eval_id
                )
            })?;
        let content: Value = serde_json::from_str(&row.content).unwrap_or(Value::Null);
        let expected = content.get("expected").filter(|v| !v.is_null());
        if let (Some(j), None) = (&self.judges, &obs.error) {
            obs.seen.judgments = j.judge(
                &row.sample_id,
                content.get("input").unwrap_or(&Value::Null),
                expected,
                &obs.seen.output,
            );
        }
        let attempt = score_attempt(
            &self.scoring,
            &row.sample_id,
            epoch,
            &self.run_id,
            &obs,
            expected,
        );
        let doc = EpochDoc {
            attempt: attempt.clone(),
            output: obs.seen.output,
            trace: obs.seen.trace,
        };
        self.copies[c].scored = true;
        self.scored_now += 1;
        let epochs = self.scoring.epochs.max(1) as usize;
        let mut done = self
            .partial
            .remove(&(i as u32))
            .unwrap_or_else(|| vec![None; epochs]);
        *done
            .get_mut((epoch as usize).wrapping_sub(1))
            .ok_or_else(|| eyre!("epoch {epoch} out of range"))? = Some(doc);
        let whole = done.iter().all(Option::is_some);
        let verdict = whole.then(|| {
            let attempts: Vec<&AttemptRow> = done.iter().flatten().map(|d| &d.attempt).collect();
            let per: Vec<(String, f64)> = attempts
                .iter()
                .map(|a| (a.status.clone(), a.score))
                .collect();
            let (status, score) = sample_verdict(self.scoring.reducer(), &per);
            (status, score, check_marks(&self.scoring, &attempts))
        });
        let eval_id = self.row.eval_id.clone();
        let sample_id = row.sample_id.clone();
        let stored = verdict.clone();
        writer.send(WriteOp::Rows(RowsWrite(Box::new(move |tx| {
            record::put_attempt(tx, &eval_id, &attempt)?;
            if let Some((status, score, marks)) = &stored {
                record::put_verdict(tx, &eval_id, &sample_id, (status, *score), marks)?;
            }
            Ok(())
        }))))?;
        // When the database is slower than scoring, scoring waits: the rows queued stay
        // few, whatever the number of samples.
        if writer.stats().backlog.load(Ordering::Relaxed) > WRITE_BACKLOG {
            writer.flush()?;
        }
        match verdict {
            Some((status, score, marks)) => {
                let now = Status::parse(status);
                self.counts[self.status[i] as usize] -= 1;
                self.counts[now as usize] += 1;
                self.status[i] = now;
                row.status = status.to_string();
                row.score = Some(score);
                row.marks = Some(marks);
                let epochs: Vec<EpochDoc> = done.into_iter().flatten().collect();
                let docs = documents(&self.row, &self.scoring, &row, &epochs);
                // The sample's epochs go with its documents: nothing of it stays here.
                tree.send(TreeJob::Docs(Box::new((row, docs))));
            }
            None => {
                self.partial.insert(i as u32, done);
            }
        }
        Ok(())
    }

    fn show_progress(&mut self, last: bool) {
        if !self.progress || (!last && self.last_progress.elapsed() < Duration::from_secs(1)) {
            return;
        }
        let [pending, passed, failed, errors] = self.counts;
        let total = self.ids.len() as u64;
        let done = total - pending;
        if last && self.shown_done == Some(done) {
            return;
        }
        self.last_progress = Instant::now();
        self.shown_done = Some(done);
        let rate = (done - self.done_before.min(done)) as f64
            / self.started.elapsed().as_secs_f64().max(0.001);
        let left = if rate > 0.0 && pending > 0 {
            format!(" · ~{:.0} s left", pending as f64 / rate)
        } else {
            String::new()
        };
        crate::errln!(
            "eval {}: {done}/{total} samples ({passed} passed, {failed} failed, {errors} errors) · {rate:.1}/s{left}",
            self.row.eval_id
        );
    }
}
