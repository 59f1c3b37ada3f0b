//! Giving finished tasks another chance: a person's retry of a failed task, and the
//! blocked tasks below a task that became usable again (retried, or accepted on review)
//! going back to pending and, once their dependencies are met, to the ready queue.

use std::collections::VecDeque;

use super::graph::{fallback_allows, write_task, Node};
use super::run_ctx::{task_scope, RunCtx};
use super::EngineError;
use crate::model::event::{EngineEvent, TaskReset, TaskStatus};

/// Sets task `j` back to pending, with a `task_reset` saying why.
pub(super) fn reset_task(
    ctx: &RunCtx,
    nodes: &mut [Node],
    j: usize,
    reason: &str,
) -> Result<(), EngineError> {
    nodes[j].status = TaskStatus::Pending;
    nodes[j].awaiting_review = false;
    write_task(ctx, j, &nodes[j], None, None)?;
    ctx.emitter.emit(
        &task_scope(ctx, j),
        EngineEvent::TaskReset(TaskReset {
            reason: reason.to_string(),
        }),
    )?;
    Ok(())
}

/// Puts a failed or timed-out task back in the ready queue, and the tasks it blocked back
/// to pending. Returns whether anything changed.
pub(super) fn retry(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    task: &str,
) -> Result<bool, EngineError> {
    let Some(i) = ctx.plan.task_index(task) else {
        return Ok(false);
    };
    if !matches!(nodes[i].status, TaskStatus::Failed | TaskStatus::Timeout) {
        return Ok(false);
    }
    let reason = format!("retry of `{task}` requested");
    reset_task(ctx, nodes, i, &reason)?;
    nodes[i].status = TaskStatus::Ready;
    ready.push_back(i);
    reopen_below(ctx, nodes, ready, i, &reason)?;
    Ok(true)
}

/// Task `i` is usable again, or about to run again: the tasks it blocked go back to
/// pending — unless another strict dependency of theirs still failed, in which case
/// they stay blocked — and every pending task whose dependencies are met is queued on
/// `ready`. Returns the tasks reset.
pub(super) fn reopen_below(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    i: usize,
    reason: &str,
) -> Result<Vec<usize>, EngineError> {
    let mut reopened = Vec::new();
    let mut stack = nodes[i].downstream();
    while let Some(d) = stack.pop() {
        if nodes[d].status != TaskStatus::Blocked {
            continue;
        }
        let lenient = fallback_allows(&ctx.plan, d);
        let still_failed = !lenient
            && ctx.plan.tasks[d]
                .depends_on
                .iter()
                .filter_map(|dep| ctx.plan.task_index(dep))
                .any(|j| {
                    j != i && nodes[j].status.is_final() && !nodes[j].status.satisfies_dependents()
                });
        if still_failed {
            continue;
        }
        reset_task(ctx, nodes, d, reason)?;
        reopened.push(d);
        stack.extend(nodes[d].downstream());
    }
    for d in 0..nodes.len() {
        if nodes[d].status == TaskStatus::Pending {
            let deps = &ctx.plan.tasks[d].depends_on;
            let lenient = fallback_allows(&ctx.plan, d);
            nodes[d].remaining = deps
                .iter()
                .filter_map(|dep| ctx.plan.task_index(dep))
                .filter(|&j| {
                    if lenient {
                        !nodes[j].status.is_final()
                    } else {
                        !nodes[j].status.satisfies_dependents()
                    }
                })
                .count() as u32;
            if nodes[d].remaining == 0 {
                nodes[d].status = TaskStatus::Ready;
                ready.push_back(d);
            }
        }
    }
    Ok(reopened)
}
