//! A person's review decision on a run this process executes (`Control::Review`): the
//! coordinator checks it against the store and its own graph, appends the decision's
//! event with everything it stores in one write, and on an acceptance makes the task's
//! output available and queues the tasks it had blocked. The request is answered with
//! what the decision did or why it was refused; a refusal writes nothing.

use std::collections::VecDeque;
use std::sync::Arc;

use super::emit::Scope;
use super::graph::{resumed, status_after, Node};
use super::reopen::reopen_below;
use super::run_ctx::{task_scope, write_run_status, RunCtx};
use super::EngineError;
use crate::base::protocol::GradeCounts;
use crate::data::store::{ReviewWrite, Store, WriteOp};
use crate::model::event::{
    EngineEvent, Envelope, ReviewAccepted, ReviewRejected, RunStatus, TaskStatus,
};
use crate::run::review::{
    accepted, check, check_verdict, decided_at, Accepted, Decided, DecisionKind, ReviewError,
    ReviewItem, ReviewRequest, Verdict,
};

/// Handles one review request and answers it. `ended`: the run had reported its end
/// and is held open — an acceptance that frees tasks opens it again (`run_resumed`).
/// `stopping`: the run is being cancelled or interrupted (refused). Returns whether the
/// run's outcome may have changed (it reports its end again once nothing runs).
#[allow(clippy::too_many_arguments)]
pub(super) fn handle(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    totals: &mut GradeCounts,
    req: ReviewRequest,
    ended: bool,
    stopping: bool,
) -> Result<bool, EngineError> {
    let before = ready.len();
    let previous = status_after(nodes);
    let answer = if stopping {
        Err(ReviewError::Stopping)
    } else {
        decide(ctx, nodes, ready, totals, &req)?
    };
    // An acceptance changes the outcome; so does a rejection of the last task that
    // waited (the run no longer waits for review: it failed).
    let changed = matches!(&answer, Ok(d) if d.decision == DecisionKind::Accepted)
        || (answer.is_ok() && status_after(nodes) != previous);
    if let Ok(d) = &answer {
        tracing::info!(
            "review of {} ({}): {:?} by {}",
            d.task_id,
            d.invocation_id,
            d.decision,
            d.reviewer
        );
    }
    if ended && ready.len() > before {
        ctx.emitter
            .emit(&Scope::default(), resumed(nodes, previous))?;
        write_run_status(ctx, RunStatus::Running)?;
    }
    for &i in ready.iter().skip(before) {
        ctx.emitter.emit(
            &task_scope(ctx, i),
            EngineEvent::TaskReady(crate::model::event::Empty {}),
        )?;
    }
    req.reply.send(answer);
    Ok(changed)
}

/// The decision itself: `Ok(Err(_))` is a refusal, `Err(_)` a store failure that stops
/// the run.
fn decide(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    totals: &mut GradeCounts,
    req: &ReviewRequest,
) -> Result<Result<Decided, ReviewError>, EngineError> {
    let (i, item, acc) = match read_item(ctx, nodes, req)? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    let reviewer = req.reviewer.trim().to_string();
    let scope = Scope {
        invocation_id: Some(Arc::from(item.invocation_id.as_str())),
        ..task_scope(ctx, i)
    };
    let (event, note) = match decision_event(req, &reviewer, &item, acc.as_ref()) {
        Ok(e) => e,
        Err(e) => return Ok(Err(e)),
    };
    let atoms = acc.as_ref().map_or(0, |a| a.rows.len() as u32);
    let rows = acc.as_ref().map(|a| a.rows.clone()).unwrap_or_default();
    let task_status = acc.as_ref().map(|a| (a.status.as_str(), atoms));
    let env: Arc<Envelope> = ctx.emitter.emit_with(&scope, event, |env| {
        WriteOp::Review(Box::new(ReviewWrite {
            accepted: acc.is_some(),
            reviewer: reviewer.clone(),
            note,
            decided_at: decided_at(env.ts),
            atoms: rows,
            task_status,
            run_end: None,
            event: env,
        }))
    })?;
    let mut decided = Decided {
        run_id: ctx.run_id.to_string(),
        task_id: req.task.clone(),
        invocation_id: item.invocation_id.clone(),
        decision: DecisionKind::Rejected,
        reviewer: reviewer.clone(),
        decided_at: decided_at(env.ts),
        seq: env.seq,
        status: TaskStatus::Failed,
        atoms: 0,
        unblocked: Vec::new(),
        run_status: None,
    };
    nodes[i].awaiting_review = false;
    if let Some(acc) = acc {
        let reason = format!("review of `{}` accepted by {reviewer}", req.task);
        let status = acc.status;
        let unblocked = take_accepted(ctx, nodes, ready, totals, i, acc, &reason)?;
        decided.decision = DecisionKind::Accepted;
        decided.status = status;
        decided.atoms = atoms;
        decided.unblocked = unblocked;
    }
    Ok(Ok(decided))
}

/// The task's index, its review item and what accepting it stores.
type ToDecide = (usize, ReviewItem, Option<Accepted>);

/// Reads the review item of the request's task (task index, item, what accepting it
/// stores) once the request and the task's state allow a decision; `Ok(Err(_))` is a
/// refusal.
fn read_item(
    ctx: &RunCtx,
    nodes: &[Node],
    req: &ReviewRequest,
) -> Result<Result<ToDecide, ReviewError>, EngineError> {
    if let Err(e) = check_verdict(&req.verdict, &req.reviewer) {
        return Ok(Err(e));
    }
    let Some(i) = ctx.plan.task_index(&req.task) else {
        return Ok(Err(ReviewError::NoSuchTask {
            run_id: ctx.run_id.to_string(),
            task: req.task.clone(),
        }));
    };
    let Some(db) = &ctx.db else {
        return Ok(Err(ReviewError::NoDatabase));
    };
    // What the workers and earlier decisions wrote is read back below.
    ctx.emitter.writer().flush()?;
    let read = Store::open(db)
        .map_err(ReviewError::from)
        .and_then(|store| {
            let item = check(&store, &ctx.run_id, &req.task)?;
            let acc = match &req.verdict {
                Verdict::Accept { .. } => Some(accepted(&store, &item)?),
                Verdict::Reject { .. } => None,
            };
            Ok((item, acc))
        });
    let (item, acc) = match read {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    if nodes[i].status != TaskStatus::Failed {
        return Ok(Err(ReviewError::NotInReview {
            run_id: ctx.run_id.to_string(),
            task: req.task.clone(),
            status: nodes[i].status.as_str().into(),
            error_code: None,
        }));
    }
    Ok(Ok((i, item, acc)))
}

/// The decision's event and the note stored with it (a rejection's reason, an
/// acceptance's note); refused when there is nothing to accept.
fn decision_event(
    req: &ReviewRequest,
    reviewer: &str,
    item: &ReviewItem,
    acc: Option<&Accepted>,
) -> Result<(EngineEvent, Option<String>), ReviewError> {
    match &req.verdict {
        Verdict::Reject { reason } => {
            let reason = reason.trim().to_string();
            let event = EngineEvent::ReviewRejected(ReviewRejected {
                reviewer: reviewer.to_string(),
                reason: reason.clone(),
            });
            Ok((event, Some(reason)))
        }
        Verdict::Accept { note } => {
            let Some(acc) = acc else {
                return Err(ReviewError::NothingToAccept {
                    task: req.task.clone(),
                    invocation: item.invocation_id.clone(),
                });
            };
            let note = note
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            let event = EngineEvent::ReviewAccepted(ReviewAccepted {
                reviewer: reviewer.to_string(),
                note: note.clone(),
                status: acc.status,
                atoms: acc.rows.len() as u32,
                grades: acc.grades,
            });
            Ok((event, note))
        }
    }
}

/// Makes task `i`'s accepted output count (its status, grades, assets and output for its
/// dependents) and reopens the tasks it blocked, for `reason`; their ids.
fn take_accepted(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    totals: &mut GradeCounts,
    i: usize,
    acc: Accepted,
    reason: &str,
) -> Result<Vec<String>, EngineError> {
    nodes[i].status = acc.status;
    nodes[i].atoms = acc.rows.len() as u32;
    totals.merge(&acc.grades);
    if let Ok(mut k) = ctx.known_assets.write() {
        for a in &acc.output.atoms {
            k.insert(&a.asset_id);
        }
    }
    if let Ok(mut o) = ctx.outputs.write() {
        o.insert(i, Arc::new(acc.output));
    }
    let reopened = reopen_below(ctx, nodes, ready, i, reason)?;
    Ok(reopened
        .into_iter()
        .map(|d| ctx.plan.tasks[d].task_id.clone())
        .collect())
}
