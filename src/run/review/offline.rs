//! A decision on a run no live process executes: the run's lease is taken (refused
//! while another process owns the run), the decision's event appended at the log's next
//! number with everything it changes in one transaction, and the lease given back.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::{
    accepted, check, check_verdict, decided_at, unblocked_tasks, Decided, DecisionKind,
    ReviewError, ReviewItem, Verdict,
};
use crate::data::store::lease::HeldLease;
use crate::data::store::{open_connection, ReviewWrite, Store, StoreError};
use crate::model::event::{
    EngineEvent, Envelope, ReviewAccepted, ReviewRejected, RunFinished, RunStatus, TaskStatus,
};
use crate::model::plan::parse_plan;

/// Decides on `task` of run `run` (an id, a unique prefix or `latest`) in the database
/// at `db`, as `reviewer`. The run must not be executed by another live process
/// ([`ReviewError::Owned`]); a file written by an older plexus is upgraded first.
///
/// An acceptance frees the task's blocked dependents for `plexus resume`
/// ([`Decided::unblocked`]); when it frees none and every task of a run that ended
/// failed is final, the run's end is reported again with its new status.
pub fn decide(
    db: &Path,
    run: &str,
    task: &str,
    verdict: &Verdict,
    reviewer: &str,
) -> Result<Decided, ReviewError> {
    check_verdict(verdict, reviewer)?;
    let reviewer = reviewer.trim().to_string();
    if !db.is_file() {
        return Err(StoreError::Missing(db.to_path_buf()).into());
    }
    drop(open_connection(db)?);
    let run_id = Store::open(db)?.run(run)?.run_id;
    let lease = match HeldLease::acquire(db, &run_id) {
        Ok(l) => l,
        Err(StoreError::Owned { run_id, owner }) => {
            return Err(ReviewError::Owned { run_id, owner })
        }
        Err(e) => return Err(e.into()),
    };
    let store = Store::open(db)?;
    let d = Deciding::read(&store, run_id, task, reviewer)?;
    let mut decided = d.decided();
    let write = match verdict {
        Verdict::Reject { reason } => d.rejection(reason, &mut decided)?,
        Verdict::Accept { note } => d.acceptance(note.as_deref(), &mut decided)?,
    };
    let Some(held) = lease.lease() else {
        return Err(StoreError::WriterGone("the run's lease was given away".into()).into());
    };
    crate::data::store::review_write::commit(&mut open_connection(db)?, held, &write)?;
    drop(lease);
    Ok(decided)
}

/// A decision being made under the run's lease: what the store says of the run and the
/// task, and the decision's number and time.
struct Deciding<'a> {
    store: &'a Store,
    run_id: String,
    item: ReviewItem,
    /// The run's status as stored.
    run_status: String,
    /// The decision event's number.
    seq: u64,
    ts: i64,
    /// `ts` as stored.
    at: String,
    reviewer: String,
    /// The run ended failed or waiting for review.
    ended_failed: bool,
    /// The tasks still waiting for review once this decision is made.
    waiting: HashSet<String>,
}

impl<'a> Deciding<'a> {
    /// Reads what a decision on `task` of run `run_id` needs (refused when the task is
    /// not waiting for a decision).
    fn read(
        store: &'a Store,
        run_id: String,
        task: &str,
        reviewer: String,
    ) -> Result<Self, ReviewError> {
        let item = check(store, &run_id, task)?;
        let summary = store.run(&run_id)?;
        let seq = store.last_event(&run_id)?.0 + 1;
        let ts = chrono::Utc::now().timestamp_millis();
        let at = decided_at(ts);
        let ended_failed =
            RunStatus::parse(&summary.status).is_some_and(RunStatus::is_failed_or_waiting);
        let waiting: HashSet<String> = store
            .review_queue(Some(&run_id))?
            .into_iter()
            .filter(|i| i.waits() && i.task_id != item.task_id)
            .map(|i| i.task_id)
            .collect();
        Ok(Deciding {
            store,
            run_id,
            item,
            run_status: summary.status,
            seq,
            ts,
            at,
            reviewer,
            ended_failed,
            waiting,
        })
    }

    /// An event of the run at number `seq` (of the task's invocation when `with_task`).
    fn envelope(&self, seq: u64, event: EngineEvent, with_task: bool) -> Arc<Envelope> {
        let item = &self.item;
        Arc::new(Envelope {
            run_id: Arc::from(self.run_id.as_str()),
            seq,
            ts: self.ts,
            task_id: with_task.then(|| Arc::from(item.task_id.as_str())),
            invocation_id: with_task.then(|| Arc::from(item.invocation_id.as_str())),
            agent: with_task.then(|| Arc::from(item.agent.as_str())),
            event,
        })
    }

    /// What a rejection did (the acceptance fills in the rest).
    fn decided(&self) -> Decided {
        Decided {
            run_id: self.run_id.clone(),
            task_id: self.item.task_id.clone(),
            invocation_id: self.item.invocation_id.clone(),
            decision: DecisionKind::Rejected,
            reviewer: self.reviewer.clone(),
            decided_at: self.at.clone(),
            seq: self.seq,
            status: TaskStatus::Failed,
            atoms: 0,
            unblocked: Vec::new(),
            run_status: None,
        }
    }

    /// The run's new status with the tasks' `status`.
    fn new_status(&self, status: &HashMap<String, TaskStatus>) -> RunStatus {
        crate::model::gate::status::run_status_of(
            status.iter().map(|(t, s)| (*s, self.waiting.contains(t))),
        )
    }

    /// The write of a rejection for `reason`, with the run's end when it changes.
    fn rejection(&self, reason: &str, decided: &mut Decided) -> Result<ReviewWrite, ReviewError> {
        let rows = self.store.tasks(&self.run_id)?;
        let status = task_statuses(&rows, &self.item.task_id, TaskStatus::Failed);
        // A run that waited for review and no longer does failed: its end is
        // reported again.
        let new = self.new_status(&status);
        let run_end = (self.ended_failed
            && status.values().all(|s| s.is_final())
            && RunStatus::parse(&self.run_status) != Some(new))
        .then(|| {
            let event = EngineEvent::RunFinished(RunFinished {
                status: new,
                tasks: tally(&status),
                atoms: rows.iter().map(|t| t.atoms).sum::<i64>() as u32,
                grades: self.store.run_grades(&self.run_id).unwrap_or_default(),
            });
            (self.envelope(self.seq + 1, event, false), new)
        });
        decided.run_status = run_end.as_ref().map(|(_, s)| *s);
        let event = EngineEvent::ReviewRejected(ReviewRejected {
            reviewer: self.reviewer.clone(),
            reason: reason.trim().to_string(),
        });
        Ok(ReviewWrite {
            event: self.envelope(self.seq, event, true),
            accepted: false,
            reviewer: self.reviewer.clone(),
            note: Some(reason.trim().to_string()),
            decided_at: self.at.clone(),
            atoms: Vec::new(),
            task_status: None,
            run_end: run_end.map(|(e, s)| (e, s.as_str())),
        })
    }

    /// The write of an acceptance with `note`, with the run's end when nothing is left
    /// to run.
    fn acceptance(
        &self,
        note: Option<&str>,
        decided: &mut Decided,
    ) -> Result<ReviewWrite, ReviewError> {
        let note = note
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let acc = accepted(self.store, &self.item)?;
        let atoms = acc.rows.len() as u32;
        let rows = self.store.tasks(&self.run_id)?;
        let status = task_statuses(&rows, &self.item.task_id, acc.status);
        let (source, plan_json, _) = self.store.run_plan(&self.run_id)?;
        let plan = parse_plan(&plan_json, &source).map_err(|e| ReviewError::Plan {
            run_id: self.run_id.clone(),
            message: e.to_string(),
        })?;
        decided.unblocked = unblocked_tasks(&plan, &status);
        // Nothing left to run in a run that ended: it ended otherwise.
        let run_end = (decided.unblocked.is_empty()
            && self.ended_failed
            && status.values().all(|s| s.is_final()))
        .then(|| self.accepted_end(&status, &rows, &acc.grades, atoms));
        decided.run_status = run_end.as_ref().map(|(_, s)| *s);
        decided.decision = DecisionKind::Accepted;
        decided.status = acc.status;
        decided.atoms = atoms;
        let event = EngineEvent::ReviewAccepted(ReviewAccepted {
            reviewer: self.reviewer.clone(),
            note: note.clone(),
            status: acc.status,
            atoms,
            grades: acc.grades,
        });
        Ok(ReviewWrite {
            event: self.envelope(self.seq, event, true),
            accepted: true,
            reviewer: self.reviewer.clone(),
            note,
            decided_at: self.at.clone(),
            atoms: acc.rows,
            task_status: Some((acc.status.as_str(), atoms)),
            run_end: run_end.map(|(e, s)| (e, s.as_str())),
        })
    }

    /// The run's end after an acceptance of `atoms` atoms graded `grades` (the other
    /// tasks' `rows` as stored), and its new status.
    fn accepted_end(
        &self,
        status: &HashMap<String, TaskStatus>,
        rows: &[crate::data::store::TaskRow],
        accepted_grades: &crate::base::protocol::GradeCounts,
        atoms: u32,
    ) -> (Arc<Envelope>, RunStatus) {
        let new = self.new_status(status);
        let tasks = tally(status);
        let mut grades = self.store.run_grades(&self.run_id).unwrap_or_default();
        grades.merge(accepted_grades);
        let before: i64 = rows
            .iter()
            .filter(|t| t.task_id != self.item.task_id)
            .map(|t| t.atoms)
            .sum();
        let event = EngineEvent::RunFinished(RunFinished {
            status: new,
            tasks,
            atoms: before as u32 + atoms,
            grades,
        });
        (self.envelope(self.seq + 1, event, false), new)
    }
}

/// Every task's status as stored, with `task`'s replaced by `now` (the decision's).
fn task_statuses(
    rows: &[crate::data::store::TaskRow],
    task: &str,
    now: TaskStatus,
) -> HashMap<String, TaskStatus> {
    let mut status: HashMap<String, TaskStatus> = rows
        .iter()
        .map(|t| {
            let s = TaskStatus::parse(&t.status).unwrap_or(TaskStatus::Pending);
            (t.task_id.clone(), s)
        })
        .collect();
    status.insert(task.to_string(), now);
    status
}

/// Tasks by status.
fn tally(status: &HashMap<String, TaskStatus>) -> BTreeMap<TaskStatus, u32> {
    let mut tasks: BTreeMap<TaskStatus, u32> = BTreeMap::new();
    for s in status.values() {
        *tasks.entry(*s).or_insert(0) += 1;
    }
    tasks
}
