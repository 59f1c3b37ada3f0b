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
use crate::eval::checks::ToolCall;
use crate::eval::finish::{copy_tasks, epoch_docs};
use crate::eval::observe::{observe, tool_calls, CopyTasks};
use crate::eval::read;
use crate::eval::record::{self, AttemptRow, EvalRow, SampleRow};
use crate::eval::score::{check_marks, sample_verdict, score_attempt};
use crate::eval::spec::Scoring;
use crate::eval::tree::{documents, EpochDoc};
use crate::event::{EngineEvent, Envelope, RunStatus, TaskStatus};
use crate::store::{RowsWrite, Store, WriteOp, Writer};

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
                    && f.error_code != Some(crate::protocol::ErrorCode::E007) =>
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

/// How the scoring ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scored {
    /// Copies scored in this process.
    pub copies: u64,
    /// Copies left unscored (the run stopped before they finished).
    pub left: u64,
}

struct CopyState {
    sample: usize,
    epoch: u32,
    tasks: CopyTasks,
    finished: Vec<bool>,
    scored: bool,
}

struct SampleState {
    row: SampleRow,
    expected: Option<Value>,
    /// The input, kept only when a judge reads it.
    input: Value,
    epochs: Vec<Option<EpochDoc>>,
}

/// A scorer for eval `row` (whose samples are `samples`) on run `run_id`.
pub struct Scorer {
    db: PathBuf,
    row: EvalRow,
    scoring: Scoring,
    run_id: String,
    samples: Vec<SampleState>,
    copies: Vec<CopyState>,
    by_task: HashMap<String, (usize, usize)>,
    tools: HashMap<String, Vec<ToolCall>>,
    tools_read_to: u64,
    scored_now: u64,
    started: Instant,
    last_progress: Instant,
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
        samples: Vec<SampleRow>,
        run_id: String,
        progress: bool,
        stopped: Arc<AtomicBool>,
        judges: Option<Arc<JudgeSet>>,
    ) -> Result<Scorer> {
        let scoring = read::scoring_of(&row)?;
        let mut s = Scorer {
            db,
            scoring,
            run_id,
            samples: Vec::with_capacity(samples.len()),
            copies: Vec::new(),
            by_task: HashMap::new(),
            tools: HashMap::new(),
            tools_read_to: 0,
            scored_now: 0,
            started: Instant::now(),
            last_progress: Instant::now(),
            done_before: 0,
            progress,
            stopped,
            judges,
            row,
        };
        let epochs = s.scoring.epochs.max(1);
        for (i, mut sr) in samples.into_iter().enumerate() {
            let content: Value = serde_json::from_str(&sr.content).unwrap_or(Value::Null);
            let expected = content.get("expected").cloned().filter(|v| !v.is_null());
            let input = match (&s.judges, content.get("input")) {
                (Some(_), Some(v)) => v.clone(),
                _ => Value::Null,
            };
            // The tree writer has the sample's content for its document; the scorer
            // needs only the expected value.
            sr.content = String::new();
            let runs_here = sr.status == "pending" && sr.inherited_from.is_none();
            if runs_here {
                for epoch in 1..=epochs {
                    let tasks = copy_tasks(&s.scoring, &sr.sample_id, epoch);
                    let c = s.copies.len();
                    for (k, t) in tasks.tasks.iter().enumerate() {
                        s.by_task.insert(t.clone(), (c, k));
                    }
                    s.copies.push(CopyState {
                        sample: i,
                        epoch,
                        finished: vec![false; tasks.tasks.len()],
                        tasks,
                        scored: false,
                    });
                }
            } else {
                s.done_before += 1;
            }
            s.samples.push(SampleState {
                row: sr,
                expected,
                input,
                epochs: vec![None; epochs as usize],
            });
        }
        Ok(s)
    }

    /// Scores until the run ends: `rx` brings its events, then its end.
    pub fn run(mut self, rx: Receiver<Msg>, resuming: bool, tree: TreeWriter) -> Result<Scored> {
        let (writer, writer_thread) = crate::store::spawn_writer(&self.db, None)?;
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
        tree.finish();
        let left = self.copies.iter().filter(|c| !c.scored).count() as u64;
        Ok(Scored {
            copies: self.scored_now,
            left,
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
            if let (true, Some(&(c, k))) = (finished, self.by_task.get(&t.task_id)) {
                self.copies[c].finished[k] = true;
            }
        }
        let (read_tools, read_to) = tool_calls(store, &self.run_id)?;
        self.tools_read_to = read_to;
        // The calls by run, as the documents read them; handed back after.
        let mut by_run = crate::eval::finish::ToolsByRun::new();
        by_run.insert(self.run_id.clone(), read_tools);
        let attempts = read::attempts(store.conn(), &self.row.eval_id, None)?;
        let mut checks: HashMap<String, Vec<read::StoredCheck>> = HashMap::new();
        for c in read::check_results(store.conn(), &self.row.eval_id)? {
            checks.entry(c.sample_id.clone()).or_default().push(c);
        }
        let index: HashMap<String, usize> = self
            .samples
            .iter()
            .enumerate()
            .map(|(i, s)| (s.row.sample_id.clone(), i))
            .collect();
        let copy_of: HashMap<(usize, u32), usize> = self
            .copies
            .iter()
            .enumerate()
            .map(|(c, copy)| ((copy.sample, copy.epoch), c))
            .collect();
        for a in &attempts {
            let Some(&i) = index
                .get(&a.sample_id)
                .filter(|&&i| self.samples[i].row.status == "pending")
            else {
                continue;
            };
            if let Some(&c) = copy_of.get(&(i, a.epoch)) {
                self.copies[c].scored = true;
            }
            let sample = &self.samples[i];
            let docs = epoch_docs(
                Some(store),
                &by_run,
                &self.scoring,
                &sample.row,
                std::slice::from_ref(a),
                checks.get(&a.sample_id).map_or(&[], Vec::as_slice),
            )?;
            if let (Some(doc), Some(slot)) = (
                docs.into_iter().next(),
                self.samples[i].epochs.get_mut(a.epoch as usize - 1),
            ) {
                *slot = Some(doc);
            }
        }
        self.tools = by_run.remove(&self.run_id).unwrap_or_default();
        Ok(())
    }

    fn complete(&self, c: usize) -> bool {
        let copy = &self.copies[c];
        !copy.scored && copy.finished.iter().all(|f| *f)
    }

    /// Folds one fact; copies that became complete are pushed on `ready`.
    fn fold(&mut self, fact: TaskFact, ready: &mut Vec<usize>) {
        match fact {
            TaskFact::Finished(task) => {
                if let Some(&(c, k)) = self.by_task.get(&task) {
                    self.copies[c].finished[k] = true;
                    if self.complete(c) && !ready.contains(&c) {
                        ready.push(c);
                    }
                }
            }
            TaskFact::Reset(task) => {
                if let Some(&(c, k)) = self.by_task.get(&task) {
                    self.copies[c].finished[k] = false;
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
        let copy = &self.copies[c];
        let (i, epoch) = (copy.sample, copy.epoch);
        let calls: Vec<ToolCall> = copy
            .tasks
            .tasks
            .iter()
            .flat_map(|t| self.tools.remove(t).unwrap_or_default())
            .collect();
        let mut obs = observe(store, &self.run_id, &copy.tasks, calls)?;
        let sample = &self.samples[i];
        if let (Some(j), None) = (&self.judges, &obs.error) {
            obs.seen.judgments = j.judge(
                &sample.row.sample_id,
                &sample.input,
                sample.expected.as_ref(),
                &obs.seen.output,
            );
        }
        let attempt = score_attempt(
            &self.scoring,
            &sample.row.sample_id,
            epoch,
            &self.run_id,
            &obs,
            sample.expected.as_ref(),
        );
        let doc = EpochDoc {
            attempt: attempt.clone(),
            output: obs.seen.output,
            trace: obs.seen.trace,
        };
        self.copies[c].scored = true;
        self.scored_now += 1;
        let slot = self.samples[i]
            .epochs
            .get_mut(epoch as usize - 1)
            .ok_or_else(|| eyre!("epoch {epoch} out of range"))?;
        *slot = Some(doc);
        let whole = self.samples[i].epochs.iter().all(Option::is_some);
        let verdict = whole.then(|| {
            let done: Vec<&AttemptRow> = self.samples[i]
                .epochs
                .iter()
                .flatten()
                .map(|d| &d.attempt)
                .collect();
            let per: Vec<(String, f64)> =
                done.iter().map(|a| (a.status.clone(), a.score)).collect();
            let (status, score) = sample_verdict(self.scoring.reducer(), &per);
            (status, score, check_marks(&self.scoring, &done))
        });
        let eval_id = self.row.eval_id.clone();
        let sample_id = self.samples[i].row.sample_id.clone();
        let stored = verdict.clone();
        writer.send(WriteOp::Rows(RowsWrite(Box::new(move |tx| {
            record::put_attempt(tx, &eval_id, &attempt)?;
            if let Some((status, score, marks)) = &stored {
                record::put_verdict(tx, &eval_id, &sample_id, (status, *score), marks)?;
            }
            Ok(())
        }))))?;
        if let Some((status, score, marks)) = verdict {
            let s = &mut self.samples[i];
            s.row.status = status.to_string();
            s.row.score = Some(score);
            s.row.marks = Some(marks);
            let epochs: Vec<EpochDoc> = s.epochs.iter_mut().filter_map(Option::take).collect();
            let docs = documents(&self.row, &self.scoring, &s.row, &epochs);
            tree.send(TreeJob::Docs(Box::new((s.row.clone(), docs))));
            // The epochs were taken: the sample's memory is not needed again.
        }
        Ok(())
    }

    fn show_progress(&mut self, last: bool) {
        if !self.progress || (!last && self.last_progress.elapsed() < Duration::from_secs(1)) {
            return;
        }
        self.last_progress = Instant::now();
        let (mut passed, mut failed, mut errors, mut pending) = (0, 0, 0, 0);
        for s in &self.samples {
            match s.row.status.as_str() {
                "passed" => passed += 1,
                "failed" => failed += 1,
                "error" => errors += 1,
                _ => pending += 1,
            }
        }
        let total = self.samples.len() as u64;
        let done = total - pending;
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
